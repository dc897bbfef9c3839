"""Files that are two halves of one unit: a C/C++ header and its implementation (``foo.h`` and
``foo.cpp``, ``foo.h`` and ``foo-inl.h``). A query that finds one half wants the other close by:
the declaration says what, the definition says how. Which extensions and stem endings pair up is
data per language (``chunks/ecosystems.py``)."""

from __future__ import annotations

import re
from functools import lru_cache

from codepith.chunks.ecosystems import unit_tables
from codepith.index.corpus import Corpus

_FAMILY, _SUFFIXES = unit_tables()
_MAX_GROUP = 4  # a stem shared by more files than this (``utils.h`` in every folder) pairs only within a folder
_PAIRED_EXT = re.compile(r"\.(?:" + "|".join(map(re.escape, _FAMILY)) + r")\n")
_FOUND_KEYS = 8  # units looked up by stem search before the whole map pays (a long-lived process asks often)
_HALF_TAIL = re.compile(r"(?:" + "|".join(re.escape(x.lower()) for x in _SUFFIXES) + r")?\.[^./\n]+\n")


def _split(path: str) -> tuple[str, str] | None:
    name = path.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    family = _FAMILY.get(ext.lower()) if dot else None
    if family is None or not stem:
        return None
    if stem.endswith(_SUFFIXES):  # one C-level test first: most stems carry no half marker
        for suffix in _SUFFIXES:
            if stem.endswith(suffix) and len(stem) > len(suffix):
                stem = stem[: -len(suffix)]
                break
    return family, stem.lower()


@lru_cache(maxsize=1 << 18)  # a corpus is rebuilt per generation: its 60k paths need not be re-split
def unit_key(path: str) -> tuple[str, str] | None:
    """(family, stem without its half marker), or None for a file of a language without pairs."""
    return _split(path)


def _by_unit(corpus: Corpus) -> dict[tuple[str, str], list[str]]:
    return corpus.derived("units", _units, of_paths=True)


def _units(corpus: Corpus) -> dict[tuple[str, str], list[str]]:
    """Files by unit key, split without ``unit_key``'s cache (each path once here)."""
    got: dict[tuple[str, str], list[str]] = {}
    for path in corpus.files:
        key = _split(path)
        if key is not None:
            got.setdefault(key, []).append(path)
    return got


def _listing(corpus: Corpus) -> tuple[str, str] | None:
    """Every path on a line of its own, as written and lower-cased, when lower-casing keeps each character
    where it was (ASCII) and no name holds a line break; None otherwise (the unit map is built instead)."""
    text = "\n" + "\n".join(corpus.files) + "\n"
    if not text.isascii() or text.count("\n") != len(corpus.files) + 1:
        return None
    return text, text.lower()


def _same_unit(corpus: Corpus, key: tuple[str, str]) -> list[str]:
    """The files of one unit. The first few are found in the joined listing with ``str.find`` on the stem
    (about 4 ms each on the kernel's 60k paths) rather than by splitting every path into a unit map: the
    first search of a process that opened the kernel spent 0.15-0.27 s building that map for its five
    leading files. Past ``_FOUND_KEYS`` units the map is built and read (a warm search over the kernel
    paid ~10 ms a query for finding every time)."""
    memo: dict[tuple[str, str], list[str]] = corpus.derived("found_units", lambda c: {}, of_paths=True)
    got = memo.get(key)
    if got is not None:
        return got
    listing = corpus.derived("listing", _listing, of_paths=True)
    if listing is None or len(memo) >= _FOUND_KEYS:  # a search costs ~4 ms a unit on the kernel; the map, one 0.15 s
        return _by_unit(corpus).get(key, [])
    text, lowered = listing
    found: dict[str, int] = {}  # path -> where it begins in the listing, which keeps the corpus's file order
    for lead in ("/", "\n"):  # the stem begins a file name: after a folder, or at the start of a path
        needle = lead + key[1]
        at = lowered.find(needle)
        while at != -1:
            end = at + len(needle)
            if _HALF_TAIL.match(lowered, end):
                start = at if lead == "\n" else lowered.rfind("\n", 0, at)
                path = text[start + 1 : lowered.index("\n", end)]
                if _split(path) == key:
                    found[path] = start
            at = lowered.find(needle, at + 1)
    memo[key] = got = sorted(found, key=found.__getitem__)
    return got


def has_units(corpus: Corpus) -> bool:
    """Whether any file of this corpus belongs to a language that splits units over files (asked by every
    search, so judged once per corpus)."""
    return corpus.derived("has_units", _has_units, of_paths=True)


def _has_units(corpus: Corpus) -> bool:
    listing = corpus.derived("listing", _listing, of_paths=True)
    if listing is None:
        return bool(_by_unit(corpus))
    return _PAIRED_EXT.search(listing[1]) is not None


def companions(corpus: Corpus, path: str) -> list[str]:
    """The other halves of ``path``'s unit: same stem and family, in the same folder, or anywhere when
    the stem is rare enough to be one unit (``include/x/foo.h`` and ``src/foo.cpp``)."""
    key = unit_key(path)
    if key is None:
        return []
    group = [p for p in _same_unit(corpus, key) if p != path]
    if len(group) >= _MAX_GROUP:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        group = [p for p in group if (p.rsplit("/", 1)[0] if "/" in p else "") == folder]
    return group
