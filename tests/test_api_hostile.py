"""The Python API against hostile or mistaken callers: every wrong argument is one short line (a
``CodepithError`` that is also a ``TypeError`` or ``ValueError``), never a deep traceback, a silently
wrong answer or a read outside the roots."""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codepith
from codepith.errors import ArgumentError, ArgumentTypeError, CodepithError, ModelError, PathError

FILES = {
    "pkg/a.py": "class TokenValidator:\n    def validate(self, header):\n"
    "        return header.startswith('Bearer ')\n\n\n"
    "        return header.startswith('Bearer ')\n\n\n"
    "def parse_config(path):\n    with open(path) as f:\n        return f.read()\n",
    "b.py": "def helper():\n    return 42\n",
}
LONG = "x" * 20_000


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, FILES)
    return root


@pytest.fixture
def index(repo: Path, model) -> codepith.Index:  # type: ignore[no-untyped-def]
    return codepith.Index.from_path(repo, model=model, watch=False)


def _one_line(exc: BaseException, limit: int = 400) -> str:
    text = str(exc)
    assert "\n" not in text and len(text) <= limit, text[:500]
    return text


@pytest.mark.parametrize("query", [None, b"token", 5, ["token"], {"q": 1}])
def test_a_query_that_is_not_a_str_is_one_line(index: codepith.Index, query: object) -> None:
    for call in (index.search, index.confidence, index.search_notes):
        with pytest.raises(ArgumentTypeError) as info:
            call(query)  # type: ignore[operator]
        assert isinstance(info.value, TypeError)
        assert "query must be a str" in _one_line(info.value)


def test_an_empty_query_is_a_value_error(index: codepith.Index) -> None:
    with pytest.raises(ArgumentError, match="empty query") as info:
        index.search("   ")
    assert isinstance(info.value, ValueError)


BAD_NUMBERS = [0, -1, True, False, 2.0, 1.5, 10**30, 10**5000, "3", None, np.float64(3)]


@pytest.mark.parametrize("bad", BAD_NUMBERS, ids=[f"{type(b).__name__}-{i}" for i, b in enumerate(BAD_NUMBERS)])
def test_bad_numbers_are_refused_everywhere(index: codepith.Index, bad: object) -> None:
    calls = [
        lambda: index.search("token", top_k=bad),  # type: ignore[arg-type]
        lambda: index.find_related("pkg/a.py", 2, top_k=bad),  # type: ignore[arg-type]
        lambda: index.find_related("pkg/a.py", bad),  # type: ignore[arg-type]
        lambda: index.chunk_at("pkg/a.py", bad),  # type: ignore[arg-type]
    ]
    if not (isinstance(bad, int) and bad > 1):  # a limit is at most so many: a huge one is all of them
        calls.append(lambda: index.outline(".", limit=bad))  # type: ignore[arg-type]
    for call in calls:
        with pytest.raises(CodepithError) as info:
            call()
        assert isinstance(info.value, (TypeError, ValueError))
        assert re.search(r"must be (a whole number|1 or more|at most)", _one_line(info.value))


def test_max_snippet_lines_and_read_lines_refuse_bad_numbers(index: codepith.Index, repo: Path) -> None:
    from codepith.output.jsonfmt import results_to_json
    from codepith.output.read import read_lines

    results = index.search("token")
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(CodepithError, match=r"max_snippet_lines must be (a whole number|0 or more)"):
            results_to_json("token", results, max_snippet_lines=bad)  # type: ignore[arg-type]
    one = results_to_json("token", results, max_snippet_lines=np.int64(1))
    assert all(r.get("content", "").count("\n") == 0 for r in one["results"])
    for start, end in ((0, 3), (True, 3), (1.0, 3), (1, "3"), (10**5000, 10**5000)):
        with pytest.raises(CodepithError, match=r"line must be (a whole number|1 or more|at most)") as info:
            read_lines(repo, "b.py", start, end)  # type: ignore[arg-type]
        _one_line(info.value)
    assert read_lines(repo, "b.py", np.int64(1), np.int32(2)).end == 2  # type: ignore[arg-type]


def test_numpy_integers_are_taken_wherever_ints_are(index: codepith.Index) -> None:
    assert len(index.search("token", top_k=np.int64(1))) == 1
    assert index.find_related("pkg/a.py", np.int32(2), top_k=np.int64(2))
    assert index.chunk_at("pkg/a.py", np.int64(2)).file_path == "pkg/a.py"
    repo_map = index.outline(".", limit=np.int64(1))
    assert isinstance(repo_map, codepith.api.RepoMap) and len(repo_map.entries) == 1


def test_find_related_takes_paths_and_every_spelling_of_one_file(index: codepith.Index, repo: Path) -> None:
    want = index.find_related("pkg/a.py", 2)
    for spelling in (Path("pkg/a.py"), "./pkg/a.py", "pkg//a.py", "pkg/./a.py", "pkg/../pkg/a.py",
                     str(repo / "pkg" / "a.py"), repo / "pkg" / "a.py", f"{repo}/./pkg//a.py"):  # fmt: skip
        assert index.find_related(spelling, 2) == want, spelling  # type: ignore[arg-type]
        assert index.chunk_at(spelling, 2).file_path == "pkg/a.py"  # type: ignore[arg-type]
    for bad in (None, 5, b"pkg/a.py", ["pkg/a.py"]):
        with pytest.raises(ArgumentTypeError, match="file_path must be a str or os.PathLike"):
            index.find_related(bad, 2)  # type: ignore[arg-type]
    with pytest.raises(PathError) as info:
        index.find_related(LONG, 2)
    _one_line(info.value)


