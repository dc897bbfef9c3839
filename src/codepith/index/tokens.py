"""Code-aware tokens: identifiers are kept whole and also split into their parts.

``parseHTTPResponse_v2`` yields ``parsehttpresponse_v2``, ``parse``, ``http``, ``response``, ``v2``
so a query in words (``parse response``) and a query by symbol both meet the same chunk.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# camelCase / PascalCase / ACRONYMWord / digits boundaries inside one identifier part
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """a an and are as at be by do does for from how i if in into is it its of on or the this that to
    was what when where which who why with can will should would there their then than these those""".split()
)


def split_identifier(ident: str) -> list[str]:
    """Lower-cased parts of one identifier (snake_case, camelCase, digits)."""
    parts: list[str] = []
    for piece in ident.split("_"):
        if piece:
            parts.extend(m.group(0).lower() for m in _PART.finditer(piece))
    return parts


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


_EXPANSIONS: dict[str, tuple[str, ...]] = {}


def _expand(ident: str) -> tuple[str, ...]:
    """The tokens one identifier contributes; memoised because identifiers repeat heavily in code."""
    got = _EXPANSIONS.get(ident)
    if got is None:
        whole = ident.lower()
        parts = split_identifier(ident)
        toks = [whole] if (len(whole) > 1 or whole.isdigit()) else []
        if len(parts) > 1 or (parts and parts[0] != whole):
            toks.extend(p for p in parts if len(p) > 1)
        got = tuple(toks)
        if len(_EXPANSIONS) < 500_000:
            _EXPANSIONS[ident] = got
    return got


def tokenize(text: str) -> list[str]:
    """Tokens for BM25: each identifier whole (lower-cased) plus its parts when it has several."""
    out: list[str] = []
    extend = out.extend
    for ident in _IDENT.findall(text):
        extend(_expand(ident))
    return out


def query_terms(query: str) -> list[str]:
    """Distinct query tokens in order, stop words dropped unless nothing else is left."""
    toks = tokenize(query)
    kept = [t for t in toks if t not in STOPWORDS]
    seen: dict[str, None] = {}
    for t in kept or toks:
        seen.setdefault(t, None)
    return list(seen)


def token_counts(text: str) -> dict[str, int]:
    """``Counter(tokenize(text))``, computed per distinct identifier rather than per occurrence
    (code repeats its identifiers, so this is several times faster on real files)."""
    idents: dict[str, int] = {}
    for ident in _IDENT.findall(text):
        idents[ident] = idents.get(ident, 0) + 1
    out: dict[str, int] = {}
    for ident, n in idents.items():
        for tok in _expand(ident):
            out[tok] = out.get(tok, 0) + n
    return out
