"""Outlines as values: a file's definitions, or a folder's most referenced definitions (its map)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from codepith.structure.definitions import Definition
from codepith.structure.repomap import RankedName


@dataclass(frozen=True)
class FileOutline:
    path: str  # as results show it
    language: str
    definitions: tuple[Definition, ...]
    unparsed: str = ""  # why the file was not parsed ("" when it was): none found is then not known


@dataclass(frozen=True)
class MapEntry:
    path: str
    definition: Definition
    score: float


@dataclass(frozen=True)
class RepoMap:
    scope: str  # the folder asked for, as given ("." for the whole repository)
    entries: tuple[MapEntry, ...]  # best first
    files: int  # files with definitions in the scope
    names: int  # distinct (file, name) definitions in the scope


def map_entries(
    ranked: Sequence[RankedName], definitions_of: Callable[[str], Sequence[Definition]], limit: int
) -> Iterator[MapEntry]:
    """The ranked names as parsed definitions (signature and lines), at most ``limit``, best first.

    A member comes after the definitions that contain it (a method after its class, with the
    method's score), so the map reads as structure. A name defined twice in a file (overloads, a
    getter and setter) appears once, at its first and shallowest definition; a name the parse does not
    find (a chunker-only symbol) is skipped.
    """
    cache: dict[str, tuple[Sequence[Definition], dict[str, int]]] = {}
    seen: set[tuple[str, int]] = set()
    count = 0
    for item in ranked:
        if count >= limit:
            return
        if item.path not in cache:
            defs = definitions_of(item.path)
            by_name: dict[str, int] = {}
            for i in sorted(range(len(defs)), key=lambda i: (defs[i].depth, defs[i].line)):
                by_name.setdefault(defs[i].name, i)
            cache[item.path] = (defs, by_name)
        defs, by_name = cache[item.path]
        at = by_name.get(item.name)
        if at is None:
            continue
        chain = [at]
        while defs[chain[-1]].parent >= 0:
            chain.append(defs[chain[-1]].parent)
        for i in reversed(chain):
            if (item.path, i) not in seen and count < limit:
                seen.add((item.path, i))
                count += 1
                yield MapEntry(item.path, defs[i], item.score)
