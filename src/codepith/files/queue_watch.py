"""Watching a tree through Linux's inotify queue, read by the searching thread itself: no thread, no barrier.

The kernel queues an inotify event inside the system call that made the change (the ``write``, ``rename``
or ``unlink`` has not returned before its event is queued), so one non-blocking read of the queue at the
start of a search sees every change made before it: nothing can be in flight. ``watch.TreeWatcher``
(watchfiles) hands events over on its own thread and so must wait for a sentinel's event at each
``take`` (0.2-0.4 ms a search on the dev suite's small trees, more than a stat of every file there);
this answer costs one ``ioctl`` and one ``read`` when nothing moved (microseconds).

It answers as ``TreeWatcher`` does (root-relative paths that moved; None when it cannot vouch for the
tree, so the caller checks the tree itself), so an index treats the two alike. A folder moved within
the tree renames the watches under it (they follow the inodes), one moved out drops them, one moved in
or made is watched before its paths are reported (so what is made in it later is seen, and what was
made before is found by the walk of its region); a full queue (``IN_Q_OVERFLOW``) answers None.
Linux only; elsewhere ``start`` is False and ``watch.watch_tree`` uses watchfiles.

It uses ``inotify_simple`` (a ctypes wrapper of the three calls) rather than our own ctypes code.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import sys
import threading
from typing import Any

from .source import identity

log = logging.getLogger("codepith")

MAX_PENDING = 50_000  # more changed paths than this: a walk is cheaper than judging each

# inotify.h: the events of a watched folder's entries (and of the folder itself)
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000
IN_ISDIR = 0x40000000
MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
)  # fmt: skip


class WatchLimit(OSError):
    """The user's inotify watches or instances are used up: this tree is checked by stats instead."""


ENABLED = True  # False: watchfiles everywhere (tests of that backend)


def available() -> bool:
    if not ENABLED or not sys.platform.startswith("linux"):
        return False
    try:
        import inotify_simple  # noqa: F401
    except ImportError:
        return False
    return True


def _bind_libc() -> None:
    """Give inotify_simple the C library by its soname: left to itself it asks ``find_library("c")``,
    which runs ``ldconfig -p`` in a child process (20-25 ms here, a watcher's whole start on a small tree)."""
    import inotify_simple

    if getattr(inotify_simple, "_libc", None) is None:
        try:
            inotify_simple._libc = ctypes.CDLL("libc.so.6", use_errno=True)
        except OSError:  # not glibc (musl): inotify_simple finds its own
            pass


