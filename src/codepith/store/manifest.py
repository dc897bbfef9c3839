"""The manifest (SQLite, WAL): which segments make up the index, the file table, and the builder lock.

Every change is one SQLite transaction: a batch's segment row and its files' rows commit together, after
the segment's files are written and fsynced. A reader takes its file table and segment list in one read
transaction, so it sees one committed generation, never a half-written one; segments are immutable, so
the maps it opens stay valid even when a later merge retires them (POSIX keeps unlinked files readable).
A killed build leaves its committed batches: the rerun finds those files unchanged and redoes the rest.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any, Concatenate, NamedTuple, ParamSpec, TypeVar

from filelock import FileLock, Timeout

from codepith.files.source import identity
from codepith.store import segment as seg
from codepith.store.layout import FORMAT_VERSION, CacheError, CacheIOError, ManifestError
from codepith.store.opened import OpenSegments
from codepith.store.vectors import VectorCache

log = logging.getLogger("codepith")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments(name TEXT PRIMARY KEY, chunks INTEGER NOT NULL, sums TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    rel BLOB PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, digest TEXT NOT NULL,
    skip TEXT, chars INTEGER NOT NULL, language TEXT NOT NULL, racy INTEGER NOT NULL,
    segment TEXT, first INTEGER NOT NULL, n INTEGER NOT NULL, blob_off INTEGER NOT NULL, blob_len INTEGER NOT NULL,
    fallback TEXT);
CREATE INDEX IF NOT EXISTS files_segment ON files(segment);
"""


def _rel_key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


def _rel(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "surrogateescape")


