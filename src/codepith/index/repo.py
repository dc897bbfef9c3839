"""What a refresh keeps per repository in memory: each file's stat and content hash, so it can tell which
files changed. The chunks, postings and vectors themselves live in the store's segments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from codepith.files.source import IgnoreHit, SkipReport


class FileRecord(NamedTuple):
    """One file as the last refresh saw it, in the file table's column order (``FileMeta``'s), so that a
    row becomes a record without rearranging: a cold search of the kernel makes 60,000 of them, and a
    dataclass's ``__init__`` per row cost 0.15 s of it. Immutable: a change is a new record (``_replace``)."""

    rel_path: str
    size: int
    mtime_ns: int
    digest: str  # content hash; confirms a change that size/mtime suggest
    skip: str | None = None  # why the file holds no chunks although the walk selected it (e.g. "binary")
    chars: int = 0  # characters of the file's text (what an agent would read without codepith)
    language: str = "text"
    racy: bool = False  # modified so recently that an unchanged stat does not prove unchanged content
    n_chunks: int = 0
    fallback: str | None = None  # why it holds line windows instead of syntax chunks (a chunker error)


@dataclass
class RepoData:
    root: str  # absolute path of the indexed folder
    content: str
    model_name: str
    model_digest: str
    dims: int
    files: dict[str, FileRecord] = field(default_factory=dict)
    walk_skipped: SkipReport = field(default_factory=SkipReport)
    walk_hidden: tuple[IgnoreHit, ...] = ()  # the ignore rules that hid something (explains an empty index)
    refreshed_at: float = 0.0
    generation: int = -1  # the store generation these records match (-1: none read yet)
    # What the last walk depended on (path, mtime_ns, ctime_ns), and the (size limit, content) it walked with;
    # committed in the manifest's meta with each generation, so a new process can skip the walk.
    watch: list[tuple[str, int, int]] = field(default_factory=list)
    watch_key: tuple[int | None, str] | None = None
    # Each entry of walk_skipped by path, and the ends of the symlinks the walk met: what lets a
    # watcher's change set be applied path by path (None: unknown, so the next change walks).
    skipped_paths: dict[str, str] | None = None
    linked: tuple[str, ...] = ()
    pruned: set[str] = field(default_factory=set)  # folders the walk did not enter
    # rel -> (absolute path, size, mtime_ns, racy): what the stat check compares, kept per file by build
    stat_list: dict[str, tuple[str, int, int, bool]] | None = field(default=None, compare=False, repr=False)
    tally: tuple[int, int] | None = field(default=None, compare=False, repr=False)  # (files, chunks), kept by build

    def skipped(self) -> SkipReport:
        """Everything left out: by the walk, and files whose content turned out unusable."""
        report = SkipReport()
        report.merge(self.walk_skipped)
        for rec in self.files.values():
            if rec.skip:
                report.add(rec.skip, rec.rel_path)
        return report

    def fallbacks(self) -> SkipReport:
        """Files indexed as line windows because chunking them failed, by reason."""
        report = SkipReport()
        for rel in sorted(self.files):
            reason = self.files[rel].fallback
            if reason:
                report.add(reason, rel)
        return report

    @property
    def n_chunks(self) -> int:
        return sum(r.n_chunks for r in self.files.values())
