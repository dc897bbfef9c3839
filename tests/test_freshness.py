"""Freshness that costs what changed: a watcher's change set applied path by path equals a full walk,
ignored folders cost nothing, rule changes walk, and a failed watcher falls back to the stat check."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import write

import codepith
from codepith.index import build
from codepith.index.corpus import Corpus, CorpusPart
from codepith.store.view import View

FRESH = "def brand_new_feature():\n    return 1\n"
TREE = {
    "app/core.py": "def core_entry():\n    return 1\n",
    "app/util.py": "def util_helper(x):\n    return x * 2\n",
    "pkg/mod.py": "def pkg_function():\n    return 'pkg'\n",
    "pkg/deep/leaf.py": "def deep_leaf():\n    return 'leaf'\n",
    "notes/readme.txt": "only a text file here\n",
    "gen/out.py": "def generated_output():\n    return 0\n",
    "node_modules/lib/index.js": "export function fromDeps() {}\n",
    "huge.py": "def huge_blob():\n    pass\n" + "# padding\n" * 400,
    "debug.py": "def debug_only():\n    pass\n",
    ".gitignore": "gen/\ndebug.py\n",
    ".git/info/attributes": "# a checkout's .git, without info/exclude yet\n",
    "web/dist/app.js": "export function bundledApp() {}\n",
    "web/main.js": "export function webMain() {}\n",
}


@pytest.fixture(params=["queue", "watchfiles"])
def watcher_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each watched behaviour with both watchers: the inotify queue read in place, and watchfiles (the
    watcher where there is no inotify, and the one the queue falls back to nowhere: see watch.watch_tree)."""
    from codepith.files import queue_watch

    monkeypatch.setattr(queue_watch, "ENABLED", True)
    if request.param == "queue" and not queue_watch.available():
        pytest.skip("no inotify queue here")
    monkeypatch.setattr(queue_watch, "ENABLED", request.param == "queue")
    return str(request.param)


@pytest.fixture
def watchfiles_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test of watchfiles' own failures (its barrier, its backend)."""
    from codepith.files import queue_watch

    monkeypatch.setattr(queue_watch, "ENABLED", False)


def _state(index: codepith.Index) -> tuple[object, ...]:
    """What a refresh must get right: each file's record and its chunks in the store's latest
    generation (read afresh, not through the index's open corpus), and the skip counts."""
    data, st = index._data[0], index._stores[0]
    chunks: dict[str, list[tuple[int, int, str]]] = {}
    for c in Corpus([CorpusPart(View(st), "")], data.dims).chunks:
        chunks.setdefault(c.file_path, []).append((c.start_line, c.end_line, c.content))
    assert set(chunks) <= {rel for rel, r in data.files.items() if not r.skip}, "chunks of a file no record holds"
    files = {rel: (r.digest, r.skip, chunks.get(rel, [])) for rel, r in data.files.items()}
    return files, data.skipped().counts


def _full(root: Path, model) -> codepith.Index:  # type: ignore[no-untyped-def]
    return codepith.Index.from_path(root, model=model, use_cache=False)


def _refresh(index: codepith.Index, changed: set[str] | None = None) -> build.RefreshStats:
    """One look at the tree through the build layer, as Index.refresh does for a watched root."""
    return build.refresh(index._data[0], index.model, index._stores[0], changed=changed)


def _rename(root: Path, a: str, b: str) -> set[str]:
    (root / b).parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / a, root / b)
    return {a, b}


