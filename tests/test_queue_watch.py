"""The inotify queue read in place (files/queue_watch.py): every change made before a ``take`` is in its
answer, with no thread and no barrier; what it cannot vouch for is None, never a stale answer."""

from __future__ import annotations

import errno
import os
import shutil
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
