"""The inotify queue read in place (files/queue_watch.py): every change made before a ``take`` is in its
answer, with no thread and no barrier; what it cannot vouch for is None, never a stale answer."""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from conftest import write

from codepith.files import queue_watch
from codepith.files.queue_watch import QueueWatcher

pytestmark = pytest.mark.skipif(not queue_watch.available(), reason="inotify is Linux's")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, {"a.py": "a = 1\n", "pkg/b.py": "b = 2\n", "pkg/deep/c.py": "c = 3\n"})
    return root


@pytest.fixture
def watcher(tree: Path):  # type: ignore[no-untyped-def]
    w = QueueWatcher(tree)
    assert w.start()
    yield w
    w.close()


def test_nothing_moved_is_an_empty_answer_and_each_change_is_in_the_next(tree: Path, watcher: QueueWatcher) -> None:
    assert watcher.take() == set()
    (tree / "pkg/deep/c.py").write_text("c = 4\n")  # an edit in place, two folders down
    assert watcher.take() == {"pkg/deep/c.py"}
    assert watcher.take() == set()
    (tree / "a.py").unlink()
    (tree / "pkg/new.py").write_text("n = 1\n")
    os.chmod(tree / "pkg/b.py", 0o600)
    assert watcher.take() == {"a.py", "pkg/new.py", "pkg/b.py"}


def test_a_folder_made_is_watched_before_its_paths_are_reported(tree: Path, watcher: QueueWatcher) -> None:
    (tree / "fresh/inner").mkdir(parents=True)
    (tree / "fresh/inner/x.py").write_text("x = 1\n")  # before the watch: found by the walk of "fresh"
    assert "fresh" in (watcher.take() or set())
    (tree / "fresh/inner/y.py").write_text("y = 1\n")  # after it: reported by name
    assert watcher.take() == {"fresh/inner/y.py"}


def test_a_folder_moved_within_the_tree_reports_its_new_paths(tree: Path, watcher: QueueWatcher) -> None:
    os.rename(tree / "pkg", tree / "lib")
    assert watcher.take() == {"pkg", "lib"}
    (tree / "lib/deep/c.py").write_text("c = 5\n")
    assert watcher.take() == {"lib/deep/c.py"}, "the watches under a moved folder keep their old names"


def test_a_folder_moved_out_of_the_tree_is_no_longer_reported(
    tree: Path, tmp_path: Path, watcher: QueueWatcher
) -> None:
    os.rename(tree / "pkg", tmp_path / "away")
    assert watcher.take() == {"pkg"}
    (tmp_path / "away/deep/c.py").write_text("c = 6\n")
    assert watcher.take() == set(), "a change outside the tree was reported as the tree's"


def test_a_full_queue_answers_none_and_watching_goes_on(
    tree: Path, watcher: QueueWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inotify_simple import Event

    real = watcher._queue.read
    overflowed = [[Event(-1, queue_watch.IN_Q_OVERFLOW, 0, "")]]

    def read(timeout: int | None = None) -> list[Event]:
        return overflowed.pop() if overflowed else real(timeout=timeout)

    monkeypatch.setattr(watcher._queue, "read", read)
    (tree / "a.py").write_text("a = 2\n")
    assert watcher.take() is None, "events were lost: only a check of the tree can tell what moved"
    assert watcher.alive
    (tree / "a.py").write_text("a = 3\n")
    assert watcher.take() == {"a.py"}


def test_a_root_deleted_and_made_again_is_watched_again(tree: Path, watcher: QueueWatcher) -> None:
    shutil.rmtree(tree)
    assert watcher.take() is None
    write(tree, {"again.py": "g = 1\n"})
    assert watcher.take() is None  # the new folder: watched from here, checked this once
    (tree / "again.py").write_text("g = 2\n")
    assert watcher.take() == {"again.py"}


def test_no_watch_left_means_no_watcher(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inotify_simple import INotify

    from codepith.files.watch import watch_tree

    def full(self: object, path: object, mask: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(INotify, "add_watch", full)
    assert watch_tree(tree) is None, "a partly watched tree would miss changes: check stats instead"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_watches_with_its_own_queue(tree: Path, watcher: QueueWatcher) -> None:
    pid = os.fork()
    if pid == 0:  # the child: the parent's queue is not its to read
        code = 1
        try:
            first = watcher.take()
            (tree / "a.py").write_text("a = 7\n")
            code = 0 if first is None and watcher.take() == {"a.py"} else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert watcher.take() == {"a.py"}, "the parent sees the child's edit in its own queue"


def test_closing_does_not_wait_for_the_kernel_to_let_the_queue_go(tree: Path, watcher: QueueWatcher) -> None:
    """The kernel's close of an inotify queue can sleep for an RCU grace period: a dropped index must not."""
    queue = watcher._queue
    released, closed = threading.Event(), threading.Event()
    real_close = queue.close

    def slow_close() -> None:  # a close the kernel holds up until told
        released.wait(10)
        real_close()
        closed.set()

    queue.close = slow_close
    stopper = threading.Thread(target=watcher.close)
    stopper.start()
    stopper.join(5)
    try:
        assert not stopper.is_alive(), "close waited for the queue's own close"
        assert watcher.take() is None and not watcher.alive
    finally:
        released.set()
    assert closed.wait(5), "the queue is closed all the same"


def test_a_queue_still_closing_does_not_keep_the_next_build_from_forking(
    monkeypatch: pytest.MonkeyPatch, forkable: None, tree: Path, watcher: QueueWatcher
) -> None:
    from codepith.index.forking import can_fork

    monkeypatch.delenv("CODEPITH_FORK", raising=False)
    if threading.active_count() != 1:
        pytest.skip("another thread runs in this test process")
    queue = watcher._queue
    real_close = queue.close

    def slow_close() -> None:
        time.sleep(0.2)
        real_close()

    queue.close = slow_close
    watcher.close()
    assert threading.active_count() == 2, "the queue is closing on a thread of its own"
    assert can_fork(), "a fork waits for the close rather than giving up the second core"
    assert threading.active_count() == 1 and queue.closed


def test_a_queue_is_closed_in_place_when_no_thread_can_start(
    tree: Path, watcher: QueueWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = watcher._queue

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    watcher.close()  # raises nothing
    assert queue.closed and watcher.take() is None
    assert not any(c.is_alive() for c in queue_watch._closing), "no closer is left to wait for"


def test_closers_are_not_kept_once_done(tree: Path) -> None:
    for _ in range(20):  # a server that rewatches all day
        w = QueueWatcher(tree)
        assert w.start()
        w.close()
        for closer in list(queue_watch._closing):
            closer.join(5)
    assert len(queue_watch._closing) <= 1, "only the newest closer, if any, is remembered"
