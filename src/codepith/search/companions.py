"""Files that are two halves of one unit: a C/C++ header and its implementation (``foo.h`` and
``foo.cpp``, ``foo.h`` and ``foo-inl.h``). A query that finds one half wants the other close by:
the declaration says what, the definition says how. Which extensions and stem endings pair up is
data per language (``search/ecosystems.py``)."""

from __future__ import annotations

from functools import lru_cache

from codepith.index.corpus import Corpus
from codepith.search.ecosystems import unit_tables

_FAMILY, _SUFFIXES = unit_tables()
_MAX_GROUP = 4  # a stem shared by more files than this (``utils.h`` in every folder) pairs only within a folder


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
    """Files by unit key, split without ``unit_key``'s cache (each path once here): the first search in a
    fresh process over the kernel's 60k paths took 0.21 s through it."""
    got: dict[tuple[str, str], list[str]] = {}
    for path in corpus.files:
        key = _split(path)
        if key is not None:
            got.setdefault(key, []).append(path)
    return got


def has_units(corpus: Corpus) -> bool:
    """Whether any file of this corpus belongs to a language that splits units over files."""
    return bool(_by_unit(corpus))


def companions(corpus: Corpus, path: str) -> list[str]:
    """The other halves of ``path``'s unit: same stem and family, in the same folder, or anywhere when
    the stem is rare enough to be one unit (``include/x/foo.h`` and ``src/foo.cpp``)."""
    key = unit_key(path)
    if key is None:
        return []
    group = [p for p in _by_unit(corpus).get(key, []) if p != path]
    if len(group) >= _MAX_GROUP:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        group = [p for p in group if (p.rsplit("/", 1)[0] if "/" in p else "") == folder]
    return group