class QueueWatcher:
    """Paths that moved under one root since the last ``take``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self._lock = threading.RLock()
        self._queue: Any = None  # inotify_simple.INotify
        self._paths: dict[int, str] = {}  # watch descriptor -> the folder it was added for
        self._folders: set[str] = set()  # the folders watched (the values of _paths)
        self._root_wd = -1
        self._root_id: tuple[int, int] | None = None
        self._pid = os.getpid()
        self._lost_root = False

    def start(self) -> bool:
        """Watch every folder of the tree; False (and a logged reason) when that cannot be done.

        The watches are in place when this returns, so nothing that happens afterwards is missed."""
        with self._lock:
            try:
                self._open()
            except Exception as exc:  # noqa: BLE001 - any failure means: check the tree instead
                level = logging.INFO if isinstance(exc, WatchLimit) else logging.WARNING
                log.log(level, "cannot watch %s (%s); checking the files before each search instead", self.root, exc)
                self.close()
                return False
            return True

    @property
    def alive(self) -> bool:
        return self._queue is not None

    def take(self) -> set[str] | None:
        """Root-relative paths that moved since the last call (every change made before this call
        included), or None when the watcher cannot vouch for the tree: then check the tree itself."""
        if self._pid != os.getpid():  # a forked child: the queue is the parent's; watch afresh from here
            self._queue, self._paths, self._folders = None, {}, set()
            self._pid = os.getpid()
            self._lock = threading.RLock()
            self.start()
            return None
        with self._lock:
            if self._queue is None:
                if self._lost_root:
                    self._rewatch()
                return None
            try:
                moved = self._drain()
                if identity(self.root) != self._root_id:
                    self._lost_root = True  # a folder above the root moved away, or the root was replaced
                if self._lost_root or moved is None:
                    self._rewatch()  # watches that no longer match their paths: all of them afresh
                    return None
                return moved
            except Exception as exc:  # noqa: BLE001 - the events are lost: the caller checks the tree
                log.warning("stopped watching %s (%s); checking the files before each search instead", self.root, exc)
                self.close()
                return None

    def _drain(self) -> set[str] | None:
        moved: set[str] = set()
        lossy = False
        leaving: dict[int, str] = {}  # a folder's move away, by cookie, until its arrival is read
        while True:
            events = self._queue.read(timeout=0)
            if not events:
                break
            for wd, mask, cookie, name in events:
                if mask & IN_Q_OVERFLOW:
                    lossy = True
                    continue
                folder = self._paths.get(wd)
                if mask & IN_IGNORED:  # the watch is gone (its folder deleted): a deletion event came first
                    self._folders.discard(self._paths.pop(wd, ""))
                    if wd == self._root_wd:
                        self._lost_root = True
                    continue
                if folder is None:
                    continue
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
                    if wd == self._root_wd:
                        self._lost_root = True
                    elif mask & IN_UNMOUNT:
                        lossy = True
                    continue  # a folder below moved or went: its parent's event says where
                path = os.path.join(folder, name) if name else folder
                if mask & IN_ISDIR and mask & IN_MOVED_FROM:
                    leaving[cookie] = path
                elif mask & IN_ISDIR and mask & IN_MOVED_TO:
                    old = leaving.pop(cookie, None)
                    if old is not None:
                        self._rename(old, path)  # the watches under it follow the inodes: new names
                    else:
                        self._add_tree(path)  # moved in from outside the tree
                elif mask & IN_ISDIR and mask & (IN_CREATE | IN_ATTRIB) and path not in self._folders:
                    # watched before anything reads it, so what is made in it from now on is seen; what
                    # was made in it before is found by the walk of its region
                    self._add_tree(path)
                if not lossy:
                    moved.add(path[len(self._prefix) :].replace(os.sep, "/") if path != self.root else "")
            if len(moved) > MAX_PENDING:
                lossy = True
        for old in leaving.values():  # moved out of the tree: its watches would report from outside it
            self._forget(old)
        return None if lossy else moved

    def _under(self, top: str) -> list[tuple[int, str]]:
        inner = top.rstrip(os.sep) + os.sep
        return [(wd, p) for wd, p in self._paths.items() if p == top or p.startswith(inner)]

    def _rename(self, old: str, new: str) -> None:
        for wd, p in self._under(old):
            moved = new + p[len(old) :]
            self._folders.discard(p)
            self._paths[wd] = moved
            self._folders.add(moved)

    def _forget(self, top: str) -> None:
        for wd, p in self._under(top):
            self._paths.pop(wd, None)
            self._folders.discard(p)
            try:
                self._queue.rm_watch(wd)
            except OSError:
                pass

    def _open(self) -> None:
        from inotify_simple import INotify

        _bind_libc()
        self._drop()
        try:
            self._queue = INotify(nonblocking=True)
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                raise WatchLimit(exc.errno, "no inotify instance left") from None
            raise
        self._paths, self._folders = {}, set()
        self._root_id = identity(self.root)
        self._root_wd = self._add(self.root, root=True)
        self._add_tree(self.root, top_added=True)

    def _add(self, folder: str, root: bool = False) -> int:
        try:
            wd = int(self._queue.add_watch(folder, MASK & ~IN_DONT_FOLLOW if root else MASK))
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise WatchLimit(exc.errno, "inotify's watch limit is reached (fs.inotify.max_user_watches)") from None
            if root:
                raise
            return -1  # unreadable, gone or not a folder: what the walk cannot read either
        self._paths[wd] = folder
        self._folders.add(folder)
        return wd

    def _add_tree(self, top: str, top_added: bool = False) -> None:
        """Watch ``top`` and every folder below it (symlinks are not followed: their targets inside the
        tree are watched where they are)."""
        if not top_added and self._add(top) < 0:
            return
        stack = [top]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    subs = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for sub in subs:
                if self._add(sub) >= 0:
                    stack.append(sub)

    def _rewatch(self) -> None:
        """Every watch afresh on the folder now at the root's path, or none until there is one."""
        self._drop()
        if not os.path.isdir(self.root):
            return
        try:
            self._open()
            self._lost_root = False
        except Exception as exc:  # noqa: BLE001
            log.info("cannot watch %s again (%s); checking the files before each search instead", self.root, exc)
            self._drop()

    def _drop(self) -> None:
        queue, self._queue = self._queue, None
        self._paths, self._folders = {}, set()
        if queue is not None:
            closer = threading.Thread(target=_close, args=(queue,), name="codepith-unwatch", daemon=True)
            with _closing_lock:
                _closing[:] = [c for c in _closing if c.is_alive()]  # a long-lived server rewatches often
                _closing.append(closer)
                try:
                    closer.start()
                except RuntimeError:  # no thread to be had (interpreter ending, a thread limit): wait then
                    _closing.remove(closer)
                    _close(queue)

    def close(self) -> None:
        """Stop watching; ``take`` answers None from now on."""
        with self._lock:
            self._lost_root = False
            self._drop()

    stop = close


_closing: list[threading.Thread] = []  # queues being closed off the caller's path (see _close)
_closing_lock = threading.Lock()


def settle_closes() -> int:
    """Wait for the queues being closed (a process about to fork must have no other thread); returns how
    many threads are left. Not worth waiting for where other threads run anyway."""
    with _closing_lock:
        _closing[:] = [c for c in _closing if c.is_alive()]
        closers = list(_closing)
        if threading.active_count() - len(closers) == 1:
            _closing.clear()
        else:
            closers = []
    for closer in closers:
        closer.join()
    return threading.active_count()


def _close(queue: Any) -> None:
    """Close an inotify queue off the caller's path: the kernel's close waits for an RCU grace period
    (4-16 ms measured here, one close in three) before it returns once it has held a watch, and a
    dropped index or a rewatch has no reason to wait for it. Nothing is read from the queue by then."""
    try:
        queue.close()
    except OSError:
        pass
