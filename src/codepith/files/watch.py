"""Watching a tree so freshness costs what changed: a long-lived index applies only the paths that
moved since its last answer, instead of checking every file before each one.

``watchfiles`` (the Rust ``notify`` crate over inotify, FSEvents or ReadDirectoryChangesW) collects the
events on its own thread. ``take`` drains them behind a barrier: it touches a sentinel file in a
private folder watched by the same watcher and returns once the sentinel's event has come through.
One event queue carries both, in order, so every change made before ``take`` was called (an edit
saved a moment ago) is in its answer: a watched index is never staler than a stat check. The barrier
costs tens of microseconds.

When the watcher cannot vouch for the tree (it failed to start, e.g. the inotify watch limit; its
backend failed later; the barrier timed out; too many paths to list), ``take`` returns None and the
caller checks the tree itself: a broken watcher costs speed, never a stale answer.

It sits with files/ (not service/, where house.md maps "watching") because the public Index takes
``watch=True`` too, and api.py may not import from the floor above it; it knows nothing of indexes,
only which paths moved. service/ decides which indexes are watched.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from typing import Any

from . import queue_watch
from .build_output import tag_folder
from .source import identity

log = logging.getLogger("codepith")

BARRIER_SECONDS = 2.0  # the sentinel not through by then (an overloaded machine): check the tree instead
MAX_PENDING = 50_000  # more changed paths than this: a walk is cheaper than judging each
MAX_RESTARTS = 3  # a backend that keeps failing is given up: stat checks from then on
_INHERITED: list[Any] = []  # a forked child's copies of its parent's backends: never closed (their thread is not here)


class TreeWatcher:
    """Paths that moved under one root since the last ``take``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self._lock = threading.RLock()  # close() may come from another thread mid-take, or from take
        self._notify: Any = None
        self._folder: str | None = None
        self._sentinel = ""
        self._barriers = 0
        self._restarts = 0
        self._pid = os.getpid()
        self._lost_root = False  # the root itself was removed or moved away: its watch went with it
        self._root_id: tuple[int, int] | None = None  # (device, inode) of the folder watched as the root

    def start(self) -> bool:
        """Begin watching; False (and a logged reason) when the platform's watcher is unavailable.

        The watches are in place when this returns, so nothing that happens afterwards is missed.
        """
        try:
            from watchfiles._rust_notify import RustNotify

            self._folder = _sentinel_folder()
            self._root_id = identity(self.root)
            self._notify = RustNotify([self.root, self._folder], False, False, 0, True, True)
        except Exception as exc:  # noqa: BLE001 - any failure means: check the tree instead
            log.warning("cannot watch %s (%s); checking the files before each search instead", self.root, exc)
            self.close()
            return False
        return True

    @property
    def alive(self) -> bool:
        return self._notify is not None

    def take(self) -> set[str] | None:
        """Root-relative paths that moved since the last call (every change made before this call
        included), or None when the watcher cannot vouch for the tree: then check the tree itself."""
        if self._pid != os.getpid():
            self._adopt()
            return None  # what moved between the fork and this fresh watcher: the caller's check finds it
        with self._lock:
            if self._notify is None:
                if self._lost_root:
                    self._rewatch()  # a root made again: watched from here, checked this once
                return None
            try:
                moved = self._drain()
                if identity(self.root) != self._root_id:
                    # Not the folder watched: a folder above the root was moved away (its watches went with
                    # it, sending no event for the root) and the path made again, or the root replaced.
                    self._lost_root = True
                if self._lost_root:
                    # A watch follows the folder, not its name: a root deleted and made again (or moved away
                    # and replaced) is watched by nobody. A fresh backend watches whatever is there now, and
                    # this look checks the tree; with no root yet, the next look tries again.
                    self._rewatch()
                    return None
                return moved
            except KeyboardInterrupt:
                self.close()  # the events drained so far are lost: no longer vouch for the tree
                raise
            except Exception as exc:  # noqa: BLE001
                # e.g. a file name that is not UTF-8 (the backend's error sticks): the events of this
                # batch are lost, so the caller checks the tree; a fresh backend watches from here on.
                if self._restarts < MAX_RESTARTS and self._open():
                    self._restarts += 1
                    log.info("restarted the watcher of %s after: %s", self.root, exc)
                    return None
                log.warning("stopped watching %s (%s); checking the files before each search instead", self.root, exc)
                self.close()
                return None

    def _rewatch(self) -> None:
        """After the root itself went: a backend on the folder now at its path, or none until there is
        one (the backend does not fail on a missing path; it would watch nothing)."""
        now = identity(self.root)  # before the backend starts: a swap in between is caught by the next look
        if now is not None and os.path.isdir(self.root) and self._open():
            self._lost_root = False
            self._root_id = now
        else:
            self._drop()

    def _drop(self) -> None:
        old, self._notify = self._notify, None
        if old is not None:
            try:
                old.close()
            except Exception:  # noqa: BLE001, S110 - broken already
                pass

    def _open(self) -> bool:
        """A new backend watching the root and the sentinel folder (the old one, if any, closed)."""
        from watchfiles._rust_notify import RustNotify

        self._drop()
        if self._folder is None:
            return False
        try:
            self._notify = RustNotify([self.root, self._folder], False, False, 0, True, True)
        except Exception:  # noqa: BLE001
            return False
        return True

    def _drain(self) -> set[str] | None:
        # A new sentinel name each time: an older sentinel's event still queued cannot pass for this one.
        self._barriers += 1
        sentinel = os.path.join(self._folder or "", f"barrier-{self._barriers}")
        with open(sentinel, "wb"):
            pass
        if self._sentinel:
            try:
                os.unlink(self._sentinel)
            except OSError:
                pass
        self._sentinel = sentinel
        deadline = time.monotonic() + BARRIER_SECONDS
        own = os.path.join(self._folder or "", "")
        moved: set[str] = set()
        through = lossy = False
        while not through:
            left = int((deadline - time.monotonic()) * 1000)
            got = self._notify.watch(10, 0, max(1, left), None) if left > 0 else "timeout"
            if got == "signal":
                raise KeyboardInterrupt
            if isinstance(got, str):  # the sentinel never came through: this backend cannot vouch
                raise TimeoutError(f"no event from the watcher within {BARRIER_SECONDS:.0f} s")
            for _, path in got:
                if path == self._sentinel:
                    through = True
                elif path == self._folder or path.startswith(own):
                    continue  # the sentinel folder inside the tree (TMPDIR there): ours, not the tree's
                elif path == self.root:
                    self._lost_root = True
                elif path.startswith(self._prefix) and not lossy:
                    moved.add(path[len(self._prefix) :].replace(os.sep, "/"))
                    if "\ufffd" in path:
                        lossy = True  # a name that is not UTF-8 arrives mangled: only a check finds it
            if len(moved) > MAX_PENDING:
                lossy = True
        return None if lossy else moved

    def _adopt(self) -> None:
        """In a forked child: the parent's backend (whose thread the child lacks) and its sentinel folder
        stay the parent's, untouched; the child watches with its own from here on."""
        _INHERITED.append(self._notify)
        self._lock = threading.RLock()
        self._notify, self._folder, self._sentinel = None, None, ""
        self._pid = os.getpid()
        self.start()

    def close(self) -> None:
        """Stop watching; ``take`` answers None from now on."""
        if self._pid != os.getpid():  # a forked child closing what it never opened: leave it to the parent
            _INHERITED.append(self._notify)
            self._notify, self._folder = None, None
            return
        with self._lock:
            notify, self._notify = self._notify, None
            if notify is not None:
                try:
                    notify.close()
                except Exception:  # noqa: BLE001, S110 - already closed or broken: nothing left to release
                    pass
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    stop = close


def _sentinel_folder() -> str:
    """A private folder for the barrier's sentinel files, tagged as a cache folder: when ``TMPDIR`` lies
    inside the watched tree, a walk skips it (a stat check or another process's walk listed its sentinel
    files), and ``_drain`` never reports what happens in it."""
    folder = tempfile.mkdtemp(prefix="codepith-watch-")
    tag_folder(folder)
    return folder


Watcher = TreeWatcher | queue_watch.QueueWatcher


def cheap() -> bool:
    """Whether ``watch_tree`` gives a watcher that costs less than a stat check at every size of tree
    (the inotify queue read in place), not one whose barrier costs more than the stats of a small one."""
    return queue_watch.available()


def watch_tree(root: str | os.PathLike[str]) -> Watcher | None:
    """A started watcher for ``root`` (the inotify queue where there is one, else watchfiles), or None
    when the tree cannot be watched."""
    if queue_watch.available():
        queued = queue_watch.QueueWatcher(root)
        return queued if queued.start() else None  # watchfiles would meet the same limits
    watcher = TreeWatcher(root)
    return watcher if watcher.start() else None
