"""What kind of query this is: words, or a symbol an agent copied from code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codepith.index.tokens import identifiers, query_terms, split_identifier

_SYMBOLISH = re.compile(r"[a-z][A-Z]|_|::|->|\.\w|\w\(|^[A-Z][a-z]+[A-Z]")


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]  # BM25 tokens (whole identifiers and their parts), stop words dropped
    identifiers: tuple[str, ...]  # identifiers as typed, for exact-definition matches
    symbol_like: bool  # the query names code (getUserById, Foo::bar, _private) rather than describing it


def is_symbol_like(text: str) -> bool:
    words = text.split()
    if not words or len(words) > 3:
        return False
    if any(_SYMBOLISH.search(w) for w in words):
        return True
    # A single capitalised or all-caps word that is not an English word start: ``Depends``, ``HTTPError``.
    return len(words) == 1 and (words[0][:1].isupper() or words[0].isupper())


def parse_query(text: str) -> Query:
    idents = tuple(i for i in identifiers(text) if len(i) > 1 and not i.isdigit())
    return Query(
        text=text,
        terms=tuple(query_terms(text)),
        identifiers=idents,
        symbol_like=is_symbol_like(text.strip()),
    )


def name_parts(name: str) -> tuple[str, ...]:
    return tuple(split_identifier(name))
