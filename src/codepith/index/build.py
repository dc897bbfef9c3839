"""Bring a repository's index up to date: only added and changed files are read, chunked and embedded.

Per-file work depends on that file alone, and everything global is derived from the sorted file records,
so an incrementally refreshed index equals a full rebuild of the same tree.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.files.explain import explain_hidden
from codepith.files.read import read_text
from codepith.files.source import SkipReport, SourceFile
from codepith.files.walk import max_file_bytes_limit, walk
from codepith.index import changes, store
from codepith.index.analyze import FileAnalysis
from codepith.index.lexical import Postings
from codepith.index.repo import FileRecord, RepoData
from codepith.index.workers import analyze_all
from codepith.model.loader import StaticModel

log = logging.getLogger("codepith")

RACY_NS = 2_000_000_000
EMBED_BATCH = 2048  # chunks handed to the embedding thread at a time
EMBED_CHARS = 1000
Progress = Callable[[int, int], None]  # (files done, files to do)


@dataclass
class RefreshStats:
    root: str
    files: int = 0
    chunks: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    touched: int = 0  # mtime moved but content is the same: only the record changes
    seconds: float = 0.0
    rebuilt: str | None = None  # why the cache was not usable, when it was not
    walked: bool = False  # the whole tree was walked (not just checked, nor only the watcher's paths)
    source: RepoData | None = field(default=None, repr=False, compare=False)

    # Reports derived from the records, computed when asked (a search does not need them, and
    # counting them costs a pass over every file).
    @property
    def skipped(self) -> SkipReport:
        """Everything left out."""
        return self.source.skipped() if self.source is not None else SkipReport()

    @property
    def fallbacks(self) -> SkipReport:
        """Files indexed as line windows after an error."""
        return self.source.fallbacks() if self.source is not None else SkipReport()

    @property
    def notes(self) -> list[str]:
        """Why (nearly) nothing was indexed, when ignore rules did it."""
        return explain_hidden(self.source.walk_hidden, self.files) if self.source is not None else []

    @property
    def dirty(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.touched)


def embed_text(chunk: Chunk) -> str:
    """What the dense model sees: the path adds words the code itself may lack (e.g. 'middleware/cors');
    the head of the chunk (signature, docstring) carries its meaning, so the tail is not embedded
    (measured: 1,000 chars lose nothing against whole chunks and halve tokenizer time; 600 lose 0.004)."""
    return f"{chunk.file_path}\n{chunk.content[:EMBED_CHARS]}"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _stamp(paths: tuple[str, ...], racy_after: int) -> list[tuple[str, int]]:
    """mtimes of the walk's watch list; empty (so the next refresh walks) if any is too recent to trust."""
    out = []
    for path in paths:
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            return []
        if mtime >= racy_after:
            return []
        out.append((path, mtime))
    return out


def quick_check(data: RepoData) -> bool:
    """True when nothing the last walk depended on has moved, so walking again would find the same
    files: every folder it listed, every ignore file it read, every file it indexed or skipped for
    size or access keeps its stat. One stat per folder and file instead of a walk with ignore rules.

    Folder mtimes alone would be cheaper (a twelfth on the kernel) but miss a file edited in place,
    and git's index needs the same stat per tracked file (``git status`` measured at 0.7-1.2x of this),
    so an unwatched process pays this; a watched one (``Index(watch=True)``) pays for what moved only."""
    if not data.watch:
        return False
    stat = os.stat
    try:
        for path, mtime in data.watch:  # folders first: adds, deletes and renames show here
            if stat(path).st_mtime_ns != mtime:
                return False
        if data.stat_list is None:
            root = data.root
            data.stat_list = [
                (os.path.join(root, rel), rec.size, rec.mtime_ns, rec.racy) for rel, rec in data.files.items()
            ]
        for path, size, mtime, racy in data.stat_list:
            info = stat(path)
            if racy or info.st_mtime_ns != mtime or info.st_size != size:
                return False
    except OSError:
        return False
    return True


def _tally(data: RepoData) -> tuple[int, int]:
    """(files, chunks): counted once, then kept up to date by ``_put``, not recounted per search."""
    if data.tally is None:
        data.tally = (sum(1 for r in data.files.values() if not r.skip), data.n_chunks)
    return data.tally


def _put(data: RepoData, rel: str, rec: FileRecord | None) -> None:
    """Set (or with None, drop) one file's record, keeping the tally right."""
    old = data.files.pop(rel, None) if rec is None else data.files.get(rel)
    data.stat_list = None
    if rec is not None:
        data.files[rel] = rec
    if data.tally is not None:
        files, chunks = data.tally
        for r, sign in ((old, -1), (rec, 1)):
            if r is not None:
                files += sign * (not r.skip)
                chunks += sign * len(r.chunks)
        data.tally = (files, chunks)


def _unchanged(data: RepoData, t0: float) -> RefreshStats:
    stats = RefreshStats(root=data.root, unchanged=len(data.files), source=data)
    stats.files, stats.chunks = _tally(data)
    stats.seconds = time.perf_counter() - t0
    return stats