def _with_paths(con: sqlite3.Connection, rest: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """``SELECT rel, <rest>`` with each path decoded: by SQLite when every one is UTF-8 (a decode per row in
    Python was 0.05-0.08 s of the kernel's table), else row by row (a path kept as the OS gave it)."""
    try:
        return con.execute(f"SELECT CAST(rel AS TEXT), {rest}", args).fetchall()
    except sqlite3.OperationalError:
        return [(_rel(r[0]), *r[1:]) for r in con.execute(f"SELECT rel, {rest}", args).fetchall()]


# Of a ``file_rows`` row: the record's columns (FileMeta's order), and the live row's (``_live_rows``')
_RECORD_COLUMNS = itemgetter(slice(0, 10))
_LIVE_COLUMNS = itemgetter(0, 10, 11, 8, 5, 12, 13)


class FileMeta(NamedTuple):
    """What the file table keeps per file for freshness (the chunks themselves live in segments).

    A named tuple, not a frozen dataclass like the other values here: opening a kernel-sized index makes
    60k of them, and a frozen dataclass's ``__init__`` took 0.18-0.23 s of a 2 s cold search for that."""

    rel: str
    size: int
    mtime_ns: int
    digest: str
    skip: str | None
    chars: int
    language: str
    racy: bool
    n: int = 0  # chunks
    fallback: str | None = None  # why the file holds line windows (a chunking error), kept for reports


_BUSY_SECONDS = 60.0  # how long a process waits on another's lock of the manifest


def _is_busy(exc: BaseException) -> bool:
    text = str(exc)
    return "database is locked" in text or "database is busy" in text


_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26  # primary result codes of a damaged file
_DAMAGE_WORDS = ("malformed", "not a database", "no such table", "no such column")


def damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite found the manifest's bytes damaged (malformed, not a database, not our tables), rather
    than out of reach (locked, busy, read-only, no permission, an I/O error, a full disk): only damage may
    have an index emptied and rebuilt; a lock or a permission must never cost one."""
    if isinstance(exc, (sqlite3.InterfaceError, sqlite3.ProgrammingError)):  # misuse: a bug, not the file
        return False
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    if not isinstance(exc, sqlite3.OperationalError):  # DatabaseError, IntegrityError...: what the file holds
        return True
    return any(word in str(exc) for word in _DAMAGE_WORDS)


def read_error(folder: Path, exc: sqlite3.Error, doing: str = "read") -> CacheError | CacheIOError:
    """A failed read of the manifest as the error callers act on: ManifestError (the index is rebuilt) for
    damage, else CacheIOError (the index is kept; one line says why it could not be used)."""
    if damaged(exc):
        return ManifestError(f"manifest unreadable ({exc})", folder)
    return CacheIOError(f"could not {doing} the index in {folder}: {exc}")


def expect_rows(cur: sqlite3.Cursor, want: int, what: str, folder: Path) -> None:
    """A commit must find every row it changes: one missing means the manifest is not what this process
    read (damaged, or replaced under it), and committing would leave it disagreeing with its segments."""
    if cur.rowcount != want:
        raise ManifestError(f"the manifest lost rows ({what}: {cur.rowcount} of {want} found)", folder)


def _int_meta(con: sqlite3.Connection, key: str, folder: Path) -> int:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise ManifestError(f"manifest unreadable (its {key} is {row and row[0]!r})", folder) from None


_INHERITED: list[object] = []  # a forked child's copies of its parent's connections and locks, never closed


# The store's own files: a folder in the place of one (made by hand, or left by a damaged file system) made
# every build fail ("Is a directory", "unable to open database file") until the cache was cleared by hand
# (source.json: every build that completed a generation, after its commit).
_OWN_FILES = ("build.lock", "manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm", "source.json")


def _clear_folders_in_the_way(folder: Path) -> None:
    for name in _OWN_FILES:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            log.warning("index file %s was a folder; removed (the index is rebuilt if it was the manifest)", path)
            shutil.rmtree(path, ignore_errors=True)


class StoreBusy(Exception):
    """Another process holds the builder lock and the caller chose not to wait."""


class Store:
    """One repository's index in one cache folder."""

    def __init__(self, folder: Path, *, root: str, content: str, model_name: str, model_digest: str, dims: int) -> None:
        self.folder = folder
        self.ident = {"root": root, "content": content, "model_digest": model_digest, "format": str(FORMAT_VERSION)}
        self.model_name = model_name
        self.dims = dims
        folder.mkdir(parents=True, exist_ok=True)
        _clear_folders_in_the_way(folder)
        self._pid = os.getpid()
        self._owned_lock = FileLock(str(folder / "build.lock"))
        self._owned_mutex = threading.RLock()
        self._owned_con = self._connect()
        self._manifest_path = str(folder / "manifest.sqlite")  # (a string: a search asks for it each time)
        self._manifest = identity(self._manifest_path)  # the manifest file the connection has open
        self.epoch = 0  # how many times the manifest was found replaced and opened again (``reopen``)
        self._rows: dict[str, list[tuple[Any, ...]]] = {}  # segment -> its live file rows (_live_rows)
        self.vectors = VectorCache()  # float32 copies of segment vectors, shared by this store's views
        self.opened = OpenSegments()  # mapped segments and decoded files, shared by this store's views

    # What a process may not share with its forked child: SQLite forbids using a connection on both sides
    # of a fork, filelock refuses an inherited lock, and a mutex may have been held by a thread the child
    # does not have. A child (gunicorn's preloaded workers, multiprocessing's fork) makes its own on first
    # use; the inherited ones are kept, never closed, so that closing them cannot touch the parent's files.
    @property
    def _lock(self) -> FileLock:
        self._own()
        return self._owned_lock

    @property
    def _mutex(self) -> threading.RLock:
        self._own()
        return self._owned_mutex

    @property
    def _con(self) -> sqlite3.Connection:
        self._own()
        return self._owned_con

    def _own(self) -> None:
        if self._pid == os.getpid():
            return
        con = self._connect()  # first: if it fails, the next use tries again rather than use the parent's
        _INHERITED.append((self._owned_con, self._owned_lock))
        self._owned_lock = FileLock(str(self.folder / "build.lock"))
        self._owned_mutex = threading.RLock()
        self._owned_con = con
        self._pid = os.getpid()

    def _connect(self) -> sqlite3.Connection:
        """The manifest's connection. SQLite answers "database is locked" at once, not after its busy
        timeout, where waiting could deadlock (switching to WAL while another process does, a read that
        must become a write): seen once with two builders starting together on a loaded machine. Opening
        is retried for the busy timeout before the folder is given up."""
        deadline = time.monotonic() + _BUSY_SECONDS
        delay = 0.01
        while True:
            try:
                return self._connect_once()
            except sqlite3.Error as exc:
                if _is_busy(exc) and time.monotonic() + delay <= deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                # not a database, malformed: the index's fault, rebuilt; locked, I/O, a full or read-only
                # disk, no permission: the folder's, and the index is kept
                raise read_error(self.folder, exc, "open") from None

    def _connect_once(self) -> sqlite3.Connection:
        """One attempt; SQLite's own error, if any, after closing what it had opened (a retry opens another)."""
        path = self.folder / "manifest.sqlite"
        # A manifest made now holds nothing a crash could lose: it is made without syncs (seven fdatasyncs of
        # a rollback journal, the WAL switch and their folder, 3-10 ms of a small repository's 35 ms build),
        # and a torn one is a damaged manifest, which is rebuilt. Its commits from then on are NORMAL's.
        new = not path.exists()
        con = sqlite3.connect(str(path), timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            con.execute("PRAGMA synchronous=OFF" if new else "PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(SCHEMA)
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                con.execute("BEGIN IMMEDIATE")
                if not con.execute("SELECT 1 FROM meta LIMIT 1").fetchone():
                    con.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [*self.ident.items(), ("dims", str(self.dims)), ("generation", "0"), ("complete", "0")],
                    )
                con.execute("COMMIT")
                rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if new:
                con.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error:
            con.close()
            raise
        for key, want in self.ident.items():
            if rows.get(key) != want:
                con.close()
                raise CacheError(f"index was built for another {key} ({rows.get(key)!r})")
        return con

    def replaced(self) -> bool:
        """Whether the manifest at this folder's path is no longer the file this store has open: the index
        was removed (``codepith clear``, the cache folder deleted) and maybe built again by another process.
        Writing on would go to a deleted file, each process taking the other's segments for debris."""
        return identity(self._manifest_path) != self._manifest

    def reopen(self) -> None:
        """Open the manifest now at the folder's path (made afresh, empty, when there is none)."""
        with self._mutex:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise write_error(self.folder, exc) from exc
            con = self._connect()
            old, self._owned_con = self._owned_con, con
            self._manifest = identity(self.folder / "manifest.sqlite")
            self._rows = {}
            self.epoch += 1
            try:
                old.close()
            except sqlite3.Error:
                pass

    @classmethod
    def reset(cls, folder: Path) -> None:
        """Remove an unusable index folder's contents (not the lock file, which others may hold)."""
        if not folder.is_dir():
            return
        for p in folder.iterdir():
            if p.name == "build.lock":
                continue
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    p.unlink()
                except OSError:
                    pass

    def emptied(self) -> Store:
        """This index emptied and opened afresh, for a manifest found damaged after it opened: this store is
        closed, and the folder is emptied under the builder lock, so that no builder is writing it then."""
        self.close()
        try:
            with FileLock(str(self.folder / "build.lock")):
                Store.reset(self.folder)
                return Store(
                    self.folder,
                    root=self.ident["root"],
                    content=self.ident["content"],
                    model_name=self.model_name,
                    model_digest=self.ident["model_digest"],
                    dims=self.dims,
                )
        except OSError as exc:  # the lock file cannot be made or taken (a full or read-only disk)
            raise write_error(self.folder, exc) from exc

    def close(self) -> None:
        if self._pid != os.getpid():  # a forked child that never used the store: nothing of its own to close
            _INHERITED.append(self._owned_con)
            return
        with self._mutex:
            self._con.close()

    # -- reading ------------------------------------------------------------------------------------
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._mutex:
            try:
                return self._con.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise read_error(self.folder, exc) from None

    def meta(self) -> dict[str, str]:
        return dict(self._query("SELECT key, value FROM meta"))

    def generation(self) -> int:
        """One row, not the whole meta table (whose ``fresh`` row is 1.7 MB on the kernel)."""
        got = self._query("SELECT value FROM meta WHERE key = 'generation'")
        try:
            return int(got[0][0]) if got else 0
        except ValueError:
            raise ManifestError(f"manifest unreadable (its generation is {got[0][0]!r})", self.folder) from None

    def complete(self) -> bool:
        """Whether the last commit holds a whole index (one row, as ``generation``)."""
        got = self._query("SELECT value FROM meta WHERE key = 'complete'")
        return bool(got) and got[0][0] == "1"

    def file_rows(self, make: Callable[[tuple[Any, ...]], _T]) -> list[_T]:
        """The file table's rows, each ``make`` of a tuple in ``FileMeta``'s field order with the path
        decoded: a caller's records straight from the rows (a kernel-sized table as FileMeta first, then
        records, cost 0.1 s more). Paths are decoded by SQLite when they are all UTF-8 (one row-by-row
        decode in Python was 0.05-0.08 s of the kernel's), else row by row.

        The same read keeps the live rows for the next ``snapshot`` when it has none yet: opening an index
        reads the table here and then for its view, and the kernel's second read was 0.1-0.15 s of a cold
        search. Rows only ever leave a segment, so ``_live_rows``' count check tells whether they still hold."""
        cols = "size, mtime_ns, digest, skip, chars, language, racy, n, fallback, segment, first, blob_off, blob_len"
        with self._mutex:
            try:
                rows = _with_paths(self._con, f"{cols} FROM files")
            except sqlite3.Error as exc:
                raise read_error(self.folder, exc) from None
            out = list(map(make, map(_RECORD_COLUMNS, rows)))
            if not self._rows:
                live: dict[str, list[tuple[Any, ...]]] = {}
                for r in rows:
                    if r[4] is None and r[8] > 0:  # as _live_rows: skip IS NULL AND n > 0
                        live.setdefault(r[10], []).append(_LIVE_COLUMNS(r))
                self._rows = live
        return out

    def file_count(self) -> int:
        got = self._query("SELECT COUNT(*) FROM files")
        return int(got[0][0]) if got else 0

    def stat_rows_apart(self) -> tuple[int, list[tuple[str, int, int, int]]]:
        """(generation, (rel, size, mtime_ns, racy) of every file) in one transaction, through a connection
        of its own: for a forked child, which must never use a connection its parent opened."""
        try:
            con = sqlite3.connect(str(self.folder / "manifest.sqlite"), timeout=_BUSY_SECONDS, isolation_level=None)
            try:
                con.execute("BEGIN")
                got = con.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
                rows = _with_paths(con, "size, mtime_ns, racy FROM files")
                con.execute("COMMIT")
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise read_error(self.folder, exc) from None
        try:
            return (int(got[0]) if got else 0), rows
        except ValueError:
            raise ManifestError(f"manifest unreadable (its generation is {got[0]!r})", self.folder) from None

    @contextmanager
    def snapshot(self) -> Iterator[tuple[dict[str, str], list[tuple[str, int, str]], list[tuple[Any, ...]]]]:
        """(meta, segments, files) of one committed generation, read in one transaction."""
        with self._mutex:
            try:
                self._con.execute("BEGIN")
                try:
                    meta = dict(self._con.execute("SELECT key, value FROM meta").fetchall())
                    segs = self._con.execute("SELECT name, chunks, sums FROM segments").fetchall()
                    files = self._live_rows()
                finally:
                    self._con.execute("COMMIT")
            except sqlite3.Error as exc:
                raise read_error(self.folder, exc) from None
            yield meta, segs, files

    def _live_rows(self) -> list[tuple[Any, ...]]:
        """Every file row that has chunks, as (rel, segment, first, n, chars, blob_off, blob_len).

        Kept per segment between generations: a segment's rows only ever leave it (a file replaced,
        deleted or merged away points elsewhere; new rows go to new segments), so a segment whose count of
        rows is unchanged holds the same rows. After a one-file edit of the kernel's index this reads one
        segment's thousand rows and the counts (14 ms) instead of all 60,000 (97 ms)."""
        filt = "skip IS NULL AND n > 0"
        cols = "segment, first, n, chars, blob_off, blob_len FROM files"  # after rel
        if not self._rows:
            got: dict[str, list[tuple[Any, ...]]] = {}
            for r in _with_paths(self._con, f"{cols} WHERE {filt}"):
                got.setdefault(r[1], []).append(r)
            self._rows = got
        else:
            counts = dict(self._con.execute(f"SELECT segment, COUNT(*) FROM files WHERE {filt} GROUP BY segment"))
            kept = {name: rows for name, rows in self._rows.items() if len(rows) == counts.get(name)}
            for name in counts.keys() - kept.keys():
                kept[name] = _with_paths(self._con, f"{cols} WHERE segment = ? AND {filt}", (name,))
            self._rows = kept
        return [row for rows in self._rows.values() for row in rows]

    # -- writing ------------------------------------------------------------------------------------
    @contextmanager
    def building(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[], None] | None = None,
        full_check: bool = False,
        suspect: Collection[Path] = (),
    ) -> Iterator[Writer]:
        """The builder lock: one writer per index across processes. Others wait (``wait``) or get StoreBusy."""
        try:
            try:
                self._lock.acquire(timeout=0)
            except Timeout:
                if not wait:
                    raise StoreBusy(str(self.folder)) from None
                if on_wait is not None:
                    on_wait()
                self._lock.acquire()
        except OSError as exc:  # the lock file cannot be made (a full or read-only disk)
            raise write_error(self.folder, exc) from exc
        try:
            yield Writer(self, full_check=full_check, suspect=suspect)
        finally:
            self._lock.release()


def _changed_fresh(con: sqlite3.Connection, fresh: Any) -> list[tuple[str, str]]:
    """The ``fresh`` row to write, or none when the stored one says the same: on the kernel it is 1.7 MB
    (every folder's stamp, every skipped path), and an edit in place leaves it as it was, so rewriting it
    made each one-file commit write and sync that much more."""
    text = json.dumps(fresh)
    row = con.execute("SELECT value FROM meta WHERE key = 'fresh'").fetchone()
    return [] if row is not None and row[0] == text else [("fresh", text)]


_P = ParamSpec("_P")
_T = TypeVar("_T")


def disk_reason(exc: BaseException) -> str:
    """What failed, in the system's words ('No space left on device'), without the errno and path."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def write_error(folder: Path, exc: OSError | sqlite3.Error) -> CacheIOError:
    return CacheIOError(f"could not write the index in {folder}: {disk_reason(exc)}")


def _disk_errors(method: Callable[Concatenate[Writer, _P], _T]) -> Callable[Concatenate[Writer, _P], _T]:
    """A failed write (ENOSPC, EDQUOT, EROFS, EIO; SQLite's "database or disk is full") becomes one
    CacheIOError: the transaction rolled back and the segment being written was removed, so the
    last commit stands, and callers can tell a full disk from a bug. A manifest SQLite finds damaged on
    the way is a ManifestError: the index is rebuilt."""

    @functools.wraps(method)
    def wrapped(self: Writer, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            if damaged(exc):
                raise ManifestError(f"manifest unreadable ({exc})", self.folder) from exc
            raise write_error(self.folder, exc) from exc
        except OSError as exc:
            raise write_error(self.folder, exc) from exc

    return wrapped


class Writer:
    """Commits batches; exists only while the builder lock is held."""

    def __init__(self, store: Store, *, full_check: bool = False, suspect: Collection[Path] = ()) -> None:
        self.store = store
        self.folder = store.folder
        self.full_check = full_check
        self.suspect = frozenset(suspect)  # segments a reader failed on, whatever their checksums say
        self.damaged: list[str] = []  # why segments were dropped
        self.compact_vectors = False  # int8 vectors in new segments (the builder says so for large repositories)
        self.parse_journal = self.folder / "parsing"  # the file an in-process build is chunking (workers.py)
        self._collect()

    def _tx(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        with self.store._mutex:
            con = self.store._con
            con.execute("BEGIN IMMEDIATE")
            try:
                fn(con)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    @_disk_errors
    def _collect(self) -> None:
        """Drop what no committed generation refers to (a killed build's unfinished segment), and
        committed segments that are damaged, with their files' rows, so those files are redone."""
        rows = self.store._query("SELECT name, chunks, sums FROM segments")
        known = {r[0] for r in rows}
        full = self.full_check or not self.store.complete()  # after a crash: read every byte
        bad = []
        for name, n, sums in rows:
            try:
                recorded = json.loads(sums)
            except ValueError:
                recorded = {}  # damaged: each file reads "not recorded", and the segment is redone
            try:
                why = seg.verify(self.folder / name, recorded, full=full, chunks=n)
            except OSError as exc:  # no permission, an I/O error: nothing said of the segment, which is kept
                raise CacheIOError(f"could not read the index in {self.folder}: {disk_reason(exc)}") from None
            if not why and self.folder / name in self.suspect:
                why = "its chunks could not be read"
            if why:
                log.warning("index segment %s is damaged (%s); rebuilding its files", name, why)
                bad.append(name)
                self.damaged.append(f"segment {name}: {why}")
        if bad:

            def drop(con: sqlite3.Connection) -> None:
                for name in bad:
                    con.execute("DELETE FROM files WHERE segment = ?", (name,))
                    expect_rows(con.execute("DELETE FROM segments WHERE name = ?", (name,)), 1, "segment", self.folder)
                expect_rows(con.execute("UPDATE meta SET value = '0' WHERE key = 'complete'"), 1, "meta", self.folder)

            self._tx(drop)
            known -= set(bad)
        for p in self.folder.iterdir():
            if (p.name.startswith("seg-") or p.name.startswith(".tmp-seg-")) and p.name not in known:
                shutil.rmtree(p, ignore_errors=True)

    @_disk_errors
    def commit(
        self,
        new: Sequence[seg.NewFile],
        metas: Sequence[FileMeta],
        *,
        touched: Sequence[FileMeta] = (),
        deleted: Sequence[str] = (),
    ) -> None:
        """One atomic step: a segment holding ``new`` (whose table rows are in ``metas``, together with
        rows of files that hold no chunks), stat updates of ``touched`` files, and ``deleted`` files."""
        by_rel = {m.rel: m for m in metas}
        written = seg.write(self.folder, new, self.store.dims, compact=self.compact_vectors) if new else None

        folder = self.folder

        def apply(con: sqlite3.Connection) -> None:
            expect_rows(con.execute("UPDATE meta SET value = '0' WHERE key = 'complete'"), 1, "meta", folder)
            gen = _int_meta(con, "generation", folder)
            con.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(gen + 1),))
            placed: dict[str, seg.Placed] = {}
            if written is not None:
                name, n, sums, placements = written
                con.execute("INSERT INTO segments VALUES (?, ?, ?)", (name, n, json.dumps(sums)))
                placed = {p.rel: p for p in placements}
            rows = []
            for m in metas:
                p = placed.get(m.rel)
                rows.append(
                    (
                        _rel_key(m.rel),
                        m.size,
                        m.mtime_ns,
                        m.digest,
                        m.skip,
                        m.chars,
                        m.language,
                        int(m.racy),
                        written[0] if (written is not None and p is not None) else None,
                        p.first if p else 0,
                        p.n if p else 0,
                        p.blob_off if p else 0,
                        p.blob_len if p else 0,
                        m.fallback,
                    )
                )
            con.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            stats = {_rel_key(m.rel): (m.size, m.mtime_ns, int(m.racy)) for m in touched}
            if stats:
                sql = "UPDATE files SET size = ?, mtime_ns = ?, racy = ? WHERE rel = ?"
                cur = con.executemany(sql, [(*v, k) for k, v in stats.items()])
                expect_rows(cur, len(stats), "files touched", folder)
            gone = {_rel_key(r) for r in deleted}
            if gone:
                cur = con.executemany("DELETE FROM files WHERE rel = ?", [(k,) for k in gone])
                expect_rows(cur, len(gone), "files deleted", folder)

        missing = [f.rel for f in new if f.rel not in by_rel]
        if missing:
            raise ValueError(f"no file row for {missing[:3]}")
        try:
            self._tx(apply)
        except BaseException:
            if written is not None:
                shutil.rmtree(self.folder / written[0], ignore_errors=True)
            raise

    @_disk_errors
    def finish(self, *, walk_skipped: Any, refreshed_at: float, fresh: Any = None) -> None:
        """Mark the generation complete (every walked file is in it), then merge if segments piled up.

        ``fresh`` (JSON) is what a later process needs to judge freshness without a walk (the walk's
        stamps, skipped paths, symlink ends, pruned folders, hidden-by-ignore report); it commits with
        the generation, so it always describes the file table beside it."""
        from codepith.store.merge import merge_if_needed

        try:
            merge_if_needed(self)
        except (OSError, sqlite3.OperationalError) as exc:  # merging only saves space and opens: not needed
            log.warning("could not merge segments (%s); the index stays in more of them", write_error(self.folder, exc))

        def apply(con: sqlite3.Connection) -> None:
            gen = _int_meta(con, "generation", self.folder)
            rows = [
                ("generation", str(gen + 1)),
                ("complete", "1"),
                ("walk_skipped", json.dumps(walk_skipped)),
                ("refreshed_at", repr(refreshed_at)),
            ]
            con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows + _changed_fresh(con, fresh))

        self._tx(apply)
        self._collect_unreferenced()
        self._write_source()

    def _write_source(self) -> None:
        """``source.json``: what the index holds, for listings that must not open SQLite."""
        files, chunks = self.store._query("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM files WHERE skip IS NULL")[0]
        source = {
            "root": self.store.ident["root"],
            "content": self.store.ident["content"],
            "model": self.store.model_name,
            "model_digest": self.store.ident["model_digest"],
            "files": files,
            "chunks": chunks,
            "updated": time.time(),
            "format": FORMAT_VERSION,
        }
        tmp = self.folder / ".tmp-source.json"
        tmp.write_text(json.dumps(source, indent=1), "utf-8", "surrogateescape")
        os.replace(tmp, self.folder / "source.json")

    @_disk_errors
    def note(self, *, walk_skipped: Any, refreshed_at: float, fresh: Any = None) -> None:
        """Record a look that found the same files: the freshness state it leaves, in the complete
        generation it checked (no new generation, so readers keep what they have open)."""

        def apply(con: sqlite3.Connection) -> None:
            rows = [("walk_skipped", json.dumps(walk_skipped)), ("refreshed_at", repr(refreshed_at))]
            con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows + _changed_fresh(con, fresh))

        self._tx(apply)
        if not (self.folder / "source.json").is_file():  # lost (removed, or a folder in its place): written again
            self._write_source()

    def _collect_unreferenced(self) -> None:
        known = {r[0] for r in self.store._query("SELECT name FROM segments")}
        for p in self.folder.iterdir():
            if p.name.startswith("seg-") and p.name not in known:
                shutil.rmtree(p, ignore_errors=True)

    @_disk_errors
    def bump(self) -> None:
        """A new generation without new segments (e.g. only deletions)."""

        def apply(con: sqlite3.Connection) -> None:
            gen = _int_meta(con, "generation", self.folder)
            con.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(gen + 1),))

        self._tx(apply)