# Each change edits the tree and returns the paths a watcher would report (the paths it touched).
CHANGES: dict[str, tuple[Callable[[Path], set[str]], bool]] = {
    # name: (change, whether a full walk is needed)
    "edit-in-place": (
        lambda r: (r / "app/core.py").write_text("def core_exit():\n    return 9\n") and {"app/core.py"},
        False,
    ),
    "add": (lambda r: (r / "app/new.py").write_text("def brand_new():\n    pass\n") and {"app/new.py"}, False),
    "add-text-skipped": (lambda r: (r / "app/notes.txt").write_text("words\n") and {"app/notes.txt"}, False),
    "delete": (lambda r: (r / "app/util.py").unlink() or {"app/util.py"}, False),
    "delete-skipped": (lambda r: (r / "notes/readme.txt").unlink() or {"notes/readme.txt"}, False),
    "rename-file": (lambda r: _rename(r, "app/util.py", "app/tools.py"), False),
    "rename-folder": (lambda r: _rename(r, "pkg", "lib"), False),
    "move-into-ignored": (lambda r: _rename(r, "pkg/mod.py", "gen/mod.py"), False),
    "new-folder": (
        lambda r: (
            write(r, {"fresh/a.py": "def fresh_a():\n    pass\n", "fresh/sub/b.py": "def fresh_b():\n    pass\n"})
            or {"fresh", "fresh/a.py", "fresh/sub", "fresh/sub/b.py"}
        ),
        False,
    ),
    "delete-folder": (
        lambda r: shutil.rmtree(r / "pkg") or {"pkg", "pkg/mod.py", "pkg/deep", "pkg/deep/leaf.py"},
        False,
    ),
    "shrink-too-large": (lambda r: (r / "huge.py").write_text("def huge_blob():\n    pass\n") and {"huge.py"}, False),
    "grow-too-large": (lambda r: (r / "app/core.py").write_text("# x\n" * 1000) and {"app/core.py"}, False),
    "file-becomes-folder": (
        lambda r: (
            (r / "app/util.py").unlink()
            or write(r, {"app/util.py/x.py": "def inner():\n    pass\n"})
            or {"app/util.py", "app/util.py/x.py"}
        ),
        False,
    ),
    "in-ignored-folder": (lambda r: write(r, {"gen/more.py": "def more():\n    pass\n"}) or {"gen/more.py"}, False),
    "in-node-modules": (lambda r: write(r, {"node_modules/lib/b.js": "x\n"}) or {"node_modules/lib/b.js"}, False),
    "in-git": (lambda r: write(r, {".git/index": "x"}) or {".git/index"}, False),
    "new-ignored-folder": (
        lambda r: write(r, {".tox/app.py": "def built():\n    pass\n"}) or {".tox", ".tox/app.py"},
        False,
    ),
    "gitignore-edit": (lambda r: (r / ".gitignore").write_text("# nothing\n") and {".gitignore"}, True),
    "codepithignore-new": (lambda r: (r / ".codepithignore").write_text("app/\n") and {".codepithignore"}, True),
    "build-marker-appears": (lambda r: (r / "pkg/CMakeCache.txt").write_text("x\n") and {"pkg/CMakeCache.txt"}, False),
    "manifest-beside-dist": (lambda r: (r / "web/package.json").write_text("{}\n") and {"web/package.json"}, False),
    "git-info-exclude": (
        lambda r: write(r, {".git/info/exclude": "app/\n"}) or {".git/info/exclude"},
        True,
    ),
    "virtualenv-appears": (lambda r: (r / "pkg/pyvenv.cfg").write_text("home = /usr\n") and {"pkg/pyvenv.cfg"}, True),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_change_set_equals_a_full_walk(tmp_path: Path, model, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "2000")
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    change, walks = CHANGES[name]
    paths = change(tmp_path)
    stats = _refresh(index, paths)
    assert stats.walked == walks
    full = _full(tmp_path, model)
    assert _state(index) == _state(full)
    records = full._data[0]
    assert (stats.files, stats.chunks) == (sum(1 for r in records.files.values() if not r.skip), records.n_chunks)
    if name.startswith(("in-", "new-ignored")):
        assert not stats.dirty, "a change the walk never sees costs nothing"
    # and the stat shortcut stays safe afterwards: a later unwatched check still sees the truth
    (tmp_path / "app/late.py").write_text("def late_arrival():\n    pass\n")
    _refresh(index)
    assert _state(index) == _state(_full(tmp_path, model))


def test_symlinked_region_walks(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, {"real/a.py": "def real_a():\n    pass\n", "other/b.py": "def other_b():\n    pass\n"})
    os.symlink(tmp_path / "real", tmp_path / "alias")
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    write(tmp_path, {"real/c.py": "def real_c():\n    pass\n"})
    stats = _refresh(index, {"real/c.py"})
    assert stats.walked, "a link's target changed: only a walk knows what the link shows"
    assert _state(index) == _state(_full(tmp_path, model))
    write(tmp_path, {"other/d.py": "def other_d():\n    pass\n"})
    assert not _refresh(index, {"other/d.py"}).walked
    assert _state(index) == _state(_full(tmp_path, model))


def test_many_changes_walk_once(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from codepith.index import changes

    write(tmp_path, {f"m/f{i}.py": f"def f_{i}():\n    return {i}\n" for i in range(changes.MAX_REGIONS + 1)})
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    for i in range(changes.MAX_REGIONS + 1):
        (tmp_path / f"m/f{i}.py").write_text(f"def g_{i}():\n    return {i}\n")
    stats = _refresh(index, {f"m/f{i}.py" for i in range(changes.MAX_REGIONS + 1)})
    assert stats.walked and stats.changed == changes.MAX_REGIONS + 1


# -- the watcher, for real ----------------------------------------------------------------------------


def _symbols(index: codepith.Index, query: str, path: str | None = None) -> set[str]:
    hits = index.search(query, top_k=20, refresh=False)
    return {s for r in hits for s in r.chunk.symbols if path is None or r.chunk.file_path == path}


@pytest.mark.usefixtures("watcher_kind")
def test_watched_index_applies_only_what_moved(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    try:
        assert index.watching
        # each change is in the very next refresh: the watcher's barrier lets nothing lag behind
        (tmp_path / "app/core.py").write_text("def core_exit():\n    return 9\n")
        stats = index.refresh()[0]
        assert not stats.walked and stats.changed == 1
        assert "core_exit" in _symbols(index, "core exit")
        write(tmp_path, {"lib2/x.py": "def second_lib():\n    pass\n"})
        stats = index.refresh()[0]
        assert not stats.walked and stats.added == 1
        assert "second_lib" in _symbols(index, "second lib")
        os.rename(tmp_path / "pkg", tmp_path / "moved")
        stats = index.refresh()[0]
        assert not stats.walked and stats.added == 2 and stats.removed == 2
        assert "deep_leaf" in _symbols(index, "deep leaf", "moved/deep/leaf.py")
        (tmp_path / "app/util.py").unlink()
        stats = index.refresh()[0]
        assert not stats.walked and stats.removed == 1
        assert "util_helper" not in _symbols(index, "util helper")
        (tmp_path / ".gitignore").write_text("# nothing ignored now\n")
        stats = index.refresh()[0]
        assert stats.walked, "an ignore file changed: the tree is walked again"
        assert "generated_output" in _symbols(index, "generated output")
        assert _state(index) == _state(_full(tmp_path, model))
        # churn where the walk never looks costs no work at all
        write(tmp_path, {"node_modules/lib/more.js": "x\n", ".git/objects/ab": "x", ".tox/bundle.py": "x = 1\n"})
        stats = index.refresh()[0]
        assert not stats.dirty and not stats.walked
        stats = index.refresh()[0]
        assert not stats.dirty and not stats.walked
    finally:
        index.close()
    assert not index.watching


@pytest.mark.usefixtures("watcher_kind")
def test_watched_change_seen_while_another_process_builds_is_applied_after(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from filelock import FileLock

    root = tmp_path / "repo"
    write(root, TREE)
    index = codepith.Index.from_path(root, model=model, watch=True, cache_dir=tmp_path / "cache")
    other = FileLock(str(index._stores[0].folder / "build.lock"))  # another builder, as another process holds it
    try:
        assert index.watching
        other.acquire()
        (root / "app/core.py").write_text("def core_while_busy():\n    return 9\n")
        stats = index.refresh()[0]
        assert stats.busy and not stats.dirty, "the last complete generation is searched meanwhile"
        assert "core_entry" in _symbols(index, "core entry")
        # ... and a search says so (it said nothing: an agent took the stale answer for the tree's)
        notes = index.search_notes("core entry")
        assert any(n.startswith("another process is updating the index of ") for n in notes), notes
        other.release()
        stats = index.refresh()[0]  # the watcher's paths from the busy look are not lost
        assert not index.search_notes("core entry")
        assert not stats.walked and stats.changed == 1
        assert "core_while_busy" in _symbols(index, "core while busy")
        assert _state(index) == _state(_full(root, model))
    finally:
        if other.is_locked:
            other.release()
        index.close()


@pytest.mark.usefixtures("watcher_kind")
def test_undecodable_name_under_a_watcher_stays_right(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    try:
        with open(os.path.join(os.fsencode(tmp_path), b"app", b"odd\xffname.py"), "w") as fh:
            fh.write("def oddly_named():\n    pass\n")
        stats = index.refresh()[0]
        assert stats.added == 1, "the watcher cannot name the file: the tree is checked instead"
        assert "oddly_named" in _symbols(index, "oddly named")
        # reading that file trips the backend again, so it is restarted a few times, then given up;
        # answers stay right throughout
        for i in range(5):
            (tmp_path / "app/core.py").write_text(f"def core_exit_{i}():\n    return 9\n")
            assert index.refresh()[0].changed == 1
            assert f"core_exit_{i}" in _symbols(index, "core exit")
    finally:
        index.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.parametrize("watch", [False, True])
def test_a_root_that_went_away_is_said_so_watched_or_not(tmp_path: Path, model, watch: bool) -> None:  # type: ignore[no-untyped-def]
    from codepith.errors import PathError

    write(tmp_path / "repo", TREE)
    index = codepith.Index.from_path(tmp_path / "repo", model=model, watch=watch)
    try:
        assert index.search("core exit")
        (tmp_path / "repo").rename(tmp_path / "moved")  # a watcher is not told of its own root's move
        with pytest.raises(PathError, match="no such folder"):
            index.search("core exit")
        (tmp_path / "moved").rename(tmp_path / "repo")
        assert index.search("core exit")
    finally:
        index.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.parametrize("how", ["made-again", "replaced", "gone-then-back"])
def test_a_root_deleted_and_made_again_is_watched_again(tmp_path: Path, model, how: str) -> None:  # type: ignore[no-untyped-def]
    """A watch follows the folder, not its name: the root removed and made again (a checkout recreated,
    ``rm -rf && cp -r``) was watched by nobody, so the index kept its old files for good."""
    from codepith.errors import PathError

    root = tmp_path / "repo"
    write(root, TREE)
    index = codepith.Index.from_path(root, model=model, watch=True, use_cache=False)
    try:
        assert index.watching and "util_helper" in _symbols(index, "util helper")
        if how == "replaced":
            root.rename(tmp_path / "old")
        else:
            shutil.rmtree(root)
        if how == "gone-then-back":
            with pytest.raises(PathError, match="no such folder"):
                index.search("util helper")
        write(root, {**{k: v for k, v in TREE.items() if k != "app/util.py"}, "app/fresh.py": FRESH})
        index.refresh()
        assert "brand_new_feature" in _symbols(index, "brand new feature")
        assert "util_helper" not in _symbols(index, "util helper")
        assert _state(index) == _state(_full(root, model))
        (root / "app/core.py").write_text("def core_after_remake():\n    return 9\n")  # watched again
        stats = index.refresh()[0]
        assert index.watching and not stats.walked and stats.changed == 1
        assert "core_after_remake" in _symbols(index, "core after remake")
    finally:
        index.close()


@pytest.mark.usefixtures("watchfiles_only")
def test_failed_watcher_falls_back_to_the_stat_check(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import watchfiles._rust_notify as rust

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(rust, "RustNotify", refuse)
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    assert not index.watching
    (tmp_path / "app/core.py").write_text("def core_exit():\n    return 9\n")
    names = {s for r in index.search("core exit", top_k=20) for s in r.chunk.symbols}
    assert "core_exit" in names, "no watcher: the next search checks the files itself"


@pytest.mark.usefixtures("watchfiles_only")
@pytest.mark.parametrize("how", ["backend-closed", "barrier-lost"])
def test_watcher_failing_later_falls_back(tmp_path: Path, tmp_path_factory, model, monkeypatch, how: str) -> None:  # type: ignore[no-untyped-def]
    from codepith.files import watch

    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    watcher = index._watchers[0]
    assert watcher is not None and watcher.alive
    monkeypatch.setattr(watch, "MAX_RESTARTS", 0)  # (a restart is tested with an undecodable name)
    if how == "backend-closed":
        watcher._notify.close()  # the platform watcher goes away under it: its next wait raises
    else:  # the sentinel's event never arrives (a backend that drops events)
        monkeypatch.setattr(watch, "BARRIER_SECONDS", 0.2)
        monkeypatch.setattr(watch.TreeWatcher, "_open", lambda self: False)
        watcher._folder = str(tmp_path_factory.mktemp("nowhere"))  # the sentinel lands where nobody watches
    (tmp_path / "app/core.py").write_text("def core_exit():\n    return 9\n")
    names = {s for r in index.search("core exit", top_k=20) for s in r.chunk.symbols}
    assert "core_exit" in names
    assert not index.watching


# -- a new process: the saved freshness state spares it the walk -----------------------------------


def _age(root: Path, seconds: int = 600) -> None:
    past = time.time_ns() - seconds * 1_000_000_000
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames + dirnames:
            os.utime(os.path.join(dirpath, n), ns=(past, past), follow_symlinks=False)
    os.utime(root, ns=(past, past))


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_reloaded_index_checks_without_walking_and_misses_nothing(
    tmp_path: Path, model, monkeypatch, name: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "2000")
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)
    codepith.Index.from_path(root, model=model)  # builds and saves, as `codepith index` would
    again = codepith.Index.from_path(root, model=model)  # a new CLI process: loads, checks, no walk
    assert not again.last_stats[0].walked and not again.last_stats[0].dirty
    change, _ = CHANGES[name]
    change(root)
    later = codepith.Index.from_path(root, model=model)
    assert _state(later) == _state(_full(root, model))
    assert [c for c in later.chunks] == [c for c in codepith.Index.from_path(root, model=model, use_cache=False).chunks]
    assert np.isfinite(later.corpus.vectors).all()


TOP_CHANGES: dict[str, Callable[[Path], object]] = {
    "new-file": lambda r: (r / "tool.py").write_text("def tool_entry():\n    pass\n"),
    "new-folder": lambda r: write(r, {"fresh/a.py": "def fresh_a(): pass\n", "fresh/s/b.py": "def fresh_b(): pass\n"}),
    "delete-file": lambda r: (r / "huge.py").unlink(),
    "delete-folder": lambda r: shutil.rmtree(r / "pkg"),
    "rename-folder": lambda r: os.rename(r / "app", r / "application"),
    "new-ignored-folder": lambda r: write(r, {".tox/x.py": "def built():\n    pass\n"}),
    "delete-ignored-file": lambda r: (r / "debug.py").unlink(),
}


@pytest.mark.parametrize("name", sorted(TOP_CHANGES))
def test_a_change_at_the_top_is_listed_not_walked(tmp_path: Path, model, name: str) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)
    codepith.Index.from_path(root, model=model)
    TOP_CHANGES[name](root)
    later = codepith.Index.from_path(root, model=model)  # a new process: the stat check sees the root move
    assert not later.last_stats[0].walked, "one listing of the root says what came and went"
    assert _state(later) == _state(_full(root, model))
    again = codepith.Index.from_path(root, model=model)  # the root's new stamp (or -1, too recent): no walk
    assert not again.last_stats[0].walked and not again.last_stats[0].dirty
    (root / "late.py").write_text("def late_top():\n    pass\n")  # and the next change at the top is seen
    last = codepith.Index.from_path(root, model=model)
    assert not last.last_stats[0].walked
    assert _state(last) == _state(_full(root, model))
    assert any(c.file_path == "late.py" for c in last.chunks)


def test_stat_check_stays_right_over_a_run_of_edits_in_one_process(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """The stat check's list is kept file by file, not rebuilt after each commit: every later in-place edit,
    new file, edit of that new file and deletion must still be seen, and the list must equal a fresh one."""
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)
    index = codepith.Index.from_path(root, model=model)
    steps: list[tuple[str, Callable[[], object]]] = [
        ("core_edit_one", lambda: (root / "app/core.py").write_text("def core_edit_one():\n    return 2\n")),
        ("core_edit_two", lambda: (root / "app/core.py").write_text("def core_edit_two():\n    return 3\n")),
        ("added_later", lambda: (root / "pkg/added.py").write_text("def added_later():\n    pass\n")),
        ("added_edited", lambda: (root / "pkg/added.py").write_text("def added_edited():\n    pass\n")),
        ("util_edit_once", lambda: (root / "app/util.py").write_text("def util_edit_once(x):\n    return x\n")),
    ]
    for marker, change in steps:
        change()
        hits = index.search(marker, top_k=3)
        assert any(marker in r.chunk.content for r in hits), marker
    (root / "pkg/added.py").unlink()
    assert not any("added_edited" in r.chunk.content for r in index.search("added_edited", top_k=3))
    data = index._data[0]
    assert data.stat_list is not None
    kept = dict(data.stat_list)
    data.stat_list = None
    build.quick_check(data)
    assert kept == data.stat_list
    assert _state(index) == _state(_full(root, model))


def test_which_roots_are_watched_by_default(tmp_path: Path, model, monkeypatch, watcher_kind: str) -> None:  # type: ignore[no-untyped-def]
    """watch=None watches every root with the inotify queue (read in place, it costs less than any stat
    check), and with watchfiles a root once its file count makes a stat of every file cost more than a
    search. The watcher starts after the first look: a change made in between must still be in the next
    answer."""
    from codepith import api

    write(tmp_path, TREE)
    small = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    # a few files: the stat check is cheaper than watchfiles' barrier, not than the queue
    assert small.watching == (watcher_kind == "queue")
    small.close()
    assert not codepith.Index.from_path(tmp_path, model=model, use_cache=False, watch=False).watching
    monkeypatch.setattr(api, "AUTO_WATCH_FILES", 3)
    started = api.watch_tree

    def edit_then_watch(root: str) -> object:  # an edit lands after the first look, before the watches
        (tmp_path / "app/core.py").write_text("def core_between_look_and_watch():\n    return 9\n")
        return started(root)

    monkeypatch.setattr(api, "watch_tree", edit_then_watch)
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    try:
        assert index.watching
        stats = index.refresh()[0]  # the first look since the watches began checks the tree itself
        assert stats.changed == 1
        assert "core_between_look_and_watch" in _symbols(index, "core between look and watch")
        (tmp_path / "app/util.py").write_text("def util_after_watch():\n    return 1\n")
        stats = index.refresh()[0]
        assert stats.changed == 1 and not stats.walked
        assert "util_after_watch" in _symbols(index, "util after watch")
    finally:
        index.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
@pytest.mark.parametrize("watch", [True, False])
def test_an_index_forked_into_a_child_works_on_both_sides(tmp_path: Path, model, watch: bool) -> None:  # type: ignore[no-untyped-def]
    """A server that builds its index before forking its workers (gunicorn --preload, multiprocessing's
    fork): the child's searches see its edits at once (not after the inherited watcher's barrier times
    out, nor with filelock refusing the inherited build lock), and the parent keeps watching afterwards."""
    from codepith.files.watch import BARRIER_SECONDS

    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False, watch=watch)
    try:
        index.search("core entry")
        pid = os.fork()
        if pid == 0:  # the child: report by exit status only, never return into pytest
            code = 1
            try:
                (tmp_path / "app/child.py").write_text("def written_in_child():\n    return 1\n")
                started = time.perf_counter()
                found = "written_in_child" in {s for r in index.search("written in child") for s in r.chunk.symbols}
                quick = time.perf_counter() - started < BARRIER_SECONDS / 2
                index.close()
                code = 0 if found and quick else 3
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        (tmp_path / "app/parent.py").write_text("def written_in_parent():\n    return 2\n")
        assert "written_in_parent" in {s for r in index.search("written in parent") for s in r.chunk.symbols}
        assert index.watching is watch
    finally:
        index.close()


def test_a_large_trees_first_look_checks_its_stats_in_a_child_and_gets_them_right(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process's first look at a large tree stats its files in a forked child while the view
    opens; what the child finds must be what the check finds here, and no child may be left behind."""
    monkeypatch.setattr(build, "CHECK_APART_FROM", 3)  # this small tree counts as large
    cache = tmp_path / "cache"
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)  # a tree written just now has no stat to trust yet: every look would walk it
    codepith.Index.from_path(root, model=model, cache_dir=cache, watch=False)
    started: list[tuple[object, bool]] = []
    real = build.start_quick_check

    def spy(data, st=None):
        got = real(data, st)
        started.append((got, st is not None))
        return got

    monkeypatch.setattr(build, "start_quick_check", spy)
    unchanged = codepith.Index.from_path(root, model=model, cache_dir=cache, watch=False)
    assert started and started[0][0] is not None, "the check did not run apart"
    assert started[0][1], "the child did not read the rows itself, before this process read the table"
    assert not unchanged.last_stats[0].dirty
    # what changed while no process ran: an edit in place, a deletion
    (root / "app/core.py").write_text("def core_renamed_later():\n    return 2\n")
    (root / "pkg/mod.py").unlink()
    data = unchanged._data[0]
    check = real(data)
    assert check is not None
    apart = check()
    assert apart == build.quick_check(data) and apart is not None
    assert {"app/core.py", "pkg/mod.py"} <= apart
    reopened = codepith.Index.from_path(root, model=model, cache_dir=cache, watch=False)
    stats = reopened.last_stats[0]
    assert stats.changed == 1 and stats.removed == 1
    assert "core_renamed_later" in [s for r in reopened.search("core renamed later") for s in r.chunk.symbols]
    assert _state(reopened) == _state(_full(root, model))
    from codepith.index.workers import reap_exited

    assert reap_exited(wait=True) == 0  # the builds' workers said they were done and are reaped by now
    kids = Path(f"/proc/self/task/{os.getpid()}/children").read_text().split()
    assert not kids, [Path(f"/proc/{k}/cmdline").read_bytes() for k in kids]


def test_a_failed_child_check_is_made_here(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "CHECK_APART_FROM", 3)
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)
    index = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "cache", watch=False)
    data = index._data[0]
    (root / "app/util.py").write_text("def util_changed():\n    return 3\n")
    real = build.quick_check
    here = os.getpid()

    def failing_in_child(d):
        if os.getpid() != here:
            raise RuntimeError("the child's check failed")
        return real(d)

    monkeypatch.setattr(build, "quick_check", failing_in_child)
    check = build.start_quick_check(data)
    assert check is not None
    assert check() == real(data) and "app/util.py" in (real(data) or ())  # made again here


def _indexed_as_large(tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """TREE indexed in a cache folder, old enough that a new process checks its stats, and counted as
    large enough that the check runs in a forked child: (root, cache)."""
    monkeypatch.setattr(build, "CHECK_APART_FROM", 3)
    cache, root = tmp_path / "cache", tmp_path / "repo"
    write(root, TREE)
    _age(root)
    codepith.Index.from_path(root, model=model, cache_dir=cache, watch=False)
    return root, cache


def test_a_child_that_read_another_generation_is_not_believed(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child reads the file table through its own connection; a commit between its read and this
    process's makes its answer about another generation, so the check is made again here."""
    from codepith.store.manifest import Store

    root, cache = _indexed_as_large(tmp_path, model, monkeypatch)
    (root / "app/core.py").write_text("def core_seen_anyway():\n    return 5\n")
    real = Store.stat_rows_apart

    def newer_and_unchanged(self):
        generation, rows = real(self)
        now = {rel: os.stat(root / rel) for rel, *_ in rows if (root / rel).exists()}
        return generation + 1, [(rel, now[rel].st_size, now[rel].st_mtime_ns, 0) for rel, *_ in rows if rel in now]

    monkeypatch.setattr(Store, "stat_rows_apart", newer_and_unchanged)
    index = codepith.Index.from_path(root, model=model, cache_dir=cache, watch=False)
    assert index.last_stats[0].changed == 1
    assert "core_seen_anyway" in _symbols(index, "core seen anyway")


@pytest.mark.usefixtures("watcher_kind")
def test_a_watched_index_s_first_look_still_checks_every_stat(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the check begun before the watcher starts and the view opened while it runs, the first look
    must still be the stat check: the watcher saw nothing of what changed before the process began."""
    root, cache = _indexed_as_large(tmp_path, model, monkeypatch)
    (root / "pkg/mod.py").write_text("def pkg_changed_offline():\n    return 6\n")
    index = codepith.Index.from_path(root, model=model, cache_dir=cache, watch=True)
    try:
        assert index.last_stats[0].changed == 1
        assert "pkg_changed_offline" in _symbols(index, "pkg changed offline")
    finally:
        index.close()


# -- the tree changing between a look's listing and its reads ------------------------------------------


def _during_read(
    monkeypatch: pytest.MonkeyPatch, rel: str, before: Callable[[], object], after: Callable[[], object]
) -> list[int]:
    """Run ``before`` just before the build reads ``rel`` and ``after`` just after (once): the tree moving
    between a look's listing and its read of a file."""
    real = build.read_source
    done: list[int] = []

    def racing(path: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if not done and str(path).replace(os.sep, "/").endswith(rel):
            done.append(1)
            before()
            try:
                return real(path, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                after()
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "read_source", racing)
    return done


@pytest.mark.parametrize("watch", [True, False])
def test_a_file_moved_away_while_it_was_read_is_indexed_once_back(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch, watch: bool
) -> None:
    """A folder renamed away and back (a tool's rename dance, a branch switch) while a look read one of its
    files: the read failed, and the file, back with the size and mtime the look had listed, stayed
    "unreadable" for good (a stat check and a watcher's paths alike trusted that stat)."""
    root = tmp_path / "repo"
    write(root, TREE)
    _age(root)
    index = codepith.Index.from_path(root, model=model, watch=watch, use_cache=False)
    try:
        core = root / "app/core.py"
        core.write_text("def core_danced_away():\n    return 4\n")
        past = time.time_ns() - 300 * 1_000_000_000
        os.utime(core, ns=(past, past))  # an old mtime: not racy by age
        done = _during_read(
            monkeypatch,
            "app/core.py",
            lambda: os.rename(root / "app", root / "app-away"),
            lambda: os.rename(root / "app-away", root / "app"),
        )
        index.refresh()
        assert done
        for _ in range(2):  # the look after the dance (a watcher's paths, or the stat check), and one more
            index.refresh()
        assert index._data[0].files["app/core.py"].skip is None
        assert "core_danced_away" in _symbols(index, "core danced away")
        assert _state(index) == _state(_full(root, model))
    finally:
        index.close()


def test_a_link_out_of_the_root_swapped_in_before_a_read_is_never_read(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file replaced by a link to a file outside the root between the listing and the read: the read
    followed the link, and the outside file's text was indexed and shown until the next look."""
    root, outside = tmp_path / "repo", tmp_path / "outside.py"
    write(root, TREE)
    outside.write_text("def leaked_from_outside():\n    return 'private'\n")
    index = codepith.Index.from_path(root, model=model, watch=True, use_cache=False)
    try:
        core = root / "app/core.py"
        core.write_text("def core_then_swapped():\n    return 5\n")

        def swap() -> None:
            core.unlink()
            core.symlink_to(outside)

        done = _during_read(monkeypatch, "app/core.py", swap, lambda: None)
        index.refresh()
        assert done
        assert not any("leaked_from_outside" in c.content for c in index.chunks)
        index.refresh()
        assert index._data[0].skipped_paths is not None
        assert index._data[0].skipped_paths.get("app/core.py") == "symlink-outside-root"
        assert not any("leaked_from_outside" in c.content for c in index.chunks)
        assert _state(index) == _state(_full(root, model))
    finally:
        index.close()


def test_a_fifo_swapped_in_before_a_read_does_not_block_the_look(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file replaced by a FIFO between the listing and the read: a plain open blocked the look (and every
    search after it) forever."""
    import signal

    root = tmp_path / "repo"
    write(root, TREE)
    index = codepith.Index.from_path(root, model=model, watch=True, use_cache=False)
    core = root / "app/core.py"

    def fifo() -> None:
        core.unlink()
        os.mkfifo(core)

    class Hung(Exception):
        pass

    def hung(*_: object) -> None:
        raise Hung("the look blocked on a FIFO")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        core.write_text("def core_then_a_fifo():\n    return 6\n")
        done = _during_read(monkeypatch, "app/core.py", fifo, lambda: None)
        index.refresh()
        assert done
        index.refresh()
        assert index._data[0].skipped_paths is not None
        assert index._data[0].skipped_paths.get("app/core.py") == "not-a-regular-file"
        assert "app/core.py" not in index._data[0].files
        assert _state(index) == _state(_full(root, model))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        index.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_watched_look_that_fails_does_not_lose_what_the_watcher_saw(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    """^C in a search (or an error in its build) after the watcher's paths were taken: they were never applied
    nor reported again, so the edit stayed out of every later search of that index."""
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    try:
        (tmp_path / "app/core.py").write_text("def core_after_an_interrupt():\n    return 7\n")
        real = build.refresh

        def fails(*args: object, **kwargs: object) -> build.RefreshStats:
            raise error("in the middle of a look")

        monkeypatch.setattr(build, "refresh", fails)
        with pytest.raises(error):
            index.search("core after an interrupt")
        monkeypatch.setattr(build, "refresh", real)
        index.refresh()
        assert "core_after_an_interrupt" in _symbols(index, "core after an interrupt")
        assert _state(index) == _state(_full(tmp_path, model))
        (tmp_path / "app/util.py").write_text("def util_watched_again():\n    return 8\n")
        stats = index.refresh()[0]
        assert index.watching and not stats.walked and stats.changed == 1, "watched again from there on"
    finally:
        index.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.parametrize("content", ["code", "all"])
def test_a_cache_inside_the_watched_tree_is_not_part_of_it(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """``CODEPITH_CACHE_DIR`` inside the indexed tree: its segments and ``source.json`` files were listed
    (indexed with ``--content all``), and every commit changed files the watcher then reported, so each
    search of an untouched tree wrote a new generation."""
    root = tmp_path / "repo"
    write(root, TREE)
    monkeypatch.setenv("CODEPITH_CACHE_DIR", str(root / "cachedir"))
    index = codepith.Index.from_path(root, model=model, watch=True, content=content)
    try:
        for _ in range(3):
            index.search("core entry")
        stats = index.refresh()[0]
        assert not stats.dirty, "nothing changed in the tree: nothing written"
        data = index._data[0]
        assert not [rel for rel in data.files if rel.startswith("cachedir/")]
        assert data.skipped_paths is not None
        assert data.skipped_paths.get("cachedir/indexes/") == "build output (CACHEDIR.TAG)"
        assert [rel for rel in data.skipped_paths if rel.startswith("cachedir/indexes")] == ["cachedir/indexes/"]
        full = codepith.Index.from_path(root, model=model, use_cache=False, content=content)
        assert _state(index) == _state(full)
    finally:
        index.close()


@pytest.mark.parametrize("watch", [True, False])
def test_an_index_cleared_under_a_running_process_is_opened_again(
    tmp_path: Path, model, caplog: pytest.LogCaptureFixture, watch: bool
) -> None:
    """``codepith clear`` (or the cache deleted) while a server kept the index open: the server wrote on
    into the deleted manifest, a CLI run built a new one at the same path, and from then on each took the
    other's segments for a killed build's debris and deleted them: every search by either rebuilt the whole
    index ("segment ... is damaged"), until the server was restarted."""
    import logging

    from codepith.store import layout

    root, cache = tmp_path / "repo", tmp_path / "cache"
    write(root, TREE)
    server = codepith.Index.from_path(root, model=model, watch=watch, cache_dir=cache)
    try:
        assert server.search("core entry")
        for entry in layout.list_cached(cache):
            assert layout.remove(entry) is None  # what `codepith clear index` does
        (root / "app/core.py").write_text("def core_after_clear():\n    return 1\n")
        caplog.set_level(logging.WARNING, logger="codepith")
        cli = codepith.Index.from_path(root, model=model, watch=False, cache_dir=cache)  # builds afresh
        assert "core_after_clear" in _symbols(cli, "core after clear")
        for i in range(3):  # the server and CLI runs, taking turns
            (root / "app/util.py").write_text(f"def util_turn_{i}(x):\n    return x\n")
            server.refresh()
            assert f"util_turn_{i}" in _symbols(server, f"util turn {i}")
            (root / "pkg/mod.py").write_text(f"def pkg_turn_{i}():\n    return {i}\n")
            cli = codepith.Index.from_path(root, model=model, watch=False, cache_dir=cache)
            assert f"pkg_turn_{i}" in _symbols(cli, f"pkg turn {i}")
        server.refresh()
        assert not [r.message for r in caplog.records if "damaged" in r.message]
        assert len(layout.list_cached(cache)) == 1
        folder = server._stores[0].folder
        assert not server._stores[0].replaced() and cli._stores[0].folder == folder
        assert _state(server) == _state(_full(root, model))
    finally:
        server.close()


def test_a_file_grown_past_the_limit_before_its_read_is_not_read_whole(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed under the size limit, grown past it before the read (it was read whole, however large, and
    its text indexed until the next look)."""
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "2000")
    write(tmp_path, TREE)
    index = codepith.Index.from_path(tmp_path, model=model, watch=True, use_cache=False)
    try:
        core = tmp_path / "app/core.py"
        core.write_text("def core_small_first():\n    return 1\n")
        grow = lambda: core.write_text("def core_grown_past():\n    return 2\n" + "# filler line\n" * 400)  # noqa: E731
        done = _during_read(monkeypatch, "app/core.py", grow, lambda: None)
        index.refresh()
        assert done and not any("core_grown_past" in c.content for c in index.chunks)
        index.refresh()
        assert index._data[0].skipped_paths is not None
        assert index._data[0].skipped_paths.get("app/core.py") == "too-large"
        assert _state(index) == _state(_full(tmp_path, model))
    finally:
        index.close()


@pytest.mark.usefixtures("watcher_kind")
def test_a_root_whose_parent_was_moved_away_and_made_again_is_watched_again(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """``mv projects projects.bak`` and the tree put back at the old path: the watches went with the moved
    folder, and nothing is said of the root itself when a folder above it moves, so the watcher vouched
    for a tree it no longer saw: every later edit stayed out of the index for good."""
    parent = tmp_path / "projects"
    root = parent / "repo"
    write(root, TREE)
    index = codepith.Index.from_path(root, model=model, watch=True, use_cache=False)
    try:
        assert index.watching
        parent.rename(tmp_path / "projects.bak")
        shutil.copytree(tmp_path / "projects.bak", parent, symlinks=True)
        index.refresh()
        (root / "app/core.py").write_text("def core_after_the_parent_moved():\n    return 3\n")
        index.refresh()
        assert "core_after_the_parent_moved" in _symbols(index, "core after the parent moved")
        (tmp_path / "projects.bak/repo/pkg/mod.py").write_text("def not_this_tree():\n    pass\n")
        (root / "app/util.py").write_text("def util_watched_here():\n    return 4\n")
        stats = index.refresh()[0]
        assert index.watching and not stats.walked and stats.changed == 1, "the folder at the path is watched"
        assert _state(index) == _state(_full(root, model))
    finally:
        index.close()


def test_an_index_cleared_where_no_new_one_can_be_made_keeps_answering(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index removed under a running process, and no room to make it again (a full or read-only disk):
    the last view is searched with a note, no error, and the index is made once there is room."""
    from codepith.store import layout
    from codepith.store.manifest import Store

    root, cache = tmp_path / "repo", tmp_path / "cache"
    write(root, TREE)
    index = codepith.Index.from_path(root, model=model, watch=True, cache_dir=cache)
    try:
        for entry in layout.list_cached(cache):
            assert layout.remove(entry) is None
        real = Store.reopen

        def no_room(self: Store) -> None:
            raise layout.CacheIOError(f"could not write the index in {self.folder}: No space left on device")

        monkeypatch.setattr(Store, "reopen", no_room)
        index.refresh()
        assert "core_entry" in _symbols(index, "core entry")
        assert any("No space left on device" in n for n in index.search_notes("core entry"))
        monkeypatch.setattr(Store, "reopen", real)
        monkeypatch.setattr(codepith.api, "WRITE_RETRY_SECONDS", 0.0)  # (30 s after a failed write)
        (root / "app/core.py").write_text("def core_once_there_is_room():\n    return 1\n")
        index.refresh()
        assert "core_once_there_is_room" in _symbols(index, "core once there is room")
        assert _state(index) == _state(_full(root, model))
    finally:
        index.close()


def _as_a_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Permissions as a user who is not root sees them (the tests may run as root, whom a mode stops
    from nothing): the walk judges a file by its mode bits, and a folder of mode 000 cannot be listed."""
    import stat as stat_mod

    from codepith.files import walk

    monkeypatch.setattr(walk, "_readable_by_mode", lambda: lambda info: bool(info.st_mode & stat_mod.S_IRUSR))
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if not os.stat(path).st_mode & stat_mod.S_IRUSR:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(walk.os, "scandir", scandir)


@pytest.mark.usefixtures("watcher_kind")
def test_a_file_or_folder_made_readable_by_a_chmod_is_indexed_by_the_next_look(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``chmod 000`` on a file and a folder, a look, then ``chmod +r``: a chmod moves no mtime, and the
    stat check compared mtimes only, so both stayed "unreadable" in every later look (a new process or
    not) until something else moved. Their change time (ctime) moves; the check compares it too."""
    _as_a_user(monkeypatch)
    root = tmp_path / "repo"
    write(root, {"a.py": "def alpha_entry():\n    return 1\n", "b.py": "def zebra_locked():\n    return 2\n",
                 "sub/c.py": "def yak_hidden():\n    return 3\n"})  # fmt: skip
    (root / "b.py").chmod(0)
    (root / "sub").chmod(0)
    try:
        _age(root)
        first = codepith.Index.from_path(root, model=model)
        assert set(first._data[0].skipped().examples["unreadable"]) == {"b.py", "sub/"}
        again = codepith.Index.from_path(root, model=model)  # a later process takes the quick path
        assert not again.last_stats[0].walked
        (root / "b.py").chmod(0o644)
        (root / "sub").chmod(0o755)
        later = codepith.Index.from_path(root, model=model)
        assert "unreadable" not in later._data[0].skipped().counts
        assert {"b.py", "sub/c.py"} <= {c.file_path for c in later.chunks}
        assert _state(later) == _state(_full(root, model))
    finally:
        (root / "b.py").chmod(0o644)
        (root / "sub").chmod(0o755)


@pytest.mark.usefixtures("watchfiles_only")
def test_a_temp_folder_inside_the_watched_tree_is_not_part_of_it(
    tmp_path: Path, model, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TMPDIR`` inside the indexed tree: the watcher's sentinel folder lies in the tree it watches, and
    every ``take`` reported the last sentinel's removal as a change of the tree (a plan and a manifest write
    on every search), and a walk listed the sentinel files. The folder is tagged, and its events are ours."""
    import tempfile

    from codepith.files.walk import walk
    from codepith.files.watch import watch_tree

    root = tmp_path / "repo"
    write(root, {"a.py": "def alpha_entry():\n    return 1\n", "tmp/.keep": ""})
    monkeypatch.setenv("TMPDIR", str(root / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    watcher = watch_tree(root)
    if watcher is None:
        pytest.skip("no file watcher here")
    try:
        assert watcher._folder is not None and watcher._folder.startswith(str(root / "tmp"))
        assert [watcher.take() for _ in range(4)] == [set()] * 4
        (root / "b.py").write_text("def beta_entry():\n    return 2\n")
        assert watcher.take() == {"b.py"}
        walked = walk(root, "all", None)
        assert sorted(f.rel_path for f in walked.files) == ["a.py", "b.py"]
        assert walked.skipped_paths.get(os.path.relpath(watcher._folder, root) + "/") == "build output (CACHEDIR.TAG)"
        index = codepith.Index.from_path(root, model=model, watch=True, content="all")
        try:
            first = index._data[0].generation
            for _ in range(3):
                index.search("alpha entry")
            assert index._data[0].generation == first, "a search of an unchanged tree wrote a generation"
        finally:
            index.close()
    finally:
        watcher.close()


@pytest.mark.usefixtures("watcher_kind")
@pytest.mark.parametrize("watch", [True, False])
def test_hard_links_are_files_of_their_own_and_an_edit_through_one_shows_in_the_other(
    tmp_path: Path, model, watch: bool
) -> None:
    """Two names for one inode: both indexed, each under its own name. An edit written through one name
    was applied to that name only under a watcher (it reports the name written through), so the other
    kept the old text in every search; a file with other names makes that look check every stat."""
    root = tmp_path / "repo"
    write(root, {"x/a.py": "def alpha_one():\n    return 1\n", "z/c.py": "def gamma_three():\n    return 3\n"})
    (root / "y").mkdir()
    os.link(root / "x/a.py", root / "y/b.py")
    _age(root)
    index = codepith.Index.from_path(root, model=model, watch=watch, use_cache=False)
    try:
        for _ in range(2):  # the look after the watch began checks every stat; the next uses the watcher
            index.refresh()
        assert {c.file_path for c in index.chunks} == {"x/a.py", "y/b.py", "z/c.py"}
        with open(root / "x/a.py", "w") as out:  # in place: the inode, and so y/b.py, holds the new text
            out.write("def omega_two():\n    return 2\n")
        past = time.time_ns() - 300 * 1_000_000_000
        os.utime(root / "x/a.py", ns=(past + 1, past + 1))  # not racy: only the stat says it moved
        index.refresh()
        texts = {c.file_path: c.content for c in index.chunks}
        assert "omega_two" in texts["x/a.py"] and "omega_two" in texts["y/b.py"]
        assert _state(index) == _state(_full(root, model))
    finally:
        index.close()
