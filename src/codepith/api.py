"""The public Python API: ``Index.from_path(...)``, ``index.search(...)``, ``index.find_related(...)``."""

from __future__ import annotations

import logging
import os
import posixpath
import re
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from stat import S_ISREG
from typing import Concatenate, ParamSpec, TypeVar

from codepith.chunks.chunk import Chunk
from codepith.chunks.lines import numbered_lines
from codepith.chunks.syntax import SPECS
from codepith.errors import (
    ArgumentError,
    ArgumentTypeError,
    PathError,
    flag,
    path_argument,
    shown,
    text_argument,
    whole_number,
)
from codepith.files.explain import explain_empty, explain_hidden
from codepith.files.names import show_name
from codepith.files.source import SkipReport, check_in_place
from codepith.files.types import CONTENT_TYPES
from codepith.files.walk import max_file_bytes_limit
from codepith.files.watch import Watcher, cheap, watch_tree
from codepith.index import build
from codepith.index.corpus import Corpus, CorpusPart
from codepith.index.repo import FileRecord, RepoData
from codepith.limits import MAX_LINE, MAX_TOP_K
from codepith.memory import prefer_small_pages
from codepith.model.loader import StaticModel, load_model
from codepith.search import engine
from codepith.search.query import bound_query
from codepith.search.result import SearchResult
from codepith.store.layout import CacheError, CacheIOError, ManifestError
from codepith.store.manifest import Store, disk_reason
from codepith.store.view import View
from codepith.structure.definitions import Definition
from codepith.structure.mapcache import MapTables
from codepith.structure.outline import FileOutline, RepoMap, map_entries
from codepith.structure.parsed import MAX_PARSE_BYTES, ParsedFile, parsed_definitions, parsed_file
from codepith.structure.repomap import ranked_names

log = logging.getLogger("codepith")

_WORD = re.compile(r"[A-Za-z]+")
DENSE_FLOOR = 0.25  # calibrated by benchmarks/honest_empty.py: see benchmarks/README.md
WRITE_RETRY_SECONDS = 30.0  # after a failed write (a full disk), searches use the last commit this long
COMMON_SHARE = 0.5  # a query term found in more than this share of chunks says nothing about where to look


@dataclass(frozen=True)
class Confidence:
    """Whether a search found anything it can stand behind.

    Not confident only when no informative query term occurs in the corpus (a term in most chunks,
    like ``self``, informs nothing; a name the corpus defines always informs) and no chunk is close
    in meaning to the query's real words (best cosine under DENSE_FLOOR).
    """

    matched_terms: tuple[str, ...]  # informative query terms that occur in some chunk, or names defined
    similarity: float  # the best cosine between the query's known words and any chunk
    judged: bool = True  # False when the query has no term to look up (``g``): too short to doubt

    @property
    def confident(self) -> bool:
        return not self.judged or bool(self.matched_terms) or self.similarity >= DENSE_FLOOR


@dataclass(frozen=True)
class IndexStatus:
    roots: tuple[str, ...]
    content: str
    model: str
    model_digest: str
    files: int
    chunks: int
    languages: dict[str, int]  # language -> files
    skipped: SkipReport
    refreshed_at: float
    fallbacks: SkipReport = field(default_factory=SkipReport)  # indexed as line windows after an error
    notes: tuple[str, ...] = ()  # why (nearly) nothing was indexed: the ignore file, line and rule


def _check_top_k(top_k: object) -> int:
    return whole_number("top_k", top_k, 1, MAX_TOP_K)


def _check_line(line: object) -> int:
    return whole_number("line", line, 1, MAX_LINE)


def _check_query(query: object) -> str:
    """A query to search: a str holding a word (bytes, None, a list refused in one line)."""
    text = text_argument("query", query)
    if not text.strip():
        raise ArgumentError("empty query")
    return text


def check_root(path: str | os.PathLike[str]) -> Path:
    raw = path_argument("path", path)
    name = show_name(raw, limit=200)
    if not raw.strip():
        raise ArgumentError("empty path; give the folder to search ('.' for this one)")
    try:
        p = Path(raw).expanduser()
        if not p.exists():
            raise PathError(f"no such directory: {name}")
        if not p.is_dir():
            raise PathError(f"not a directory: {name} (give the folder to search)")
        return p.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a name too long, a NUL, a symlink loop
        raise PathError(f"cannot open {name}: {getattr(exc, 'strerror', None) or exc}") from None


def _outer_roots(roots: list[Path]) -> list[Path]:
    """``roots`` less those inside another root (each file is indexed once), with a warning for each."""
    kept: list[Path] = []
    for root in roots:
        outer = next((o for o in roots if o != root and root.is_relative_to(o)), None)
        if outer is None:
            kept.append(root)
        else:
            log.warning("%s is inside %s; indexing it once, as part of %s", root, outer, outer)
    return kept


