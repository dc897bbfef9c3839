"""Bring a repository's index up to date: only added and changed files are read, chunked and embedded.

Per-file work depends on that file alone, and everything global is derived at search time from the
sorted file records, so an incrementally refreshed index equals a full rebuild of the same tree.
Changed files stream through in batches: each batch is read, chunked, embedded and committed to the
store as one segment before the next is read, so memory follows the batch, not the repository, and a
killed build keeps every committed batch. The files come from a walk, or, when a watcher says which
paths moved, from those paths alone (``changes.plan``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat as stat_mod
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from codepith.files.explain import explain_hidden
from codepith.files.read import read_source
from codepith.files.source import IgnoreHit, SkipReport, SourceFile
from codepith.files.walk import max_file_bytes_limit, walk
from codepith.index import changes
from codepith.index.repo import FileRecord, RepoData
from codepith.model.loader import StaticModel
from codepith.store.layout import CacheError, CacheIOError, ManifestError, index_dir, tag_cache_folder
from codepith.store.manifest import FileMeta, Store, StoreBusy, Writer
from codepith.store.segment import MAX_CHUNKS, NewFile

log = logging.getLogger("codepith")

RACY_NS = 2_000_000_000
WATCH_STAMPS = "mtime,ctime"  # what each entry of a committed watch list holds after its path
BATCH_FILES = 1000  # files read, chunked, embedded and committed as one segment (memory follows this)
# A repository this large stores int8 vectors (``store.segment.quantize``): ~450k chunks and up, where
# turning float16 into float32 would cost a cold search a second; smaller ones keep float16's precision.
COMPACT_FILES = 20_000
SEGMENT_CHUNKS = min(
    60000, MAX_CHUNKS
)  # a batch with more chunks is committed as several segments (at most MAX_CHUNKS each)
Progress = Callable[[int, int], None]  # (files done, files to do)


@dataclass
class RefreshStats:
    """What one look did. added/changed/removed/unchanged count indexed files only (a file indexed before
    or after, as ``files`` does), so they add up with ``files``; files skipped when read are reported under
    ``skipped``, as the walk's skips are, and their records' moves are counted in ``skip_records``."""

    root: str
    files: int = 0
    chunks: int = 0
    added: int = 0
    changed: int = 0  # also a file indexed before and skipped now, or the reverse
    removed: int = 0
    unchanged: int = 0
    touched: int = 0  # of the unchanged, those whose mtime moved (same content): only the record changes
    skip_records: int = 0  # records of files skipped when read, written or dropped: in no column, but written
    seconds: float = 0.0
    rebuilt: str | None = None  # why the cache was not usable, when it was not
    busy: bool = False  # another process is building this index; this look used its last commit
    failed: str | None = None  # why this look could not be written (a full disk): it kept the last commit
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
        """Whether this look wrote anything, so that the generation is finished (skip records included)."""
        return bool(self.added or self.changed or self.removed or self.touched or self.skip_records)


def batch_files() -> int:
    """Files per committed batch: ``CODEPITH_BATCH_FILES`` if set (tests use small batches), else BATCH_FILES."""
    env = os.environ.get("CODEPITH_BATCH_FILES", "").strip()
    return max(1, int(env)) if env.isdigit() else BATCH_FILES


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _stamp(paths: tuple[str, ...], racy_after: int) -> list[tuple[str, int, int]]:
    """(path, mtime, ctime) of the walk's watch list; empty (so the next refresh walks) if any mtime is too
    recent to trust. The ctime moves when only the permissions (or owner, or links) change: ``chmod +r`` of
    a file or folder the walk could not read moves no mtime. It is compared for equality only: a racy
    ctime (a chmod in the same clock tick as this stat) is the one change a look can miss."""
    out = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            return []
        if info.st_mtime_ns >= racy_after:
            return []
        out.append((path, info.st_mtime_ns, info.st_ctime_ns))
    return out


def quick_check(data: RepoData) -> set[str] | None:
    """What moved since the last walk, judged without walking: None when a walk must decide, else the
    paths whose stat changed or that are gone (empty when nothing moved). Each is then looked at alone
    (``changes.plan``), as a watcher's paths are: a file edited in place is re-read, a folder that gained,
    lost or renamed an entry is walked (its own subtree only), instead of the whole tree (1.3 s for the
    kernel); the root folder is listed, not walked. git's exclude rules still send the check to a walk.

    Folder mtimes alone would be cheaper (a twelfth on the kernel) but miss a file edited in place,
    and git's index needs the same stat per tracked file (``git status`` measured at 0.7-1.2x of this),
    so an unwatched process pays this; a watched one (``Index(watch=True)``) pays for what moved only."""
    if not data.watch:
        return None
    stat = os.stat
    moved: set[str] = set()
    top = _top(data)
    for path, mtime, ctime in data.watch:  # folders, ignore files, markers: adds, deletes and renames show here
        try:
            info = stat(path)
            same = info.st_mtime_ns == mtime and info.st_ctime_ns == ctime  # ctime: a chmod, e.g. +r
        except OSError:
            same = False
        if not same:
            rel = path[len(top) :].replace(os.sep, "/") if path.startswith(top) else ""
            if rel.startswith(".git/"):  # git's exclude rules: a walk decides
                return None
            moved.add(rel)  # "" is the root folder: an entry came or went at the top (changes.plan lists it)
    if data.stat_list is None:
        data.stat_list = {rel: (top + rel, rec.size, rec.mtime_ns, rec.racy) for rel, rec in data.files.items()}
    for rel, (path, size, mtime, racy) in data.stat_list.items():
        try:
            info = stat(path)
        except OSError:
            moved.add(rel)  # gone (or unreadable): its region says which
            continue
        if racy or info.st_mtime_ns != mtime or info.st_size != size:
            moved.add(rel)
    return None if len(moved) > changes.MAX_REGIONS else moved


def _hard_linked(data: RepoData, changed: Collection[str]) -> bool:
    """Whether a file among a watcher's paths has other names (a link count past 1). Only a few paths are
    looked at: more than a plan takes alone walk the tree anyway."""
    if len(changed) > changes.MAX_REGIONS:
        return False
    top = _top(data)
    for rel in changed:
        if rel.strip("/"):
            try:
                info = os.stat(top + rel, follow_symlinks=False)
            except OSError:
                continue
            if info.st_nlink > 1 and stat_mod.S_ISREG(info.st_mode):
                return True
    return False


CHECK_APART_FROM = 20_000  # files from which a first look's stat check runs in a forked child
Check = Callable[[], set[str] | None]  # a started quick check: its result, when called (once)


def start_quick_check(data: RepoData, st: Store | None = None) -> Check | None:
    """``quick_check`` of a large tree started in a forked child, so that its stats (60,000 on the kernel,
    0.3-0.4 s) run on another core while this process opens the last generation's view (about as long);
    the function returned gives the result (the same as ``quick_check``'s). None where there is nothing to
    overlap: a small tree, no quick check to make, or a process that cannot fork safely.

    ``st``: ``data`` holds the freshness state but not yet the file records; the child reads the rows it
    needs through a connection of its own (never the parent's), with the generation they belong to, and its
    answer stands only if that is the generation this process then read.

    A thread would not do: a stat's return waits for the GIL, which the opening holds for up to 5 ms
    at a time. The child writes its answer to a pipe and exits without cleaning anything of ours up; if it
    fails, the check runs here."""
    if not data.watch or (len(data.files) if st is None else st.file_count()) < CHECK_APART_FROM:
        return None
    from codepith.index.forking import can_fork

    if not can_fork():
        return None
    import pickle

    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: check, answer, leave at once (no atexit, no finalizers of the parent's)
        code = 1
        try:
            os.close(read_end)
            generation = data.generation
            if st is not None:
                generation, rows = st.stat_rows_apart()
                top = _top(data)
                data.stat_list = {rel: (top + rel, size, mtime, bool(racy)) for rel, size, mtime, racy in rows}
            answer = (generation, quick_check(data))
            with os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)

    def result() -> set[str] | None:
        with os.fdopen(read_end, "rb") as answer:
            payload = answer.read()
        _, status = os.waitpid(pid, 0)
        if status == 0 and payload:
            generation, moved = pickle.loads(payload)
            if generation == data.generation:
                got: set[str] | None = moved
                return got
        return quick_check(data)  # the child failed, or read another generation than this process

    return result


def reap(checking: Check | None) -> None:
    """Wait for a started check whose answer is not wanted, so that its child does not linger."""
    if checking is not None:
        checking()


def _tally(data: RepoData) -> tuple[int, int]:
    """(files, chunks): counted once, then kept up to date by ``_put``, not recounted per search."""
    if data.tally is None:
        data.tally = (sum(1 for r in data.files.values() if not r.skip), data.n_chunks)
    return data.tally


def _put(data: RepoData, rel: str, rec: FileRecord | None) -> None:
    """Set (or with None, drop) one file's record, keeping the tally right."""
    old = data.files.pop(rel, None) if rec is None else data.files.get(rel)
    if rec is not None:
        data.files[rel] = rec
    _restat(data, rel, rec)
    if data.tally is not None:
        files, chunks = data.tally
        for r, sign in ((old, -1), (rec, 1)):
            if r is not None:
                files += sign * (not r.skip)
                chunks += sign * r.n_chunks
        data.tally = (files, chunks)


def _top(data: RepoData) -> str:
    """The root with one trailing separator: a record's path is this plus its (relative, '/'-separated)
    name, which every OS takes, without os.path.join's checks (60,000 joins were 0.05 s on the kernel)."""
    return data.root.rstrip("/" + os.sep) + os.sep


def _restat(data: RepoData, rel: str, rec: FileRecord | None) -> None:
    """Keep the stat check's entry for one file right: rebuilding the whole list after an edit joined
    60,000 paths again (0.1-0.17 s on the kernel, and on every search while an edited file stays racy)."""
    if data.stat_list is None:
        return
    if rec is None:
        data.stat_list.pop(rel, None)
    else:
        data.stat_list[rel] = (_top(data) + rel, rec.size, rec.mtime_ns, rec.racy)


def kept(data: RepoData, **fields: Any) -> RefreshStats:
    """Stats of a look that changed nothing (nothing moved, another builder, a failed write): every
    indexed file unchanged; skipped files' records are not files, so they count in no column."""
    stats = RefreshStats(root=data.root, source=data, **fields)
    stats.files, stats.chunks = _tally(data)
    stats.unchanged = stats.files
    return stats


def _unchanged(data: RepoData, t0: float) -> RefreshStats:
    stats = kept(data)
    stats.seconds = time.perf_counter() - t0
    return stats


_new_record = partial(tuple.__new__, FileRecord)  # a record of a row in its order, without _make's Python call


def _record(r: Sequence[Any]) -> FileRecord:
    """A record from a file-table row in ``FileMeta``'s field order (a FileMeta, or a raw row)."""
    return FileRecord._make(r)


def _meta(rec: FileRecord) -> FileMeta:
    return FileMeta._make(rec)


def _fresh(data: RepoData) -> dict[str, Any]:
    """What a later process needs to check freshness without a walk and to apply a watcher's paths
    (JSON, committed in the manifest's meta with the generation it describes)."""
    return {
        "watch": data.watch,
        "stamps": WATCH_STAMPS,
        "max_file_bytes": data.watch_key[0] if data.watch_key else None,
        "skipped_paths": data.skipped_paths,
        "linked": list(data.linked),
        "pruned": sorted(data.pruned),
        "hidden": [[h.source, h.line, h.rule, h.count, list(h.examples)] for h in data.walk_hidden],
    }


def _skipped_json(data: RepoData) -> list[Any]:
    return [dict(data.walk_skipped.counts), {k: list(v) for k, v in data.walk_skipped.examples.items()}]


def reload(data: RepoData, st: Store) -> None:
    """Take the file table of the store's latest commit (another process may have written it), and the
    freshness state committed with it."""
    _read_meta(data, st)
    _take_files(data, st)


def _read_meta(data: RepoData, st: Store) -> None:
    """``_take_meta`` of the store's meta table; values that cannot be read (bytes flipped in a value
    SQLite does not check) are a damaged manifest."""
    try:
        _take_meta(data, st.meta())
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        why = f"manifest unreadable (its freshness state: {type(exc).__name__}: {exc})"
        raise ManifestError(why, st.folder) from None


def _take_files(data: RepoData, st: Store) -> None:
    data.files = {r[0]: r for r in st.file_rows(_new_record)}
    data.stat_list = data.tally = None


def _take_meta(data: RepoData, meta: dict[str, str]) -> None:
    skipped = SkipReport()
    raw = json.loads(meta.get("walk_skipped", "null") or "null")
    if raw:
        skipped.counts, skipped.examples = raw[0], raw[1]
    data.walk_skipped = skipped
    data.refreshed_at = float(meta.get("refreshed_at", "0") or 0)
    data.generation = int(meta.get("generation", "0"))
    # What the last complete look depended on, so a new process can take the quick path too.
    fresh = json.loads(meta.get("fresh", "null") or "null") if meta.get("complete") == "1" else None
    if fresh:
        # a watch list of other stamps (mtimes alone, before ctimes were kept) proves nothing: one walk
        kept = fresh.get("stamps") == WATCH_STAMPS
        data.watch = [(str(p), int(m), int(c)) for p, m, c in fresh["watch"]] if kept else []
        limit = fresh["max_file_bytes"]
        data.watch_key = (int(limit), data.content) if limit is not None else None
        paths = fresh["skipped_paths"]
        data.skipped_paths = {str(k): str(v) for k, v in paths.items()} if paths is not None else None
        data.linked = tuple(fresh["linked"])
        data.pruned = set(fresh["pruned"])
        data.walk_hidden = tuple(IgnoreHit(s, n, r, c, tuple(e)) for s, n, r, c, e in fresh["hidden"])
    else:
        data.watch, data.watch_key, data.skipped_paths = [], None, None
        data.linked, data.pruned, data.walk_hidden = (), set(), ()


def open_store(folder: Path, root: str, content: str, model: StaticModel) -> tuple[Store, str | None]:
    """The store in ``folder``; an unusable one is emptied (under the builder lock) and started afresh."""
    info = model.info
    kw = {"root": root, "content": content, "model_name": info.name, "model_digest": info.digest, "dims": info.dims}
    try:
        return Store(folder, **kw), None  # type: ignore[arg-type]
    except CacheError as exc:
        reason = str(exc)
    log.warning("cached index for %s is unusable (%s); rebuilding", root, reason)
    from filelock import FileLock

    with FileLock(str(folder / "build.lock")):
        try:
            return Store(folder, **kw), reason  # type: ignore[arg-type]
        except CacheError:
            Store.reset(folder)
            return Store(folder, **kw), reason  # type: ignore[arg-type]


def load_or_new(
    root: str, content: str, model: StaticModel, cache: Path | None = None
) -> tuple[Store, RepoData, str | None]:
    """The repository's store in the cache folder and its file records (empty when new or unusable)."""
    st, data, reason, _ = _load(root, content, model, cache, apart=False)
    return st, data, reason


def load_checking(
    root: str, content: str, model: StaticModel, cache: Path | None = None
) -> tuple[Store, RepoData, str | None, Check | None]:
    """``load_or_new``, and a large tree's quick check (``start_quick_check``) started before the file table
    is read here: the child reads the rows it needs itself, so that its stats overlap the reading of the
    table as well as the opening of the view. None in its place where no check was started."""
    return _load(root, content, model, cache, apart=True)


def _load(
    root: str, content: str, model: StaticModel, cache: Path | None, *, apart: bool
) -> tuple[Store, RepoData, str | None, Check | None]:
    info = model.info
    folder = index_dir(root, content, info.digest, cache)
    st, reason = open_store(folder, root, content, model)
    tag_cache_folder(folder.parent)  # a cache inside the tree is not part of it (see tag_cache_folder)
    try:
        data, check = _read(st, model, apart=apart)
    except ManifestError as exc:  # it opened, and then its tables could not be read
        log.warning("cached index for %s is unusable (%s); rebuilding", root, exc)
        st, reason = st.emptied(), str(exc)
        data, check = _read(st, model, apart=apart)
    return st, data, reason, check


def _read(st: Store, model: StaticModel, *, apart: bool) -> tuple[RepoData, Check | None]:
    info = model.info
    root, content = st.ident["root"], st.ident["content"]
    data = RepoData(root=root, content=content, model_name=info.name, model_digest=info.digest, dims=info.dims)
    _read_meta(data, st)
    check = start_quick_check(data, st) if apart else None
    try:
        _take_files(data, st)
    except BaseException:
        reap(check)
        raise
    return data, check


def renew(st: Store, model: StaticModel) -> tuple[Store, RepoData]:
    """A store whose manifest was found damaged after it opened, emptied and opened afresh (to be rebuilt)."""
    st = st.emptied()
    return st, _read(st, model, apart=False)[0]


def refresh(
    data: RepoData,
    model: StaticModel,
    st: Store,
    *,
    max_file_bytes: int | None = None,
    progress: Progress | None = None,
    changed: Collection[str] | None = None,
    wait: bool | None = None,
    full_check: bool = False,
    suspect: Collection[Path] = (),
    checking: Check | None = None,
) -> RefreshStats:
    """Update ``data`` and the store to match the tree on disk.

    ``changed``: the root-relative paths a watcher saw move since the last refresh; only those are
    looked at when they can be judged alone (see ``changes.plan``), else the tree is walked.

    Writing takes the store's builder lock. When another process holds it, ``wait=True`` waits for it
    (and then has little left to do), ``wait=False`` keeps the last committed generation (stats.busy);
    ``None`` waits only when no complete generation exists yet. ``checking``: a quick check already
    started (``start_quick_check``), whose result stands for the one this would make.
    """
    t0 = time.perf_counter()
    key = (max_file_bytes_limit(max_file_bytes), data.content)
    if st.replaced():
        # Removed under this process (``codepith clear``, the cache deleted), maybe built again by another:
        # the index now at the path is the one to bring up to date, and what it holds is checked afresh.
        log.warning("the index of %s was removed or replaced by another process; opening it again", data.root)
        reap(checking)
        checking, changed = None, None
        try:
            st.reopen()
        except CacheIOError as exc:  # no room for it (a full or read-only disk): the last view is searched
            return kept(data, failed=str(exc))
        reload(data, st)
    if full_check:
        changed = None
    elif key == data.watch_key:
        if changed is not None and not changed:
            if not os.path.isdir(data.root):  # a watcher may not report its own root going (moved, deleted)
                walk(Path(data.root), data.content, max_file_bytes)  # raises the walk's PathError
            reap(checking)
            return _unchanged(data, t0)
        if changed is not None and _hard_linked(data, changed):
            # A watcher reports a file by the name it was written through; its other names (hard links)
            # show the edit too, unreported: every stat is checked, which finds them as it would unwatched.
            more = quick_check(data)
            changed = None if more is None else {*changed, *more}
        if changed is None:
            changed, checking = (checking() if checking is not None else quick_check(data)), None
            if changed is not None and not changed:
                return _unchanged(data, t0)
    reap(checking)
    if wait is None:
        wait = not st.complete()
    try:
        with st.building(
            wait=wait,
            on_wait=lambda: log.warning("%s is being indexed by another process or thread; waiting for it", data.root),
            full_check=full_check,
            suspect=suspect,
        ) as w:
            if w.damaged or st.generation() != data.generation:
                reload(data, st)
            stats = _refresh_locked(data, model, w, key, max_file_bytes, progress, changed)
            if w.damaged:
                stats.rebuilt = "; ".join(w.damaged)
    except StoreBusy:
        if st.generation() != data.generation:
            reload(data, st)
        stats = kept(data, busy=True)
    except CacheIOError as exc:  # what committed before the failed write stands; the records follow it
        reload(data, st)
        stats = kept(data, failed=str(exc))
    stats.seconds = time.perf_counter() - t0
    return stats


def _refresh_locked(
    data: RepoData,
    model: StaticModel,
    w: Writer,
    key: tuple[int, str],
    max_file_bytes: int | None,
    progress: Progress | None,
    changed: Collection[str] | None,
) -> RefreshStats:
    # Racy-git rule: a file modified within RACY_NS of this look may change again without its size or
    # mtime moving, so its stat is not trusted next time and its content hash decides.
    racy_after = time.time_ns() - RACY_NS
    delta: changes.Delta | None = None
    if changed is not None and key == data.watch_key:
        delta = changes.plan(data, changed, max_file_bytes)
    if delta is None:
        walked = walk(Path(data.root), data.content, max_file_bytes)
        files, held = walked.files, list(data.files)
    else:
        files, held = delta.files, delta.old_files
    stats = RefreshStats(root=data.root, walked=delta is None, source=data)
    seen: set[str] = set()
    candidates: list[SourceFile] = []
    for sf in files:
        seen.add(sf.rel_path)
        old = data.files.get(sf.rel_path)
        if old is not None and old.size == sf.size and old.mtime_ns == sf.mtime_ns and not old.racy:
            stats.unchanged += old.skip is None
        else:
            candidates.append(sf)
    candidates.sort(key=lambda sf: sf.rel_path)
    w.compact_vectors = max(len(seen), len(data.files)) >= COMPACT_FILES
    removed = [r for r in held if r not in seen and r in data.files]
    stats.removed = sum(1 for r in removed if data.files[r].skip is None)
    stats.skip_records += len(removed) - stats.removed
    done = 0
    first = True
    step = batch_files()
    for begin in range(0, len(candidates), step):
        batch = candidates[begin : begin + step]
        metas, touched, new = _batch(data, model, batch, racy_after, stats, progress, done, len(candidates), w, key[0])
        done += len(batch)
        # A batch with more chunks than a segment holds commits as several segments, rows with theirs.
        groups: list[list[NewFile]] = [[]]
        size = 0
        for nf in new:
            if size + nf.n > SEGMENT_CHUNKS and groups[-1]:
                groups.append([])
                size = 0
            groups[-1].append(nf)
            size += nf.n
        for g_i, group in enumerate(groups):
            rels = {nf.rel for nf in group}
            last = g_i == len(groups) - 1
            rows = [m for m in metas if m.rel in rels or (last and m.n == 0)]
            if not (group or rows or touched or (first and removed)):
                continue
            w.commit(group, rows, touched=touched if last else (), deleted=removed if first else ())
            first = False
        for m in metas:
            _put(data, m.rel, _record(m))
        for m in touched:  # their new records (_batch): the stat check's entries follow
            _restat(data, m.rel, data.files.get(m.rel))
    if first and removed:
        w.commit([], [], deleted=removed)
    for rel in removed:
        _put(data, rel, None)
    if delta is None:
        data.walk_skipped = walked.skipped
        data.walk_hidden = walked.hidden
        data.skipped_paths = walked.skipped_paths
        data.linked = walked.linked
        data.pruned = walked.pruned
        data.watch = _stamp(walked.watch, racy_after)
        data.watch_key = key
    else:
        changes.settle(data, delta, racy_after)
    data.refreshed_at = time.time()
    if stats.dirty or not w.store.complete():
        w.finish(walk_skipped=_skipped_json(data), refreshed_at=data.refreshed_at, fresh=_fresh(data))
    else:  # the same files: record the new freshness state without a new generation for readers to open
        w.note(walk_skipped=_skipped_json(data), refreshed_at=data.refreshed_at, fresh=_fresh(data))
    data.generation = w.store.generation()
    stats.files, stats.chunks = _tally(data)
    if delta is not None:  # indexed files outside the regions were not looked at: unchanged, as a walk counts them
        stats.unchanged += stats.files - sum(1 for rel in seen if (rec := data.files.get(rel)) and not rec.skip)
    return stats


def _batch(
    data: RepoData,
    model: StaticModel,
    batch: list[SourceFile],
    racy_after: int,
    stats: RefreshStats,
    progress: Progress | None,
    done: int,
    total: int,
    w: Writer,
    limit: int,
) -> tuple[list[FileMeta], list[FileMeta], list[NewFile]]:
    """Read, chunk and embed one batch: (rows to write, stat-only updates, new segment content).
    ``limit``: the size limit the files were listed under (one grown past it since is not read whole)."""
    metas: list[FileMeta] = []
    touched: list[FileMeta] = []
    todo: list[tuple[SourceFile, str, str]] = []  # (file, text, digest)
    within = os.path.realpath(data.root)
    for sf in batch:
        old = data.files.get(sf.rel_path)
        text, reason, moved = read_source(sf.path, within, limit)
        # A path that no longer led to the file listed (renamed away and back, swapped for a folder, a
        # FIFO or a link out) is recorded unreadable for now, but its stat is not trusted: the file may be
        # back with the same size and mtime, and was kept "unreadable" for good when that stat stood.
        racy = sf.mtime_ns >= racy_after or moved
        if text is None:
            meta = FileMeta(sf.rel_path, sf.size, sf.mtime_ns, "", reason or "unreadable", 0, sf.language, racy, 0)
            if old is not None and tuple(old) == meta:
                continue  # skipped as it was (a racy file read again): nothing to write
            if old is not None and old.skip is None:
                stats.changed += 1  # indexed before: its chunks go
            else:
                stats.skip_records += 1  # skipped now, and not as before: a record to write, not a file
            metas.append(meta)
            continue
        digest = _digest(text)
        if old is not None and old.digest == digest and old.skip is None:
            if (old.size, old.mtime_ns, old.racy) != (sf.size, sf.mtime_ns, racy):
                old = old._replace(size=sf.size, mtime_ns=sf.mtime_ns, racy=racy)  # touched, not changed
                data.files[sf.rel_path] = old
                touched.append(_meta(old))
                stats.touched += 1
                stats.unchanged += 1  # its content is: the columns still add up to ``files``
            else:
                stats.unchanged += 1
            continue
        if old is None:
            stats.added += 1
        else:
            stats.changed += 1
        todo.append((sf, text, digest))

    # Chunk, embed and encode each file (in worker processes when there is enough text).
    new: list[NewFile] = []
    if not todo:
        if progress is not None and batch:
            progress(done + len(batch), total)
        return metas, touched, new
    # Imported here: a search on a current index never chunks, and these modules (the chunker, its
    # grammars, the worker pool) were a fifth of a cold CLI search's imports.
    from codepith.index.prepare import prepare_file
    from codepith.index.workers import prepare_all

    model.ensure_loaded(table=True)  # read now: a model that cannot be read fails the build here, not in workers
    finish = partial(prepare_file, model)
    prepared = prepare_all([(sf.rel_path, text, sf.language) for sf, text, _ in todo], finish, w.parse_journal)
    for i, ((sf, text, digest), got) in enumerate(zip(todo, prepared, strict=True)):
        metas.append(
            FileMeta(
                sf.rel_path,
                sf.size,
                sf.mtime_ns,
                digest,
                None,
                len(text),
                sf.language,
                sf.mtime_ns >= racy_after,
                got.file.n,
                got.fallback,
            )
        )
        if got.file.n:
            new.append(got.file)
        if progress is not None:
            progress(done + i + 1, total)
    new.sort(key=lambda nf: nf.rel)  # a segment holds its files in path order, as the corpus numbers them
    return metas, touched, new
