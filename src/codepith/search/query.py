"""What kind of query this is: words, or a symbol an agent copied from code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codepith.index.tokens import STOPWORDS, query_terms
from codepith.search.issue import focus_text, is_long_query

PROSE_WEIGHT = 0.5  # an issue's words outside its title and code spans: context, not the subject

# A bare or qualified identifier: Foo::bar, a.b.c, $x->y, _private, getUserById, HTTPError, Depends
_SYMBOL = re.compile(
    r"^(?:[A-Za-z_$][\w$]*(?:(?:::|\\|->|\.)[A-Za-z_$][\w$]*)+\(?\)?"
    r"|_\w*|[A-Za-z]\w*[A-Z_]\w*|[A-Z]\w*)(?:\(\))?$"
)
# Identifiers inside a sentence: PascalCase with two humps, camelCase, snake_case.
_EMBEDDED = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z]\w*|[a-z][a-z0-9]*[A-Z]\w*|[a-z]\w*_\w+)\b")
_QUALIFIER = re.compile(r"::|\\|->|\.")

# Longer queries are cut here. Issue texts make good queries and run to a few thousand characters (the
# longest of the 38 dev-bench issues is 24,770, mostly pasted linter output); past ~10,000 more words add little but
# cost grows with length (a 10 MB query took 43 s), so the cut keeps every search around a second.
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]  # BM25 tokens (whole identifiers and their parts), stop words dropped
    symbol_like: bool  # the whole query names code (getUserById, Foo::bar, _private) rather than describing it
    names: tuple[str, ...]  # identifiers whose definitions are wanted (the symbol, or ones embedded in words)
    keywords: tuple[str, ...]  # lower-case words for path matching (stop words dropped)
    capitalised: tuple[str, ...] = ()  # Capitalised words after the first: maybe type names
    issue: bool = False  # an issue-sized text (long or several lines): read for evidence, not as a phrase
    qualifier: str | None = None  # ``Router`` of ``Router::gather``, ``stringx`` of ``stringx.split``
    weights: tuple[float, ...] | None = None  # per-term BM25 weights (issues: the body's words count less)


def bound_query(text: str, limit: int = MAX_QUERY_CHARS) -> tuple[str, str | None]:
    """(the query searched, a note for the user when it had to be cut), cut at a word boundary."""
    if len(text) <= limit:
        return text, None
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    if space > limit - 200:  # don't leave half a word, unless the text has no spaces to cut at
        cut = cut[:space]
    note = (
        f"query cut to its first {len(cut):,} of {len(text):,} characters "
        f"(queries are limited to {limit:,}; put the most telling words first)"
    )
    return cut, note


def is_symbol_like(text: str) -> bool:
    return bool(_SYMBOL.match(text.strip()))


def parse_query(text: str) -> Query:
    stripped = text.strip()
    symbol_like = is_symbol_like(stripped)
    names: list[str] = []
    qualifier = None
    if symbol_like:
        bare = stripped.rstrip("()")
        pieces = _QUALIFIER.split(bare)
        last = pieces[-1].lstrip("$")
        names.append(last)
        if bare != last:
            names.append(bare)
            qualifier = pieces[-2].lstrip("$") or None
    else:
        names.extend(dict.fromkeys(_EMBEDDED.findall(stripped)))
    issue = not symbol_like and is_long_query(stripped)
    # an issue's file-name clues come from its title; its body names too many things
    headline = stripped.split("\n", 1)[0] if issue else stripped
    keywords = tuple(
        dict.fromkeys(
            w.lower()
            for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", headline)
            if len(w) > 2 and w.lower() not in STOPWORDS
        )
    )
    terms = tuple(query_terms(text))
    weights = None
    if issue:
        focus = set(query_terms(focus_text(stripped)))
        weights = tuple(1.0 if t in focus else PROSE_WEIGHT for t in terms)
    return Query(
        text=text,
        terms=terms,
        weights=weights,
        qualifier=qualifier,
        symbol_like=symbol_like,
        names=tuple(names),
        keywords=keywords,
        capitalised=tuple(dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", stripped))),
        issue=issue,
    )