def test_outline_arguments(index: codepith.Index, repo: Path, tmp_path: Path) -> None:
    assert index.outline(Path("pkg/a.py")).path == "pkg/a.py"  # type: ignore[union-attr]
    assert index.outline(repo / "pkg" / "a.py").path == "pkg/a.py"  # type: ignore[union-attr]
    for bad in (None, 5, b"pkg/a.py"):
        with pytest.raises(ArgumentTypeError, match="path must be a str or os.PathLike"):
            index.outline(bad)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="focus must be a str"):
        index.outline(".", focus=5)  # type: ignore[arg-type]
    (tmp_path / "outside.py").write_text("def secret_outside():\n    pass\n")
    for where in ("nope.py", "../outside.py", str(tmp_path / "outside.py"), "/etc/passwd", LONG, "../" * 50):
        with pytest.raises(PathError) as info:
            index.outline(where)
        assert "secret_outside" not in _one_line(info.value)


def test_one_bare_path_is_not_a_list_of_roots(repo: Path, model) -> None:  # type: ignore[no-untyped-def]
    for bad in (str(repo), repo, str(repo).encode()):
        with pytest.raises(ArgumentTypeError, match="use Index.from_path"):
            codepith.Index.from_paths(bad, model=model)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="paths must be a list"):
        codepith.Index.from_paths(5, model=model)  # type: ignore[arg-type]
    # A generator of folders is a list of folders.
    assert codepith.Index.from_paths((p for p in [repo]), model=model, watch=False).status().files == 2


def test_constructor_arguments_are_checked_before_any_work(repo: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(repo.parent)
    for path in ("", "   "):
        with pytest.raises(ArgumentError, match="empty path"):
            codepith.Index.from_path(path, model=model)
    for path in (None, 5, b"repo"):
        with pytest.raises(ArgumentTypeError, match="path must be a str or os.PathLike"):
            codepith.Index.from_path(path, model=model)  # type: ignore[arg-type]
    with pytest.raises(PathError) as info:
        codepith.Index.from_path("/" + LONG, model=model)
    _one_line(info.value)
    built: list[int] = []
    monkeypatch.setattr(codepith.api.build, "refresh", lambda *a, **k: built.append(1))
    bad_kwargs: list[dict[str, object]] = [
        {"progress": 5},
        {"watch": "no"},
        {"watch": 1},
        {"use_cache": "yes"},
        {"content": 5},
        {"content": LONG},
        {"max_file_bytes": -1},
        {"max_file_bytes": "1000"},
        {"max_file_bytes": 1.5},
        {"cache_dir": 5},
    ]
    for kwargs in bad_kwargs:
        with pytest.raises(CodepithError) as err:
            codepith.Index.from_path(repo, model=model, **kwargs)
        assert isinstance(err.value, (TypeError, ValueError)), kwargs
        _one_line(err.value)
    with pytest.raises(ArgumentTypeError, match="model must be"):
        codepith.Index.from_path(repo, model=5)  # type: ignore[arg-type]
    assert built == []  # nothing was built for any of them


def test_refresh_flags_are_bools(index: codepith.Index) -> None:
    for call in (
        lambda: index.search("token", refresh="no"),  # type: ignore[arg-type]
        lambda: index.find_related("pkg/a.py", 2, refresh="no"),  # type: ignore[arg-type]
        lambda: index.refresh(full="no"),  # type: ignore[arg-type]
        lambda: index.refresh(wait=1),  # type: ignore[arg-type]
        lambda: index.refresh(progress=5),  # type: ignore[arg-type]
    ):
        with pytest.raises(ArgumentTypeError):
            call()


def test_long_values_never_make_long_errors(index: codepith.Index, tmp_path: Path, monkeypatch) -> None:
    for call in (
        lambda: index.search("token", mode=LONG),
        lambda: index.find_related(LONG + "/a.py", 1),
        lambda: index.outline(LONG),
        lambda: codepith.Index.from_path(tmp_path / LONG[:200]),
    ):
        with pytest.raises(CodepithError) as info:
            call()
        _one_line(info.value)
    for spec in (LONG, "m/" + LONG, "x" * 300):
        with pytest.raises(ModelError) as model_error:
            codepith.Index.from_path(tmp_path, model=spec, use_cache=False)
        _one_line(model_error.value)
    from codepith.files.walk import max_file_bytes_limit

    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", LONG)
    with pytest.raises(CodepithError) as walk_error:
        max_file_bytes_limit()
    _one_line(walk_error.value)


def test_concurrent_calls_on_one_index(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """Eight threads searching one unwatched index while files change: its quick check iterated the records
    a refresh in another thread was changing ("dictionary changed size during iteration")."""
    root = tmp_path / "many"
    write(root, {f"d{i % 20}/f{i}.py": f"def func_{i}(x):\n    return x + {i}\n" for i in range(1500)})
    past = time.time_ns() - 600 * 1_000_000_000
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), ns=(past, past))
    os.utime(root, ns=(past, past))
    index = codepith.Index.from_path(root, model=model, watch=False)
    errors: list[str] = []

    def work(k: int) -> None:
        for j in range(12):
            try:
                if j % 2 == 0:
                    path = root / f"d{k}" / f"f{k}.py"
                    path.write_text(path.read_text() + f"# {j}\n")
                index.search(f"func {j}", top_k=3)
                index.status()
                index.find_related(f"d{k}/f{k}.py", 1)
            except Exception as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert "# 10" in "\n".join(index.file_lines("d3/f3.py").values())