def _check_paths(paths: object) -> list[str | os.PathLike[str]]:
    """The folders of ``Index(paths)``: a list or other iterable of them; one bare path is refused (a
    str iterated is its characters, and ``"/"`` among them is the whole disk)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(
            f"paths must be a list of folders, got one {type(paths).__name__}; use Index.from_path for a single folder"
        )
    try:
        out = list(paths)  # type: ignore[call-overload]
    except TypeError:
        raise ArgumentTypeError(f"paths must be a list of folders, got {type(paths).__name__}") from None
    if not out:
        raise PathError("no path to index")
    return out


def _prefixes(roots: Sequence[Path]) -> list[str]:
    if len(roots) == 1:
        return [""]
    out: list[str] = []
    used: set[str] = set()
    for r in roots:
        name = r.name or "root"
        cand, n = name, 2
        while cand in used:
            cand, n = f"{name}-{n}", n + 1
        used.add(cand)
        out.append(cand + "/")
    return out


# watch=None: roots of this many files are watched by watchfiles (where inotify's queue cannot be read in
# place). A stat costs 4-6 us a file here, so from about 500 files the check (2-4 ms) costs as much as the
# search it precedes (Scala's standard library, 579 files: 7.7 ms a search with the check, 2.7 ms watched);
# a watcher costs 10-60 ms once, at its start, and its barrier 0.2-0.4 ms a search.
AUTO_WATCH_FILES = 500
# The inotify queue read in place costs microseconds a search, so every root is watched with it: the dev
# suite's trees of 75-3,600 chunks paid 0.15-0.4 ms a search for the stat check (25-35% of the search).
AUTO_WATCH_FILES_QUEUE = 1


def _stop_watching(watchers: Sequence[Watcher | None]) -> None:
    for w in watchers:
        if w is not None:
            w.stop()


_P = ParamSpec("_P")
_R = TypeVar("_R")
_LIVE: weakref.WeakSet[Index] = weakref.WeakSet()  # every Index of this process, for the fork hook below


def _locked(method: Callable[Concatenate[Index, _P], _R]) -> Callable[Concatenate[Index, _P], _R]:
    """One call at a time on an Index: its records, stores and corpus change under a refresh, so two
    threads searching one index (a web server's workers) would read a dict while the other changes it."""

    @wraps(method)
    def call(self: Index, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)

    return call


def _renew_locks() -> None:
    """In a forked child: a lock another thread of the parent held at the fork stays held in the child
    for ever; each index gets a fresh one (the child has only the forking thread)."""
    for index in list(_LIVE):
        index._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_locks)


