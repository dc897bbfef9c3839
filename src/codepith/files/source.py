"""Values that describe the files a walk selected and the ones it skipped."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PathError
from .names import show_name


@dataclass(frozen=True)
class SourceFile:
    """One file chosen for indexing, as seen by a stat (content not read yet)."""

    path: Path  # absolute path on disk (inside the root, symlinks not resolved)
    rel_path: str  # relative to the root, '/'-separated, exactly as on disk (surrogateescape for odd bytes)
    language: str  # e.g. "python", "markdown", "text"
    kind: str  # "code" | "docs" | "config"
    size: int
    mtime_ns: int


@dataclass
class SkipReport:
    """Counts and a few examples per reason a file was left out, so nothing is skipped silently."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    max_examples: int = 3

    def add(self, reason: str, rel_path: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < self.max_examples:
            shown.append(rel_path)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def remove(self, reason: str, rel_path: str) -> None:
        """Take back one ``add`` (the path is gone or no longer skipped for that reason)."""
        left = self.counts.get(reason, 0) - 1
        if left > 0:
            self.counts[reason] = left
        else:
            self.counts.pop(reason, None)
            self.examples.pop(reason, None)
            return
        shown = self.examples.get(reason, [])
        if rel_path in shown:
            shown.remove(rel_path)

    def merge(self, other: SkipReport) -> None:
        for reason, n in other.counts.items():
            self.counts[reason] = self.counts.get(reason, 0) + n
            shown = self.examples.setdefault(reason, [])
            for ex in other.examples.get(reason, []):
                if len(shown) < self.max_examples:
                    shown.append(ex)

    def to_dict(self) -> dict[str, object]:
        return {r: {"count": n, "examples": list(self.examples.get(r, []))} for r, n in sorted(self.counts.items())}


@dataclass(frozen=True)
class IgnoreHit:
    """An ignore rule and what it hid from a walk, so an empty index can name its cause."""

    source: str  # the ignore file, relative to the root (".gitignore", "a/.codepithignore")
    line: int  # 1-based line of the rule in that file
    rule: str  # the line as written
    count: int  # files and folders hidden (a folder counts once); consecutive rules of one file pool theirs
    examples: tuple[str, ...] = ()

    @property
    def base(self) -> str:
        """The folder holding the ignore file, relative to the root: "" or "a/b/"."""
        return self.source.rpartition("/")[0] + "/" if "/" in self.source else ""


@dataclass(frozen=True)
class WalkResult:
    files: list[SourceFile]
    skipped: SkipReport
    watch: tuple[str, ...] = ()  # paths whose stat changes whenever this result could (see build.quick_check)
    hidden: tuple[IgnoreHit, ...] = ()  # the ignore rules that hid something, most first
    skipped_paths: dict[str, str] = field(default_factory=dict)  # rel -> reason of each entry in ``skipped``
    linked: tuple[str, ...] = ()  # root-relative ends of the symlinks met (the links and their targets)
    pruned: set[str] = field(default_factory=set)  # folders not entered: nothing inside them can matter


def identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` names now, None when nothing: whether a path still leads to the
    folder or file opened before (a root moved away and made again, an index removed and rebuilt)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def check_in_place(root: str) -> None:
    """Refuse a root (opened as its real path) that no longer resolves to itself: a symlink put in the
    place of the folder, or of a folder above it, would lead every read and walk outside the folder the
    operator gave. A root that is gone passes (its walk says so)."""
    real = os.path.realpath(root)
    if real != os.path.normpath(root):
        raise PathError(
            f"{show_name(root, limit=200)} is now a link to {show_name(real, limit=200)}; not reading outside the"
            " folder opened (open the index again to search where it leads)"
        )