def test_the_lock_is_fresh_in_a_forked_child(index: codepith.Index) -> None:
    """A fork while another thread holds the index's lock: the child's copy would be held for ever."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with index._lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        pid = os.fork()
        if pid == 0:  # the child: a search must not wait on the parent's thread (SIGALRM ends it if it does)
            code = 1
            try:
                signal.alarm(20)
                index.search("token", refresh=False)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        t.join()
    assert os.waitstatus_to_exitcode(status) == 0


def test_an_index_is_a_context_manager_that_stops_its_watchers(repo: Path, model) -> None:  # type: ignore[no-untyped-def]
    with codepith.Index.from_path(repo, model=model, watch=True) as index:
        assert index.watching
        assert index.search("token")
    assert not index.watching
    assert index.search("token")  # still usable: its refreshes check the stats


def test_a_root_replaced_by_a_symlink_is_refused(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root, secret = tmp_path / "root", tmp_path / "secret"
    write(root, {"a.py": "def mine():\n    pass\n"})
    write(secret, {"s.py": "def outside_secret():\n    return 'token'\n"})
    index = codepith.Index.from_path(root, model=model, watch=False)
    shutil.rmtree(root)
    root.symlink_to(secret, target_is_directory=True)
    with pytest.raises(PathError, match="is now a link") as info:
        index.search("outside_secret")
    _one_line(info.value)
    with pytest.raises(PathError, match="is now a link"):
        index.outline("s.py")
    assert all("outside_secret" not in c.content for c in index.chunks)


def test_nested_roots_are_indexed_once_with_a_warning(repo: Path, model, caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.WARNING, logger="codepith"):
        index = codepith.Index.from_paths([repo / "pkg", repo], model=model, watch=False)
    assert "is inside" in caplog.text
    assert index.roots == [repo.resolve()]
    assert index.status().files == 2
    paths = [c.file_path for c in index.chunks]
    assert len(paths) == len(set((c.file_path, c.start_line) for c in index.chunks))
    assert "pkg/a.py" in paths


def test_a_removed_root_leaves_the_others_searchable(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "one", {"one.py": "def one_func():\n    return 1\n"})
    write(tmp_path / "two", {"two.py": "def two_func():\n    return 2\n"})
    index = codepith.Index.from_paths([tmp_path / "one", tmp_path / "two"], model=model, watch=False)
    assert index.status().files == 2
    shutil.rmtree(tmp_path / "two")
    status = index.status()  # not stale: the gone root's files are not counted
    assert status.files == 1 and status.chunks == 1
    assert any("two: the folder is gone" in n for n in status.notes)
    assert [r.chunk.file_path for r in index.search("func")] == ["one/one.py"]
    assert any("the folder is gone" in n for n in index.search_notes("func"))
    write(tmp_path / "two", {"two.py": "def two_func():\n    return 2\n"})  # back again
    assert sorted(r.chunk.file_path for r in index.search("func")) == ["one/one.py", "two/two.py"]
    assert not any("gone" in n for n in index.status().notes)


def test_a_single_removed_root_is_one_line_and_status_says_so(repo: Path, model) -> None:  # type: ignore[no-untyped-def]
    index = codepith.Index.from_path(repo, model=model, watch=False)
    shutil.rmtree(repo)
    status = index.status()
    assert status.files == 0 and status.chunks == 0
    assert any("the folder is gone" in n for n in status.notes)
    with pytest.raises(PathError) as info:
        index.search("token")
    _one_line(info.value)


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True),
    st.text(max_size=300),
    st.binary(max_size=50),
    st.lists(st.integers(), max_size=3),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_ANY, top_k=_ANY, line=_ANY, path=_ANY)
def test_hostile_arguments_never_escape_as_other_errors(index: codepith.Index, query, top_k, line, path) -> None:  # type: ignore[no-untyped-def]
    for call in (
        lambda: index.search(query, top_k=top_k),
        lambda: index.find_related(path, line, top_k=top_k),
        lambda: index.outline(path, focus=query, limit=top_k),
        lambda: index.confidence(query),
        lambda: index.search_notes(query),
        lambda: index.file_lines(path),
    ):
        try:
            call()
        except CodepithError as exc:
            _one_line(exc, limit=600)