class Index:
    """A searchable index over one or more folders, kept fresh against the files on disk.

    ``watch``: True watches every root, so each search applies only the paths that moved; False checks
    every file's stat before each search (what a one-shot process wants: a watcher costs a start); None
    (the default) watches every root on Linux, where the inotify queue is read in place at each search
    (microseconds, against 0.15-0.4 ms of stats for a small repository), and elsewhere a root of
    ``AUTO_WATCH_FILES`` files or more, where that stat check costs as much as the search it precedes, or
    more (on the Linux kernel's 60k files, 110 ms against a 65 ms search).

    ``background_save`` is accepted for callers of the old single-file cache and changes nothing:
    each batch is committed to the store while the index is built."""

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        content: str = "code",
        model: str | StaticModel | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        max_file_bytes: int | None = None,
        use_cache: bool = True,
        progress: build.Progress | None = None,
        background_save: bool = False,
        watch: bool | None = None,
    ) -> None:
        # Every argument is checked here, before anything is read or built: a mistake is one line now,
        # not a traceback from deep inside a build.
        if not isinstance(content, str) or content not in CONTENT_TYPES:
            raise ArgumentError(f"unknown content type {shown(content)}; choose one of {', '.join(CONTENT_TYPES)}")
        if watch is not None:
            flag("watch", watch)
        flag("use_cache", use_cache)
        flag("background_save", background_save)
        if progress is not None and not callable(progress):
            raise ArgumentTypeError(f"progress must be a function of (done, total), got {type(progress).__name__}")
        if max_file_bytes is not None:
            max_file_bytes = max_file_bytes_limit(max_file_bytes)
        if cache_dir is not None:
            cache_dir = path_argument("cache_dir", cache_dir)
        if model is not None and not isinstance(model, StaticModel):
            model = path_argument("model", model)
        folders = _check_paths(paths)
        self._lock = threading.RLock()  # see _locked
        _LIVE.add(self)
        prefer_small_pages()  # before the index's first large array (forked workers inherit it)
        roots = _outer_roots(list(dict.fromkeys(check_root(p) for p in folders)))
        self.roots = roots
        self.content = content
        # Deferred: an index that is already current (or that another process is building) never needs the
        # tokenizer or the table; a search or a build reads them on first use.
        self.model = model if isinstance(model, StaticModel) else load_model(model, deferred=True)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.max_file_bytes = max_file_bytes
        self.use_cache = use_cache
        self.last_stats: list[build.RefreshStats] = []
        # Every index lives in a store: the cache folder, or a private temporary one (use_cache=False,
        # or a cache folder that cannot be written), removed when this object goes.
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        self._stores: list[Store] = []
        self._data: list[RepoData] = []
        self.rebuilt: dict[str, str] = {}  # root -> why its cached index could not be used
        self._elsewhere: dict[str, str] = {}  # root -> why it is indexed in a temporary folder, not the cache
        self._started: dict[int, build.Check] = {}  # first quick checks begun as the stores opened
        try:
            for root in roots:
                st: Store | None = None
                data: RepoData | None = None
                if use_cache:
                    try:
                        st, data, reason, check = build.load_checking(str(root), content, self.model, self.cache_dir)
                        if check is not None:
                            self._started[len(self._stores)] = check
                        if reason:
                            self.rebuilt[str(root)] = reason
                    except (OSError, CacheIOError) as exc:
                        reason = disk_reason(exc)
                        log.warning("could not use the index cache (%s); indexing in a temporary folder", reason)
                        self._elsewhere[str(root)] = reason
                if st is None or data is None:
                    st, data, _ = build.load_or_new(str(root), content, self.model, self._temp_dir())
                self._stores.append(st)
                self._data.append(data)
        except BaseException:
            for check in self._started.values():  # their children are waited for before the error goes on
                build.reap(check)
            raise
        self._generations: list[tuple[int, int]] = []  # (store epoch, generation) per root, as opened
        self._gone: set[int] = set()  # roots of several whose folder is gone: left out until it is back
        self._live: list[int] = []  # the roots the open corpus holds, in its parts' order
        self._corpus: Corpus | None = None
        self._maps = MapTables()  # the repository map's reference tables, made once per indexed content
        # A long-lived caller asks to watch the tree: each refresh then looks only at the paths that
        # moved (watchers start before the first look, so nothing in between is missed).
        self._watchers: list[Watcher | None] = [watch_tree(r) if watch else None for r in roots]
        # A dropped index stops its watchers: the list itself, so the roots watched later are in it too
        weakref.finalize(self, _stop_watching, self._watchers)
        self._unsettled: set[int] = set()  # roots watched since their last look: the next one checks stats
        # Paths a watcher reported while another process held the builder lock: applied next time.
        self._held: list[set[str]] = [set() for _ in roots]
        # A root whose last write failed (a full disk): (when, why). Its searches use the last commit and
        # name the failure; the write is tried again WRITE_RETRY_SECONDS later, not on every search.
        self._write_failed: list[tuple[float, str] | None] = [None] * len(roots)
        complete = [st.complete() for st in self._stores]
        for i, stats in enumerate(self.refresh(progress=progress, wait=True)):
            if stats.failed and not complete[i]:  # no whole index to fall back on: build it elsewhere
                self._build_elsewhere(i, stats.failed, progress)
            elif stats.failed:
                log.warning("%s; searching the index as last written", stats.failed)
        if watch is None:
            self._watch_large_roots()

    def _watch_large_roots(self) -> None:
        """Watch each root big enough that a stat of every file would cost more than a search. Its size
        is known only after the first look, so the watcher starts after it; whatever moved in between is
        caught by one more stat check, at the next look (``_unsettled``), and the watcher from then on."""
        least = AUTO_WATCH_FILES_QUEUE if cheap() else AUTO_WATCH_FILES
        for i, data in enumerate(self._data):
            if self._watchers[i] is None and len(data.files) >= least:
                self._watchers[i] = watch_tree(self.roots[i])
                if self._watchers[i] is not None:
                    self._unsettled.add(i)

    def _build_elsewhere(self, i: int, why: str, progress: build.Progress | None) -> None:
        """Index root ``i`` in a private temporary folder after its cache folder could not take it;
        raises CacheIOError when that fails too (or was the folder that failed)."""
        temp = self._temp_dir()
        if self._stores[i].folder.is_relative_to(temp):
            raise CacheIOError(why)
        log.warning("%s; indexing in a temporary folder", why)
        self._elsewhere[self._data[i].root] = why
        st, data, _ = build.load_or_new(self._data[i].root, self.content, self.model, temp)
        self._stores[i], self._data[i], self._write_failed[i] = st, data, None
        self._corpus = None
        stats = self._look(i, progress, True, full_check=False)  # the other roots stand as they were looked at
        if stats.failed:
            raise CacheIOError(stats.failed)
        self._reopen()
        self.last_stats[i] = stats

    def _temp_dir(self) -> Path:
        if self._temp is None:
            self._temp = tempfile.TemporaryDirectory(prefix="codepith-index-")
            weakref.finalize(self, self._temp.cleanup)
        return Path(self._temp.name)

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike[str],
        content: str = "code",
        model: str | StaticModel | None = None,
        **kwargs: object,
    ) -> Index:
        return cls([path], content=content, model=model, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def from_paths(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        content: str = "code",
        model: str | StaticModel | None = None,
        **kwargs: object,
    ) -> Index:
        return cls(paths, content=content, model=model, **kwargs)  # type: ignore[arg-type]

    @property
    def unsaved(self) -> dict[str, str]:
        """Roots whose index this process could not keep in the cache folder (a full or read-only disk),
        and why: indexed in a temporary folder, or their last changes not written."""
        out = dict(self._elsewhere)
        for data, failed in zip(self._data, self._write_failed, strict=True):
            if failed is not None:
                out[data.root] = failed[1]
        return out

    # -- freshness ---------------------------------------------------------------------------------
    @property
    def watching(self) -> bool:
        """True while every root is watched, so a refresh costs what changed rather than the tree size."""
        return all(w is not None and w.alive for w in self._watchers)

    @_locked
    def refresh(
        self, progress: build.Progress | None = None, *, full: bool = False, wait: bool | None = None
    ) -> list[build.RefreshStats]:
        """Re-read what changed on disk; reopen the corpus only when a new generation was committed.

        A watched root looks only at the paths its watcher saw move (``full=True`` checks the whole
        tree anyway); an unwatched one, or one whose watcher failed, checks every file's stat.
        While another process builds one of these indexes, ``wait=None`` searches its last complete
        generation (and waits only when none exists yet); ``wait=True`` waits for the build to finish."""
        if progress is not None and not callable(progress):
            raise ArgumentTypeError(f"progress must be a function of (done, total), got {type(progress).__name__}")
        flag("full", full)
        if wait is not None:
            flag("wait", wait)
        try:
            return self._refresh(progress, wait, full_check=False, full=full)
        except CacheError as exc:
            return self._repair(exc, progress)

    @_locked
    def verify(self, progress: build.Progress | None = None) -> list[build.RefreshStats]:
        """Read every byte of each index against its checksums (and every chunk number its postings hold),
        drop what is damaged and redo its files, then refresh. A quick look only compares sizes, so a byte
        flipped in place (bit rot, a bad disk) goes unseen until a read of it fails, or never: its
        scores are silently wrong. ``stats.rebuilt`` says what was redone."""
        try:
            return self._refresh(progress, True, full_check=True)
        except CacheError as exc:
            return self._repair(exc, progress)

    def _refresh(
        self,
        progress: build.Progress | None,
        wait: bool | None,
        *,
        full_check: bool,
        full: bool = False,
        suspect: tuple[Path, ...] = (),
    ) -> list[build.RefreshStats]:
        # A first look at a large tree stats its files in a forked child while the last generation's
        # view opens here: the two took about as long each on the kernel (see build.start_quick_check).
        first = self._corpus is None
        checks, self._started = self._started, {}  # started when the stores were opened (load_checking)
        if first and not (full or full_check):
            for i, data in enumerate(self._data):
                check = checks.get(i) or build.start_quick_check(data)
                if check is not None:
                    checks[i] = check
        try:
            if checks:
                self._reopen()
            stats_all = []
            for i in range(len(self._data)):
                started = checks.pop(i, None)
                look = self._look(i, progress, wait, full_check=full_check, full=full, suspect=suspect,
                                  checking=started, first=first)  # fmt: skip
                stats_all.append(look)
        finally:
            for started in checks.values():  # not reached (an error on the way): their children are reaped
                build.reap(started)
        self._reopen()
        self.last_stats = stats_all
        return stats_all

    def _look(
        self,
        i: int,
        progress: build.Progress | None,
        wait: bool | None,
        *,
        full_check: bool,
        full: bool = False,
        suspect: tuple[Path, ...] = (),
        checking: build.Check | None = None,
        first: bool = False,
    ) -> build.RefreshStats:
        """Bring root ``i``'s index up to date with its tree (or say why it could not); ``checking``: its
        quick check, started already (``build.start_quick_check``); ``first``: this process's first look
        (which checks every file's stat even when a watcher runs: it saw nothing from before it started)."""
        data, st = self._data[i], self._stores[i]
        check_in_place(data.root)  # a root replaced by a link is never followed out of the folder opened
        if len(self._data) > 1 and not os.path.isdir(data.root):
            others = [d.root for j, d in enumerate(self._data) if j != i and j not in self._gone]
            if any(os.path.isdir(r) for r in others):  # the rest is searched; status and notes name this one
                if i not in self._gone:
                    log.warning("%s is gone; searching the other folders without it", data.root)
                self._gone.add(i)
                build.reap(checking)
                return build.kept(data)
        self._gone.discard(i)
        watcher = self._watchers[i]
        moved = None if watcher is None else watcher.take()
        if i in self._unsettled:  # watched since the last look: this one checks the stats (see above)
            self._unsettled.discard(i)
            moved = None
        if moved is not None:
            moved |= self._held[i]
        if full or full_check or first or self._corpus is None:
            moved = None
        self._held[i] = set()
        failed = self._write_failed[i]
        if failed is not None and time.monotonic() - failed[0] < WRITE_RETRY_SECONDS and not full_check:
            build.reap(checking)  # not wanted
            stats = build.kept(data, failed=failed[1])
        else:
            try:
                stats = build.refresh(
                    data,
                    self.model,
                    st,
                    max_file_bytes=self.max_file_bytes,
                    progress=progress,
                    changed=moved,
                    wait=wait,
                    full_check=full_check,
                    suspect=suspect,
                    checking=checking if moved is None else None,
                )
            except BaseException:
                # The watcher's paths were taken and not applied (^C, an error in the build): the watcher
                # will not report them again, so the next look checks every stat instead of missing them.
                if watcher is not None:
                    self._unsettled.add(i)
                raise
            if moved is not None:
                build.reap(checking)  # a watcher's paths decide instead
            if stats.failed and self._corpus is not None:  # (a first look's failure: __init__ says what next)
                log.warning("%s; searching the index as last written", stats.failed)
            self._write_failed[i] = (time.monotonic(), stats.failed) if stats.failed else None
        if stats.rebuilt:
            self.rebuilt[data.root] = stats.rebuilt
        if (stats.busy or stats.failed) and moved:
            self._held[i] = moved  # not applied (another builder, a failed write): they wait for the next look
        elif (stats.busy or stats.failed) and moved is None and watcher is not None:
            # a stat check found what the watcher had drained and could not apply it: the watcher will not
            # report those paths again, so the next look checks the stats again
            self._unsettled.add(i)
        return stats

    def _reopen(self) -> None:
        """A new corpus over the stores' views when any root committed a new generation (or none is open)."""
        generations = [(st.epoch, d.generation) for st, d in zip(self._stores, self._data, strict=True)]
        live = [i for i in range(len(self._stores)) if i not in self._gone]  # a root gone is left out
        if self._corpus is None or generations != self._generations or live != self._live:
            prefixes = _prefixes(self.roots)
            old: dict[int, View] = {}
            if self._corpus is not None:
                old = dict(zip(self._live, (p.view for p in self._corpus.parts), strict=True))
            views = [View(self._stores[i], old.get(i)) for i in live]
            if self._corpus is not None and live == self._live and all(v.reused for v in views):
                self._generations = generations  # only stamps were renewed
                return
            self._corpus = Corpus(
                [CorpusPart(v, prefixes[i]) for v, i in zip(views, live, strict=True)],
                self.model.info.dims,
                self._corpus,
            )
            self._generations, self._live = generations, live

    def _repair(self, exc: CacheError, progress: build.Progress | None = None) -> list[build.RefreshStats]:
        """A segment turned out damaged while reading: verify every byte, drop what is bad, redo its files.
        A damaged manifest (or one that still disagrees with its segments after that) cannot be repaired in
        part: its index is emptied and built again."""
        self._corpus = None
        if not isinstance(exc, ManifestError):
            log.warning("cached index is damaged (%s); rebuilding the damaged part", exc)
            try:
                return self._refresh(progress, True, full_check=True, suspect=(exc.segment,) if exc.segment else ())
            except CacheError as again:
                exc = again
                self._corpus = None
        log.warning("cached index is damaged (%s); rebuilding it", exc)
        for i, st in enumerate(self._stores):
            if exc.index is None or st.folder == exc.index:
                self._stores[i], self._data[i] = build.renew(st, self.model)
                self.rebuilt[self._data[i].root] = str(exc)
        return self._refresh(progress, True, full_check=False)

    @_locked
    def close(self) -> None:
        """Stop watching (an index that is dropped stops watching too); later refreshes check the stats."""
        for w in self._watchers:
            if w is not None:
                w.close()
        self._watchers[:] = [None] * len(self._watchers)  # in place: the finalizer holds this list

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def flush(self) -> None:
        """Kept for callers of the single-file cache: every commit is on disk when refresh returns."""

    @property
    def corpus(self) -> Corpus:
        assert self._corpus is not None
        return self._corpus

    # -- queries -----------------------------------------------------------------------------------
    @property
    def chunks(self) -> list[Chunk]:
        return list(self.corpus.chunks)

    @_locked
    def search(self, query: str, top_k: int = 10, *, mode: str = "hybrid", refresh: bool = True) -> list[SearchResult]:
        query = _check_query(query)
        if not isinstance(mode, str) or mode not in engine.MODES:
            raise ArgumentError(f"unknown mode {shown(mode)}; choose one of {', '.join(engine.MODES)}")
        top_k = _check_top_k(top_k)
        if flag("refresh", refresh):
            self.refresh()
        try:
            return engine.search(self.corpus, self.model, query, top_k, mode=mode)
        except CacheError as exc:
            self._repair(exc)
            return engine.search(self.corpus, self.model, query, top_k, mode=mode)

    @_locked
    def confidence(self, query: str) -> Confidence:
        """How much to trust a search for ``query`` (see ``Confidence``); cheap next to the search."""
        from codepith.search.query import parse_query

        query = bound_query(_check_query(query))[0]  # judged on what was searched, at the search's bounded cost
        corpus = self.corpus
        parsed = parse_query(query)
        total = max(len(corpus), 1)
        matched = [t for t in dict.fromkeys(parsed.terms) if 0 < corpus.bm25.doc_freq(t) <= COMMON_SHARE * total]
        matched += [n for n in parsed.names if corpus.definitions.get(n.lower())]  # a defined name, however common
        # Meaning is judged on the words the model knows whole: a made-up word is pieced together from
        # sub-words, and their mean lands near everything (cosines of 0.6 for random letters).
        known = [w for w in _WORD.findall(query) if len(w) >= 3 and self.model.knows(w)]
        best = 0.0
        if known and len(corpus):
            dense = engine.dense_scores(corpus, self.model, parse_query(" ".join(known)))
            best = float(dense.max()) if dense.size else 0.0
        return Confidence(tuple(dict.fromkeys(matched)), best, judged=bool(parsed.terms))

    @_locked
    def find_related(self, file_path: str, line: int, top_k: int = 5, *, refresh: bool = True) -> list[SearchResult]:
        """Chunks most like the one at ``file_path:line`` (itself excluded)."""
        top_k = _check_top_k(top_k)
        line = _check_line(line)
        if flag("refresh", refresh):
            self.refresh()
        try:
            return engine.related(self.corpus, self._chunk_index(file_path, line), top_k)
        except CacheError as exc:
            self._repair(exc)
            return engine.related(self.corpus, self._chunk_index(file_path, line), top_k)

    @_locked
    def chunk_at(self, file_path: str, line: int) -> Chunk:
        """The indexed chunk that holds ``file_path:line`` (a result path, a root-relative or an absolute path)."""
        line = _check_line(line)
        return self.corpus.chunks[self._chunk_index(file_path, line)]

    def _indexed_path(self, file_path: object) -> str:
        """``file_path`` (a str or ``os.PathLike``: a result path, a root-relative or an absolute path) as
        the corpus names it; every spelling of one file (``./a.py``, ``pkg//a.py``, its absolute path) is
        the same name. A path the index does not hold comes back as given (its lookups find nothing)."""
        raw = path_argument("file_path", file_path)
        rel = raw.replace(os.sep, "/")
        corpus = self.corpus
        if corpus.chunk_indices(rel) or not rel:
            return rel
        if not rel.startswith("/"):
            tidy = posixpath.normpath(rel)
            return tidy if corpus.chunk_indices(tidy) else rel
        try:
            real = Path(raw).resolve()
        except (OSError, RuntimeError, ValueError):
            return rel
        for root, prefix in zip(self.roots, _prefixes(self.roots), strict=True):
            if real.is_relative_to(root):
                return prefix + real.relative_to(root).as_posix()
        return rel

    def _chunk_index(self, file_path: object, line: int) -> int:
        corpus = self.corpus
        rel = self._indexed_path(file_path)
        idxs = corpus.chunk_indices(rel)
        if not idxs:
            raise PathError(f"not in the index: {show_name(rel, limit=200)}")
        at = corpus.chunk_at(rel, line)
        if at is None:
            last = max(corpus.chunks[i].end_line for i in idxs)
            raise PathError(f"line {line} is outside the indexed chunks of {show_name(rel, limit=200)} (1-{last})")
        return at

    @_locked
    def status(self) -> IndexStatus:
        langs: dict[str, int] = {}
        skipped = SkipReport()
        fallbacks = SkipReport()
        files = 0
        gone = self._roots_gone()
        for i, data in enumerate(self._data):
            if i in gone:  # its records are of files no longer there
                continue
            skipped.merge(data.skipped())
            fallbacks.merge(data.fallbacks())
            for rec in data.files.values():
                if not rec.skip:
                    files += 1
                    langs[rec.language] = langs.get(rec.language, 0) + 1
        return IndexStatus(
            roots=tuple(str(r) for r in self.roots),
            content=self.content,
            model=self.model.info.name,
            model_digest=self.model.info.digest,
            files=files,
            chunks=len(self.corpus) if len(gone) < len(self.roots) else 0,
            languages=dict(sorted(langs.items(), key=lambda kv: -kv[1])),
            skipped=skipped,
            refreshed_at=max((d.refreshed_at for d in self._data), default=0.0),
            fallbacks=fallbacks,
            notes=(
                *self._per_root(lambda data, files: explain_hidden(data.walk_hidden, files)),
                *(f"{root}: not saved in the index cache ({why})" for root, why in self.unsaved.items()),
                *self._gone_notes(gone),
            ),
        )

    def _roots_gone(self) -> set[int]:
        """The roots whose folder is gone now; with others still there, the corpus leaves them out from
        here (``status`` is not stale for a root deleted since the last search)."""
        gone = {i for i, root in enumerate(self.roots) if not os.path.isdir(root)}
        if gone != self._gone and len(gone) < len(self.roots) and self._corpus is not None:
            self._gone = gone
            self._reopen()
        return gone

    def _gone_notes(self, gone: set[int]) -> list[str]:
        return [f"{self.roots[i]}: the folder is gone; its files are left out until it is back" for i in sorted(gone)]

    def _per_root(self, explain: Callable[[RepoData, int], list[str]]) -> list[str]:
        """Explanation lines of every root, each prefixed with its root when there are several."""
        out: list[str] = []
        for i, (root, data) in enumerate(zip(self.roots, self._data, strict=True)):
            if i in self._gone:
                continue
            files = sum(1 for r in data.files.values() if not r.skip)
            lines = explain(data, files)
            if lines and len(self.roots) > 1:
                lines = [f"{root}: {lines[0]}", *lines[1:]]
            out.extend(lines)
        return out

    @_locked
    def search_notes(self, query: str) -> list[str]:
        """What a person should know about a search besides its results: the query was cut to
        ``MAX_QUERY_CHARS``, the index could not be brought up to date (a full disk, another process
        updating it), or the index is empty (and why: the ignore rule, the skip reasons)."""
        notes: list[str] = []
        _, cut = bound_query(text_argument("query", query))
        if cut:
            notes.append(cut)
        notes.extend(self._gone_notes(self._gone))
        for failed in self._write_failed:
            if failed is not None:
                notes.append(f"the index could not be updated ({failed[1]}); results are from the last one written")
        for stats in self.last_stats:
            if stats.busy:  # what moved is applied by the next search, once the other process is done
                notes.append(
                    f"another process is updating the index of {show_name(stats.root, limit=200)}; results are"
                    " from its last complete version, without the latest changes"
                )
        if not len(self.corpus):
            why = self._per_root(
                lambda data, files: explain_empty(files, data.skipped(), data.walk_hidden, self.content)
            )
            notes.append("the index is empty" + (":" if why else ""))
            notes.extend(why)
        return notes

    @_locked
    def source_chars(self, results: Sequence[SearchResult]) -> int:
        """Characters of the distinct files behind these results: what reading them whole would cost."""
        corpus = self.corpus
        seen: set[int] = set()
        total = 0
        for r in results:
            idxs = corpus.chunk_indices(r.chunk.file_path)
            if idxs:
                f = int(corpus.file_of_chunk[idxs[0]])
                if f not in seen:
                    seen.add(f)
                    total += corpus.file_chars[f]
        return total

    @_locked
    def file_lines(self, file_path: str) -> dict[int, str]:
        """A file's lines as indexed (a result path), by number; {} for a file the index does not hold.

        Read from its chunks, not from disk: a packet shows what was searched, and ignored or secret
        files (never indexed) stay unread."""
        corpus = self.corpus
        lines: dict[int, str] = {}
        for i in corpus.chunk_indices(self._indexed_path(file_path)):
            chunk = corpus.chunk(i)
            for number, text in numbered_lines(chunk.start_line, chunk.end_line, chunk.content):
                lines.setdefault(number, text)
        return lines

    @_locked
    def enclosing(self, file_path: str, language: str, line: int) -> tuple[Definition, ...]:
        """The definitions around ``file_path:line`` (a result path), outermost first; () when unknown.

        Parsed from the file on disk, lazily and cached, for the few hits a reply shows.
        """
        parsed = self._parsed(file_path, language)
        return parsed.enclosing(line) if parsed is not None else ()

    @_locked
    def outline(self, path: str, *, focus: str | None = None, limit: int = 200) -> FileOutline | RepoMap:
        """A file's definitions, or for a folder ("." = everything) its most referenced definitions.

        ``path`` is a result path or a path inside a root; nothing outside the roots is read, and a
        file must be one the index holds (so ignored and secret files stay unread). ``focus``
        personalises the map: indexed file paths in it toward those files, its other words (a query)
        toward the files a search for them finds and the names that contain them.
        """
        path = path_argument("path", path)
        if focus is not None:
            focus = text_argument("focus", focus)
        limit = whole_number("limit", limit, 1)
        corpus = self.corpus
        rel = self._corpus_path(path)
        idxs = corpus.chunk_indices(rel) if rel else []
        if idxs:
            language = corpus.chunks[idxs[0]].language
            defs = self.definitions(rel, language)
            return FileOutline(rel, language, defs, "" if defs else self._unparsed(rel, language))
        skipped = self._skipped(rel) if rel else None
        if skipped:
            raise PathError(f"{show_name(path, limit=200)} is not indexed ({skipped})")
        scope = rel.rstrip("/")
        if scope and not any(f.startswith(scope + "/") for f in corpus.files):  # not corpus.chunks: 12 s on the kernel
            raise PathError(f"nothing indexed under {show_name(path, limit=200)}")
        if not len(corpus):
            raise PathError(f"nothing indexed under {show_name(path, limit=200)}")
        focus_files: dict[str, float] = {}
        terms: list[str] = []
        words = [w for w in (focus or "").split() if not corpus.chunk_indices(w)]
        for named in (focus or "").split():  # indexed files named in the focus lean the map toward them
            if corpus.chunk_indices(named):
                focus_files[named] = focus_files.get(named, 0.0) + 1.0
        if words:
            from codepith.index.tokens import query_terms

            text = " ".join(words)
            for rank, hit in enumerate(self.search(text, top_k=20, refresh=False)):
                focus_files[hit.chunk.file_path] = focus_files.get(hit.chunk.file_path, 0.0) + 1.0 / (rank + 1)
            terms = [t for t in query_terms(text) if len(t) >= 3]
        folder = self._stores[0].folder if len(self._stores) == 1 else None  # one root's tables are saved
        graph, scores = self._maps.scores(corpus, folder, focus_files, terms)
        ranked = ranked_names(graph, scores, scope)
        entries = map_entries(ranked, lambda p: self.definitions(p, self._language(p)), limit)
        return RepoMap(path, tuple(entries), ranked.files, len(ranked))

    def _language(self, file_path: str) -> str:
        idxs = self.corpus.chunk_indices(file_path)
        return self.corpus.chunks[idxs[0]].language if idxs else ""

    @_locked
    def definitions(self, file_path: str, language: str) -> tuple[Definition, ...]:
        """Every definition of an indexed file (a result path), parsed from disk; () when unknown."""
        found = self._parsable(file_path)
        return (parsed_definitions(found[0], language, found[1]) or ()) if found is not None else ()

    def _record(self, file_path: str) -> FileRecord | None:
        root, rel = self.locate(file_path)
        return self._data[self.roots.index(root)].files.get(rel)

    def _skipped(self, file_path: str) -> str | None:
        """Why the index left out this file (a file on disk it does not hold), None for anything else.
        Only its size is looked at: an ignored or secret file stays unread."""
        from codepith.files.walk import MAX_FILE_BYTES_ENV, max_file_bytes_limit

        root, rel = self.locate(file_path)
        try:
            st = (root / rel).stat()
        except (OSError, ValueError):
            return None
        if not S_ISREG(st.st_mode):
            return None
        limit = max_file_bytes_limit()
        if st.st_size > limit:
            return f"{st.st_size:,} bytes, over the {limit:,} the index takes; {MAX_FILE_BYTES_ENV} raises it"
        return "ignored, secret, generated or not a source file"

    def _unparsed(self, file_path: str, language: str) -> str:
        """Why an indexed file has no parse for its outline, "" when it has one (or no grammar)."""
        rec = self._record(file_path)
        if rec is None or language not in SPECS:
            return ""
        if rec.fallback is not None:
            return f"indexed as line windows ({rec.fallback})"
        root, rel = self.locate(file_path)
        try:
            st = (root / rel).stat()
        except OSError:
            return "the file is gone since it was indexed"
        if (st.st_size, st.st_mtime_ns) != (rec.size, rec.mtime_ns):
            return "the file changed since it was indexed"
        if st.st_size > MAX_PARSE_BYTES:
            return f"over {MAX_PARSE_BYTES:,} bytes"
        return ""

    def _parsed(self, file_path: str, language: str) -> ParsedFile | None:
        """The parse of an indexed file, only of the bytes the index chunked with syntax: a file whose
        chunking fell back to line windows (a grammar that crashed or hung on it, a nest too deep) or that
        changed since is not parsed in this process, where a hang or a crash would take every caller."""
        found = self._parsable(file_path)
        return parsed_file(found[0], language, found[1]) if found is not None else None

    def _parsable(self, file_path: str) -> tuple[Path, tuple[int, int]] | None:
        """(the file on disk, the size and mtime the index chunked) of a file chunked with syntax, else None."""
        root, rel = self.locate(file_path)
        check_in_place(str(root))
        rec = self._data[self.roots.index(root)].files.get(rel)
        if rec is None or rec.skip is not None or rec.fallback is not None:
            return None
        return root / rel, (rec.size, rec.mtime_ns)

    def _corpus_path(self, path: str) -> str:
        """``path`` as the corpus names it ("" for the whole corpus); refused when outside every root."""
        from codepith.output.read import resolve_inside

        raw = path.replace(os.sep, "/").strip()
        if raw in ("", ".", "./"):
            return ""
        prefixes = _prefixes(self.roots)
        candidates: list[tuple[Path, str]] = []
        for root, prefix in zip(self.roots, prefixes, strict=True):
            if Path(raw).is_absolute():
                candidates.append((root, raw))
            elif not prefix:
                candidates.append((root, raw))
            elif raw.rstrip("/") + "/" == prefix or raw.startswith(prefix):
                candidates.append((root, raw[len(prefix) :] or "."))
        error: PathError | None = None
        for root, inner in candidates:
            check_in_place(str(root))
            try:
                _, rel = resolve_inside(root, inner)
            except PathError as exc:
                error = exc
                continue
            prefix = prefixes[self.roots.index(root)]
            return prefix + rel if rel != "." else prefix.rstrip("/")
        raise error or PathError(f"not inside the indexed folders: {show_name(path, limit=200)}")

    def locate(self, file_path: str) -> tuple[Path, str]:
        """(root, path relative to it) for a result path, undoing a multi-repository prefix."""
        file_path = path_argument("file_path", file_path)
        prefixes = _prefixes(self.roots)
        for root, prefix in zip(self.roots, prefixes, strict=True):
            if prefix and file_path.startswith(prefix):
                return root, file_path[len(prefix) :]
        return self.roots[0], file_path