def load_or_new(root: str, content: str, model: StaticModel, cache: Path | None = None) -> tuple[RepoData, str | None]:
    """The cached index, or an empty one (with the reason) when none is usable."""
    info = model.info
    reason: str | None = None
    try:
        data = store.load(root, content, info.digest, cache)
    except store.CacheError as exc:
        reason = str(exc)
        log.warning("cached index for %s is unusable (%s); rebuilding", root, reason)
        data = None
    if data is None:
        data = RepoData(root=root, content=content, model_name=info.name, model_digest=info.digest, dims=info.dims)
    return data, reason


def refresh(
    data: RepoData,
    model: StaticModel,
    *,
    max_file_bytes: int | None = None,
    progress: Progress | None = None,
    changed: Collection[str] | None = None,
) -> RefreshStats:
    """Update ``data`` in place to match the tree on disk.

    ``changed``: the root-relative paths a watcher saw move since the last refresh; only those are
    looked at when they can be judged alone (see ``changes.plan``), else the tree is walked.
    """
    t0 = time.perf_counter()
    # Racy-git rule: a file modified within RACY_NS of this look may change again without its size or
    # mtime moving, so its stat is not trusted next time and its content hash decides.
    racy_after = time.time_ns() - RACY_NS
    key = (max_file_bytes_limit(max_file_bytes), data.content)
    delta: changes.Delta | None = None
    if changed is not None and key == data.watch_key:
        if not changed:
            return _unchanged(data, t0)
        delta = changes.plan(data, changed, max_file_bytes)
    elif changed is None and key == data.watch_key and quick_check(data):
        return _unchanged(data, t0)
    if delta is None:
        walked = walk(Path(data.root), data.content, max_file_bytes)
        files, held = walked.files, list(data.files)
    else:
        files, held = delta.files, delta.old_files
    stats = RefreshStats(root=data.root, walked=delta is None)
    seen: set[str] = set()
    todo: list[tuple[SourceFile, str, str]] = []  # (file, text, digest)
    for sf in files:
        seen.add(sf.rel_path)
        old = data.files.get(sf.rel_path)
        if old is not None and old.size == sf.size and old.mtime_ns == sf.mtime_ns and not old.racy:
            stats.unchanged += 1
            continue
        text, reason = read_text(sf.path)
        if text is None:
            rec = FileRecord(
                sf.rel_path, sf.size, sf.mtime_ns, "", [], Postings.empty(), np.zeros((0, data.dims), np.float32)
            )
            rec.skip = reason or "unreadable"
            rec.language = sf.language
            rec.racy = sf.mtime_ns >= racy_after
            if old is None:
                stats.added += 1
            elif old.skip != rec.skip:
                stats.changed += 1
            _put(data, sf.rel_path, rec)
            continue
        digest = _digest(text)
        if old is not None and old.digest == digest and old.skip is None:
            if (old.size, old.mtime_ns, old.racy) != (sf.size, sf.mtime_ns, sf.mtime_ns >= racy_after):
                old.size, old.mtime_ns = sf.size, sf.mtime_ns  # touched, not changed
                data.stat_list = None
                old.racy = sf.mtime_ns >= racy_after
                stats.touched += 1
            else:
                stats.unchanged += 1
            continue
        if old is None:
            stats.added += 1
        else:
            stats.changed += 1
        todo.append((sf, text, digest))
    for rel in held:
        if rel not in seen and rel in data.files:
            _put(data, rel, None)
            stats.removed += 1

    # Chunk changed files (in worker processes when there are many) while a thread embeds the chunks
    # gathered so far.
    pending: list[tuple[SourceFile, str, str, FileAnalysis]] = []
    batches: list[Future[np.ndarray]] = []
    waiting: list[str] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        analyzed = analyze_all([(sf.rel_path, text, sf.language) for sf, text, _ in todo])
        for i, ((sf, text, digest), done) in enumerate(zip(todo, analyzed, strict=True)):
            pending.append((sf, text, digest, done))
            waiting.extend(embed_text(c) for c in done.chunks)
            if len(waiting) >= EMBED_BATCH:
                batches.append(pool.submit(model.encode, waiting))
                waiting = []
            if progress is not None:
                progress(i + 1, len(todo))
        if waiting:
            batches.append(pool.submit(model.encode, waiting))
        parts = [f.result() for f in batches]
    vectors = np.concatenate(parts) if parts else None
    row = 0
    for sf, text, digest, done in pending:
        chunks = done.chunks
        n = len(chunks)
        vec = vectors[row : row + n] if vectors is not None else np.zeros((0, data.dims), np.float32)
        row += n
        _put(data, sf.rel_path, FileRecord(
            rel_path=sf.rel_path,
            size=sf.size,
            mtime_ns=sf.mtime_ns,
            digest=digest,
            chunks=chunks,
            postings=data.vocab.encode(done.terms),
            vectors=np.ascontiguousarray(vec, dtype=np.float32),
            chars=len(text),
            language=sf.language,
            racy=sf.mtime_ns >= racy_after,
            fallback=done.fallback,
        ))  # fmt: skip
    if delta is None:
        data.walk_skipped = walked.skipped
        data.walk_hidden = walked.hidden
        data.skipped_paths = walked.skipped_paths
        data.linked = walked.linked
        data.pruned = walked.pruned
        data.folders = None
        data.watch = _stamp(walked.watch, racy_after)
        data.watch_key = key
    else:
        changes.settle(data, delta)
    data.refreshed_at = time.time()
    stats.files, stats.chunks = _tally(data)
    stats.source = data
    stats.seconds = time.perf_counter() - t0
    return stats
