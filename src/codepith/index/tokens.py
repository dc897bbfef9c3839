"""Code-aware tokens: identifiers are kept whole and also split into their parts.

``parseHTTPResponse_v2`` yields ``parsehttpresponse_v2``, ``parse``, ``http``, ``response``, ``v2``
so a query in words (``parse response``) and a query by symbol both meet the same chunk.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# camelCase / PascalCase / ACRONYMWord / digits boundaries inside one identifier part
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """a an and are as at be by do does for from how i if in into is it its of on or the this that to
    was what when where which who why with can will should would there their then than these those""".split()
)


def split_identifier(ident: str) -> list[str]:
    """Lower-cased parts of one identifier (snake_case, camelCase, digits). No part spans an underscore
    (the pattern's look-ahead wants two letters), so the whole identifier is matched at once."""
    return [p.lower() for p in _PART.findall(ident)]


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


_EXPANSIONS: dict[str, tuple[str, ...]] = {}
_DOUBLE = re.compile(r"([bdfgklmnprt])\1$")


# Singulars that end in s as a plural does (Porter2 keeps 'atlas', 'bias' and 'cosmos' whole too). Their
# plural takes -es, which the rules below bring back to the singular ('aliases' -> 'alias'), so the
# singular must stay whole, or 'alias' (-> 'alia') never met 'aliases' (cobra's HasAlias and Aliases).
_S_SINGULARS = frozenset({"alias", "atlas", "bias", "canvas", "cosmos"})


def stem(word: str) -> str:
    """A light English stemmer for identifier parts: 'routes', 'routing', 'routed' -> 'rout';
    'dependencies' -> 'dependency'. Errs on the side of leaving a word alone."""
    w = word
    if len(w) <= 3 or not w.isalpha() or w in _S_SINGULARS:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
        w = w[:-1] if _DOUBLE.search(w) else w
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
        w = w[:-1] if _DOUBLE.search(w) else w
    elif w.endswith("ically") and len(w) > 8:
        w = w[:-4]  # automatically -> automatic
    elif w.endswith("ily") and len(w) > 5:
        w = w[:-3] + "y"  # lazily -> lazy
    elif w.endswith("ly") and len(w) > 5 and not w.endswith(("ply", "bly")):
        w = w[:-2]  # quickly -> quick (not apply, assembly)
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


_STEMS: dict[str, str] = {}


def _stem(word: str) -> str:
    """``stem``, remembered: the same parts recur across a file's identifiers."""
    got = _STEMS.get(word)
    if got is None:
        got = stem(word)
        if len(_STEMS) < 500_000:
            _STEMS[word] = got
    return got


def _expand(ident: str) -> tuple[str, ...]:
    """The tokens one identifier contributes; memoised because identifiers repeat heavily in code."""
    got = _EXPANSIONS.get(ident)
    if got is None:
        whole = ident.lower()
        # one part, the identifier itself (``request``, ``Request``, ``HTTP``, ``404``): most of a file's
        # identifiers, which need no split (it costs a fresh process ~3 us each)
        one = ident.isdigit() or (ident.isalpha() and (ident.islower() or ident.isupper() or ident[1:].islower()))
        parts = None if one else _PART.findall(ident)
        if parts and (len(parts) > 1 or parts[0].lower() != whole):
            # a compound keeps its exact spelling (symbol queries) plus its parts' stems (word queries)
            got = (whole, *[_stem(p.lower()) for p in parts if len(p) > 1])
        else:
            got = (_stem(whole),) if (len(whole) > 1 or whole.isdigit()) else ()
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
    """Distinct query tokens in order, stop words dropped (before stemming) unless nothing else is left."""
    idents = _IDENT.findall(query)
    kept = [i for i in idents if i.lower() not in STOPWORDS] or idents
    seen: dict[str, None] = {}
    for ident in kept:
        for t in _expand(ident):
            seen.setdefault(t, None)
    return list(seen)


# Every ASCII character that cannot be part of an identifier, as a space: ``text.translate(_APART).split()``
# cuts a text into words each of which holds whole ``_IDENT`` matches only (no match spans a space, and a
# word starts where a match may), in C and about 4x faster than ``_IDENT.findall`` over the text.
_APART = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})


def _word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one ``_APART`` word: its identifiers' expansions, in order. An ASCII word is one
    identifier unless digits lead letters (``0x1F`` holds ``0`` and ``x1F``); a word with a character
    outside ASCII may hold several. Those are remembered in the same memo as identifiers, whose
    pattern never gives such a key."""
    if word.isascii() and (not word[0].isdigit() or word.isdigit()):
        return _expand(word)
    got = _EXPANSIONS.get(word)
    if got is None:
        got = tuple(chain.from_iterable(map(_expand, _IDENT.findall(word))))
        if len(_EXPANSIONS) < 500_000:
            _EXPANSIONS[word] = got
    return got


def token_counts(text: str) -> dict[str, int]:
    """``Counter(tokenize(text))``, counted in C over the memoised tokens of each word (``_APART``).

    Same counts and the same key order as ``tokenize`` (a repeated identifier brings no new token), about
    1.7x faster than a Python loop over the distinct identifiers; a text with a word the full memo cannot
    take falls back to that loop."""
    words = text.translate(_APART).split()
    memo = _EXPANSIONS
    for word in set(words).difference(memo):
        _word_tokens(word)
    try:
        return Counter(chain.from_iterable(map(memo.__getitem__, words)))
    except KeyError:  # the memo is full: some words were expanded without being kept
        out: dict[str, int] = {}
        get = out.get
        for word, n in Counter(words).items():
            for tok in _word_tokens(word):
                out[tok] = get(tok, 0) + n
        return out
