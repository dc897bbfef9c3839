"""The index: search behaviour, cache recovery, model keying, incremental refresh == full rebuild."""

from __future__ import annotations

import gc
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codepith
from codepith.errors import CodepithError, PathError
from codepith.index.repo import RepoData
from codepith.store import layout as store

SAMPLE = {
    "app/auth.py": (
        "class TokenValidator:\n"
        '    """Check bearer tokens sent by clients."""\n\n'
        "    def validate(self, token: str) -> bool:\n"
        "        return token.startswith('Bearer ')\n"
    ),
    "app/routes.py": (
        "def register_route(app, path, handler):\n"
        "    app.routes[path] = handler\n\n\n"
        "def list_routes(app):\n"
        "    return sorted(app.routes)\n"
    ),
    "app/db.py": "def connect_database(url):\n    return Connection(url)\n",
    "tests/test_auth.py": (
        "from app.auth import TokenValidator\n\n"
        "def test_validate():\n    assert TokenValidator().validate('Bearer x')\n"
    ),
}


def test_search_finds_definition_and_reports_fields(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    index = codepith.Index.from_path(tmp_path, model=model)
    results = index.search("TokenValidator", top_k=3)
    assert results, "a defined symbol must be found"
    top = results[0]
    assert top.chunk.file_path == "app/auth.py"
    assert top.chunk.start_line == 1 and top.chunk.end_line >= 5
    assert "class TokenValidator" in top.chunk.content
    assert top.chunk.language == "python"
    assert results == sorted(results, key=lambda r: -r.score)
    words = index.search("register a route handler", top_k=2)
    assert words[0].chunk.file_path == "app/routes.py"


def test_file_lines_are_the_indexed_lines(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, {**SAMPLE, ".env": "API_KEY=sk-live-123\n"})
    index = codepith.Index.from_path(tmp_path, model=model)
    lines = index.file_lines("app/routes.py")
    on_disk = SAMPLE["app/routes.py"].split("\n")
    assert lines[1] == on_disk[0] and lines[5] == on_disk[4]
    assert all(text == on_disk[n - 1] for n, text in lines.items())
    assert index.file_lines("app/missing.py") == {}
    assert index.file_lines(".env") == {}  # never indexed, so never shown
    (tmp_path / "app/routes.py").write_text("def changed():\n    pass\n")
    assert index.file_lines("app/routes.py")[1] == on_disk[0]  # what was searched, until a refresh


def test_no_match_is_empty_not_error(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search("zzqqxxyy", top_k=5, mode="lexical") == []
    with pytest.raises(CodepithError):
        index.search("   ")


def test_bad_paths(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PathError, match="no such directory"):
        codepith.Index.from_path(tmp_path / "missing", model=model)
    (tmp_path / "f.py").write_text("x = 1\n")
    with pytest.raises(PathError, match="not a directory"):
        codepith.Index.from_path(tmp_path / "f.py", model=model)


def test_several_paths_are_one_corpus_with_prefixes(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "alpha", {"a.py": "def alpha_handler():\n    pass\n"})
    write(tmp_path / "beta", {"b.py": "def beta_handler():\n    pass\n"})
    index = codepith.Index.from_paths([tmp_path / "alpha", tmp_path / "beta"], model=model)
    paths = {r.chunk.file_path for r in index.search("handler", top_k=5)}
    assert paths == {"alpha/a.py", "beta/b.py"}
    assert index.locate("beta/b.py") == ((tmp_path / "beta").resolve(), "b.py")


def _cache_dir(root: Path, model, cache: Path | None = None) -> Path:  # type: ignore[no-untyped-def]
    return store.index_dir(str(root.resolve()), "code", model.info.digest, cache)


def _segments(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith("seg-"))


@pytest.mark.parametrize(
    "damage", ["truncate-vectors", "flip-chunk-text", "lose-segment", "garbage-manifest", "version", "empty-manifest"]
)
def test_corrupt_cache_is_rebuilt_with_warning(tmp_path: Path, model, damage: str, caplog) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    first = codepith.Index.from_path(tmp_path, model=model)
    expected = [(r.chunk.location, round(r.score, 6)) for r in first.search("validate token")]
    folder = _cache_dir(tmp_path, model)
    seg = _segments(folder)[0]
    manifest = folder / "manifest.sqlite"
    if damage == "truncate-vectors":  # the vectors are the biggest array, so half the file cuts into them
        blob = (seg / "arrays.bin").read_bytes()
        (seg / "arrays.bin").write_bytes(blob[: len(blob) // 2])
    elif damage == "flip-chunk-text":  # same size, different bytes: only a checksum or the decoder sees it
        blob = bytearray((seg / "chunks.bin").read_bytes())
        for i in range(10, len(blob), 7):
            blob[i] ^= 0x5A
        (seg / "chunks.bin").write_bytes(bytes(blob))
    elif damage == "lose-segment":
        import shutil

        shutil.rmtree(seg)
    elif damage == "version":
        import sqlite3

        con = sqlite3.connect(manifest)
        con.execute("UPDATE meta SET value = '999' WHERE key = 'format'")
        con.commit()
        con.close()
    else:
        for p in folder.glob("manifest.sqlite*"):
            p.unlink()
        manifest.write_bytes(b"\x00garbage" * 100 if damage == "garbage-manifest" else b"")
    with caplog.at_level("WARNING", logger="codepith"):
        again = codepith.Index.from_path(tmp_path, model=model)
        got = [(r.chunk.location, round(r.score, 6)) for r in again.search("validate token")]
    assert got == expected
    if damage != "empty-manifest":  # an empty manifest is a new index: nothing to warn about
        assert "rebuilding" in caplog.text
        assert again.rebuilt
    # and the rebuilt cache is whole again: a third process takes it as it is
    third = codepith.Index.from_path(tmp_path, model=model)
    assert third.last_stats[0].unchanged == len(SAMPLE) and not third.rebuilt


def test_cache_is_reused_and_written_atomically(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    codepith.Index.from_path(tmp_path, model=model)
    again = codepith.Index.from_path(tmp_path, model=model)
    assert again.last_stats[0].unchanged == len(SAMPLE)
    assert again.last_stats[0].added == 0
    leftovers = [p for p in _cache_dir(tmp_path, model).iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_unwritable_cache_still_searches(tmp_path: Path, model, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "repo", SAMPLE)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("CODEPITH_CACHE_DIR", str(blocker))
    with caplog.at_level("WARNING", logger="codepith"):
        index = codepith.Index.from_path(tmp_path / "repo", model=model)
    assert index.search("TokenValidator")[0].chunk.file_path == "app/auth.py"
    assert "could not use the index cache" in caplog.text


def test_changing_the_model_means_a_separate_index(tmp_path: Path, model, tiny_model, caplog) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    codepith.Index.from_path(tmp_path, model=model)
    other = codepith.Index.from_path(tmp_path, model=tiny_model)
    assert other.last_stats[0].added == len(SAMPLE)  # nothing reused from the other model's index
    assert other.corpus.vectors.shape[1] == tiny_model.info.dims
    assert _cache_dir(tmp_path, model) != _cache_dir(tmp_path, tiny_model)
    # a manifest of one model is never accepted for another
    import shutil

    target = _cache_dir(tmp_path, tiny_model)
    shutil.rmtree(target)
    shutil.copytree(_cache_dir(tmp_path, model), target)
    with caplog.at_level("WARNING", logger="codepith"):
        again = codepith.Index.from_path(tmp_path, model=tiny_model)
    assert again.rebuilt and again.last_stats[0].added == len(SAMPLE)
    assert again.corpus.vectors.shape[1] == tiny_model.info.dims


def test_an_index_that_is_current_never_reads_its_model(tmp_path: Path) -> None:
    """Opening and checking a current index needs only the model's digest; a search reads the rest."""
    from conftest import make_tiny_model

    from codepith.model import loader

    folder = make_tiny_model(tmp_path / "model")
    root = tmp_path / "repo"
    write(root, {"app.py": "def route():\n    return token\n"})
    loader._clear_cache()
    try:
        codepith.Index.from_path(root, model=str(folder))
        loader._clear_cache()  # a fresh process, as far as the model is concerned
        again = codepith.Index.from_path(root, model=str(folder))
        assert again.last_stats[0].unchanged == 1
        assert again.model._pending is not None  # nothing to embed: tokenizer and table never read
        assert [r.chunk.file_path for r in again.search("route")] == ["app.py"]
        assert again.model._pending is None
    finally:
        loader._clear_cache()


def test_a_build_whose_model_cannot_be_read_fails_whole(tmp_path: Path) -> None:
    """A tokenizer gone bad is one ModelError before any file is indexed, not zero vectors file by file."""
    from conftest import make_tiny_model

    from codepith.errors import ModelError
    from codepith.model import loader

    folder = make_tiny_model(tmp_path / "model")
    (folder / "tokenizer.json").write_text("{ not a tokenizer", encoding="utf-8")
    root = tmp_path / "repo"
    write(root, {"app.py": "def route():\n    return token\n"})
    loader._clear_cache()
    try:
        with pytest.raises(ModelError) as info:
            codepith.Index.from_path(root, model=str(folder))
        assert "tokenizer" in str(info.value) and "\n" not in str(info.value)
        make_tiny_model(folder)  # mended: the next build indexes the file
        loader._clear_cache()
        assert codepith.Index.from_path(root, model=str(folder)).search("route")
    finally:
        loader._clear_cache()


def test_refresh_sees_added_changed_deleted(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    index = codepith.Index.from_path(tmp_path, model=model)
    (tmp_path / "app/db.py").unlink()
    write(tmp_path, {"app/cache.py": "def evict_stale_entries(cache):\n    cache.clear()\n"})
    p = tmp_path / "app/routes.py"
    p.write_text(p.read_text() + "\n\ndef remove_route(app, path):\n    del app.routes[path]\n")
    results = index.search("evict_stale_entries")
    assert results[0].chunk.file_path == "app/cache.py"
    stats = index.last_stats[0]
    assert (stats.added, stats.changed, stats.removed) == (1, 1, 1)
    assert all(r.chunk.file_path != "app/db.py" for r in index.search("connect_database", mode="lexical"))
    assert index.search("remove_route")[0].chunk.file_path == "app/routes.py"


def test_a_file_rewritten_with_the_same_bytes_counts_as_unchanged(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """Its stat moved, its content did not: the columns still add up to the files (the CLI printed
    "2 files ... changed 0, unchanged 1"), and only its record is written."""
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    return 2\n"})
    codepith.Index.from_path(tmp_path, model=model)
    os.utime(tmp_path / "b.py", ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    stats = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert (stats.files, stats.added, stats.changed, stats.removed, stats.unchanged) == (2, 0, 0, 0, 2), stats
    assert stats.touched == 1 and stats.dirty


def test_skip_records_are_written_without_counting_as_files(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """A file skipped when read counts in no column, yet its record moves are committed (stats.dirty)."""
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n", "b.py": "x = 1\n\x00\n"})
    first = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert (first.files, first.added, first.skipped.counts) == (1, 1, {"binary": 1})
    secret = "aws_secret_access_key = '" + "a1B2" * 10 + "'\n"
    (tmp_path / "b.py").write_text(secret)  # binary, now secret: only its skip record moves
    stats = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert (stats.added, stats.changed, stats.removed, stats.unchanged) == (0, 0, 0, 1) and stats.dirty
    again = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert again.skipped.counts == {"secret": 1} and not again.dirty, "the move was committed"
    (tmp_path / "c.py").write_bytes(b"\x00\x01")  # a new binary file alone
    stats = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert (stats.added, stats.changed, stats.unchanged) == (0, 0, 1) and stats.dirty
    again = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert again.skipped.counts == {"secret": 1, "binary": 1} and not again.dirty
    (tmp_path / "c.py").unlink()  # a skipped file gone: not removed from the files, but its record is
    stats = codepith.Index.from_path(tmp_path, model=model).last_stats[0]
    assert (stats.removed, stats.unchanged) == (0, 1) and stats.dirty
    assert codepith.Index.from_path(tmp_path, model=model).last_stats[0].skipped.counts == {"secret": 1}


def test_touched_file_is_not_reembedded(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, SAMPLE)
    index = codepith.Index.from_path(tmp_path, model=model)
    p = tmp_path / "app/db.py"
    st_ = p.stat()
    os.utime(p, ns=(st_.st_atime_ns, st_.st_mtime_ns + 5_000_000_000))
    index.refresh()
    stats = index.last_stats[0]
    assert stats.touched == 1 and stats.changed == 0


WORDS = ["alpha", "beta", "gamma", "delta", "route", "token", "cache", "parse"]
_files = st.sampled_from([f"m{i}.py" for i in range(5)] + ["pkg/n.py", "pkg/deep/o.py"])
_bodies = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(
    lambda ws: "\n\n".join(f"def {w}_{i}(x):\n    return x + {i}  # {w}" for i, w in enumerate(ws)) + "\n"
)
_edits = st.lists(st.tuples(st.sampled_from(["write", "delete"]), _files, _bodies), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_edits, min_size=1, max_size=3))
def test_incremental_equals_full_rebuild(tmp_path_factory, model, steps) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("repo")
    cache = tmp_path_factory.mktemp("c")
    write(root, {"m0.py": "def start():\n    return 0\n"})
    live = codepith.Index.from_path(root, model=model, cache_dir=cache)
    for batch in steps:
        for op, rel, body in batch:
            p = root / rel
            if op == "delete":
                if p.exists():
                    p.unlink()
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(body)  # same-size rewrites within one mtime tick must still be seen
        live.refresh()
        reloaded = codepith.Index.from_path(root, model=model, cache_dir=cache)  # incremental, via the disk cache
        full = codepith.Index.from_path(root, model=model, use_cache=False)
        for inc in (live, reloaded):
            assert [c for c in inc.chunks] == [c for c in full.chunks]
            assert np.allclose(inc.corpus.vectors, full.corpus.vectors)
            for q in ("alpha route", "parse_3", "token cache"):
                a = [(r.chunk.location, round(r.score, 6)) for r in inc.search(q, refresh=False)]
                b = [(r.chunk.location, round(r.score, 6)) for r in full.search(q, refresh=False)]
                assert a == b


def _age(root: Path, seconds: int = 600) -> None:
    """Move every mtime into the past, so the racy-stat rule lets the quick check trust them."""
    past = time.time_ns() - seconds * 1_000_000_000
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), ns=(past, past))
    os.utime(root, ns=(past, past))


@pytest.mark.parametrize(
    "change",
    ["edit", "new-file-in-quiet-folder", "gitignore", "shrink-too-large", "delete",
     "rename", "new-folder", "codepithignore", "folder-rename"],
)  # fmt: skip
def test_quick_check_never_hides_a_change(tmp_path: Path, model, monkeypatch, change: str) -> None:  # type: ignore[no-untyped-def]
    from codepith.index import build

    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "2000")
    write(
        tmp_path,
        {
            "app/core.py": "def core_entry():\n    return 1\n",
            "notes/readme.txt": "only a text file here\n",
            "skipped_gen.py": "def generated_thing():\n    return 2\n",
            "huge.py": "def huge_blob():\n    pass\n" + "# padding\n" * 400,
            ".gitignore": "skipped_gen.py\n",
        },
    )
    _age(tmp_path)
    index = codepith.Index.from_path(tmp_path, model=model)
    data = index._data[0]
    assert data.watch and build.quick_check(data) == set(), "an aged, untouched tree takes the quick path"
    index.refresh()
    assert index.last_stats[0].unchanged == 1 and not index.last_stats[0].dirty
    if change == "edit":
        (tmp_path / "app/core.py").write_text("def core_exit():\n    return 9\n")  # same size
        want, gone = "core_exit", "core_entry"
    elif change == "new-file-in-quiet-folder":
        (tmp_path / "notes/tool.py").write_text("def fresh_helper():\n    return 3\n")
        want, gone = "fresh_helper", None
    elif change == "gitignore":
        (tmp_path / ".gitignore").write_text("# nothing ignored now\n")
        want, gone = "generated_thing", None
    elif change == "shrink-too-large":
        (tmp_path / "huge.py").write_text("def huge_blob():\n    pass\n")
        want, gone = "huge_blob", None
    elif change == "rename":
        (tmp_path / "app/core.py").rename(tmp_path / "app/renamed.py")
        want, gone = "core_entry", None
    elif change == "new-folder":
        (tmp_path / "fresh").mkdir()
        (tmp_path / "fresh/tool.py").write_text("def fresh_helper():\n    return 3\n")
        want, gone = "fresh_helper", None
    elif change == "codepithignore":
        (tmp_path / ".codepithignore").write_text("app/\n")
        want, gone = None, "core_entry"
    elif change == "folder-rename":
        (tmp_path / "app").rename(tmp_path / "lib")
        want, gone = "core_entry", None
    else:
        (tmp_path / "app/core.py").unlink()
        want, gone = None, "core_entry"
    hits = index.search("entry exit helper generated thing blob", top_k=20)
    names = {s for r in hits for s in r.chunk.symbols}
    if want:
        assert want in names
    if change in ("rename", "folder-rename"):
        assert {r.chunk.file_path for r in hits} & {"app/renamed.py", "lib/core.py"}
        assert "app/core.py" not in {r.chunk.file_path for r in hits}
    if gone:
        assert gone not in names


def _aged_index(root: Path, model, folders: int) -> tuple[codepith.Index, RepoData]:  # type: ignore[no-untyped-def]
    """An index of 30 small files over ``folders`` folders, every mtime old enough for the quick check."""
    write(root, {f"pkg{i % folders}/m{i}.py": f"def handler_{i}(request):\n    return {i}\n" for i in range(30)})
    _age(root)
    index = codepith.Index.from_path(root, model=model)
    return index, index._data[0]


def test_an_edit_in_place_is_read_alone_without_a_walk(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    # the stat check names the file that moved; only that file is re-read (a walk of the kernel: 1.3 s)
    from codepith.index import build

    index, data = _aged_index(tmp_path, model, 1)
    target = tmp_path / "pkg0/m7.py"
    folder_mtime = os.stat(tmp_path / "pkg0").st_mtime_ns
    with open(target, "w") as fh:  # in place: the folder's mtime does not move
        fh.write("def renamed_handler(request):\n    return 7\n")
    assert os.stat(tmp_path / "pkg0").st_mtime_ns == folder_mtime
    assert build.quick_check(data) == {"pkg0/m7.py"}
    hits = index.search("renamed_handler", top_k=3)
    assert hits[0].chunk.file_path == "pkg0/m7.py" and "renamed_handler" in hits[0].chunk.symbols
    stats = index.last_stats[0]
    assert not stats.walked and stats.changed == 1
    past = time.time_ns() - 600 * 1_000_000_000
    os.utime(target, ns=(past, past))  # an aged edit: its new stat is trusted from now on
    index.refresh()
    assert build.quick_check(data) == set()


def test_a_folder_that_changed_is_walked_alone(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    # a file saved through a rename (or added) moves its folder's mtime: that folder is walked, not the tree
    from codepith.index import build

    index, data = _aged_index(tmp_path, model, 3)
    tmp = tmp_path / "pkg1/.m4.py.swp"
    tmp.write_text("def saved_by_rename(request):\n    return 4\n")
    os.replace(tmp, tmp_path / "pkg1/m4.py")
    (tmp_path / "pkg2/added.py").write_text("def added_helper():\n    return 0\n")
    assert build.quick_check(data) == {"pkg1", "pkg1/m4.py", "pkg2"}
    assert index.search("saved_by_rename", top_k=3)[0].chunk.file_path == "pkg1/m4.py"
    stats = index.last_stats[0]
    assert not stats.walked and stats.changed == 1 and stats.added == 1
    assert "added_helper" in {s for r in index.search("added helper", top_k=5) for s in r.chunk.symbols}
    _age(tmp_path)  # once the new stamps are old enough to trust, the check is quick again
    index.refresh()
    assert build.quick_check(data) == set()
    again = codepith.Index.from_path(tmp_path, model=model)  # and a new process takes the quick path
    assert not again.last_stats[0].walked and not again.last_stats[0].dirty


@pytest.mark.parametrize("how", ["forked", "started", "broken-workers"])
def test_worker_processes_give_the_same_index(tmp_path: Path, model, monkeypatch, request, how: str) -> None:  # type: ignore[no-untyped-def]
    from codepith.index import workers

    files = {f"pkg/m{i}.py": f"def handler_{i}(request):\n    return route(request, {i})\n" for i in range(9)}
    files["web/app.ts"] = "export function start(port: number): void {\n  listen(port);\n}\n"
    files["docs/notes.md"] = "# Notes\n\nRouting requests.\n"
    write(tmp_path, files)
    monkeypatch.setenv("CODEPITH_WORKERS", "0")
    alone = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    monkeypatch.setenv("CODEPITH_WORKERS", "2")
    monkeypatch.setattr(workers, "MIN_FILES", 1)
    monkeypatch.setenv("CODEPITH_FORK", "1" if how == "forked" else "0")
    if how == "forked":
        request.getfixturevalue("forkable")
    private_tmp = tmp_path / "tmp"  # never the shared temp folder: other codepith runs use it too
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    if how == "broken-workers":  # workers that die at once: every file is done in-process instead
        monkeypatch.setattr(workers.sys, "executable", "/bin/false")
    pools: list[bool] = []
    real_init = workers._Pool.__init__

    def init(self, jobs, n, timeout, finish, fork, *rest):  # type: ignore[no-untyped-def]
        pools.append(fork)
        real_init(self, jobs, n, timeout, finish, fork, *rest)

    monkeypatch.setattr(workers._Pool, "__init__", init)
    shared = codepith.Index.from_path(tmp_path, model=model, use_cache=False)
    assert shared.chunks == alone.chunks
    assert np.allclose(shared.corpus.vectors, alone.corpus.vectors)
    q = "route the request"
    got = [(r.chunk.location, r.score) for r in shared.search(q)]
    assert got == [(r.chunk.location, r.score) for r in alone.search(q)]
    assert pools == [how == "forked"], "the files went through worker processes of that kind"
    del shared  # its private store (use_cache=False) goes with it
    gc.collect()
    assert not list(private_tmp.iterdir()), "workers (and the dropped index) leave nothing in the temp folder"


def test_background_save_writes_the_same_cache(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "repo", SAMPLE)
    root = tmp_path / "repo"
    index = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "c", background_save=True)
    (root / "app/extra.py").write_text("def background_written():\n    return 1\n")
    assert index.search("background_written")[0].chunk.file_path == "app/extra.py"
    index.flush()
    reloaded = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "c")
    assert reloaded.last_stats[0].added == 0 and reloaded.chunks == index.chunks


def test_worker_shares_balance_text_not_file_counts() -> None:
    from codepith.index.workers import balanced_shares

    sizes = [900, 10, 10, 10, 10, 10, 10, 10, 10, 800]  # dealt in turn, one worker got both big files
    shares = balanced_shares(sizes, 2)
    assert sorted(i for s in shares for i in s) == list(range(len(sizes)))
    assert all(s == sorted(s) for s in shares), "each worker works through its share in job order"
    loads = [sum(sizes[i] for i in s) for s in shares]
    assert max(loads) < 1000
    assert balanced_shares([], 3) == [[], [], []]


def test_forked_workers_share_one_queue_biggest_job_first() -> None:
    """Forked workers take the next job when they are free, the biggest first; a queue the pipe cannot
    hold whole (more than 64 KiB of indices here) falls back to fixed shares rather than block."""
    import os

    from codepith.index import workers

    fd = workers._job_queue([5, 50, 20, 50])
    assert fd is not None
    raw = os.read(fd, 1024)
    assert os.read(fd, 4) == b"", "the write end is closed: an empty queue reads as its end"
    os.close(fd)
    assert [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)] == [1, 3, 2, 0]
    assert workers._job_queue([1] * 20_000) is None


def test_a_second_worker_is_forked_only_for_what_it_saves() -> None:
    """A build forks when a second worker takes enough text off the longest path: many small files
    (axios's shape) do, a tree of one big file and a few small ones (sinatra's) does not."""
    from codepith.index.workers import FORK_SAVING_CHARS, fork_saving

    assert fork_saving([2_000] * 65) == 65_000 >= FORK_SAVING_CHARS
    assert fork_saving([64_000, 6_000, 6_000, 7_000]) == 19_000 < FORK_SAVING_CHARS
    assert fork_saving([100_000, 100_000]) == 100_000
    assert fork_saving([5]) == 0 and fork_saving([]) == 0


def test_a_small_forked_build_is_helped_by_this_process(tmp_path: Path, monkeypatch, forkable) -> None:  # type: ignore[no-untyped-def]
    """A build forked only for a second core forks one worker fewer: this process takes jobs from the
    same queue, its journal marked before each, and every job comes back once, in order. A suspect a
    build that died in a parse left in the journal sends the batch to workers alone, as before."""
    import os

    from codepith.index import workers
    from codepith.index.journal import Journal

    monkeypatch.setenv("CODEPITH_WORKERS", "2")
    monkeypatch.setattr(workers, "FORK_SAVING_CHARS", 1)
    jobs = [
        (f"pkg/m{i}.py", f"def handler_{i}(request):\n    return route(request, {i})\n" * 40, "python")
        for i in range(12)
    ]
    sizes: list[tuple[int, bool]] = []
    real_init = workers._Pool.__init__

    def init(self, jobs, n, timeout, finish, fork, helping=None):  # type: ignore[no-untyped-def]
        sizes.append((n, helping is not None))
        real_init(self, jobs, n, timeout, finish, fork, helping)

    monkeypatch.setattr(workers._Pool, "__init__", init)

    def finish(rel: str, got: workers.FileAnalysis) -> tuple[str, int, list[int]]:
        return rel, os.getpid(), [c.start_line for c in got.chunks]

    journal = tmp_path / "parsing"
    got = list(workers.prepare_all(jobs, finish, journal))
    assert [g[0] for g in got] == [j[0] for j in jobs]
    alone = [finish(j[0], workers.analyze_one(*j)) for j in jobs]
    assert [g[2] for g in got] == [a[2] for a in alone]
    assert sizes == [(1, True)], "one forked worker, and this process helping"
    assert Journal(journal).suspects == frozenset(), "the journal names no file in flight after the batch"
    assert len({g[1] for g in got} - {os.getpid()}) <= 1, "only one other process did any job"

    sizes.clear()
    journal.write_bytes(b"\0pkg/m3.py\0\0")  # a build died chunking pkg/m3.py
    got = list(workers.prepare_all(jobs, finish, journal))
    assert [g[2] for g in got] == [a[2] for a in alone]
    assert sizes == [(2, False)], "with a suspect among the jobs, workers do them all"
    assert os.getpid() not in {g[1] for g in got}


def test_a_done_workers_exit_is_not_waited_for_and_it_is_reaped_later(monkeypatch, forkable) -> None:  # type: ignore[no-untyped-def]
    """Linux tears a worker's mapped memory down before its pipe closes (4-6 ms with the model loaded):
    a worker that answered everything says so, and the build goes on without waiting for its exit. The
    worker is reaped later: no zombie is left, and its CPU time is this process's children's."""
    import os
    import resource
    import threading

    from codepith.index import workers

    workers.reap_exited(wait=True)
    monkeypatch.setenv("CODEPITH_WORKERS", "2")
    monkeypatch.setattr(workers, "DONE_WAIT", 30.0)  # a loaded machine may be slow to pass on the last word
    jobs = [(f"m{i}.py", f"def f_{i}(x):\n    return x + {i}\n" * 30, "python") for i in range(workers.MIN_FILES)]
    waits: list[int] = []
    real_wait = workers._Forked.wait

    def wait(self):  # type: ignore[no-untyped-def]
        waits.append(self.pid)
        return real_wait(self)

    monkeypatch.setattr(workers._Forked, "wait", wait)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = list(workers.prepare_all(jobs, lambda rel, a: (rel, len(a.chunks)), None))
    assert [g[0] for g in got] == [j[0] for j in jobs] and all(g[1] for g in got)
    assert waits == [], "the build waited for a worker's exit"
    pids = [proc.pid for proc in workers._exiting]
    assert len(pids) == 2, "both workers said they were done and are left to exit"
    assert threading.active_count() == 1, "no reader thread is left behind to keep the next build from forking"
    assert workers.reap_exited(wait=True) == 0
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no zombie
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert after.ru_utime + after.ru_stime > before.ru_utime + before.ru_stime, "the workers' time is counted"


def test_a_dropped_helper_leaves_no_thread_and_builds_go_on_without_it(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    import threading

    from codepith.index import workers

    workers.drop_helper()
    workers.reap_exited(wait=True)
    before = threading.active_count()
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n"})
    workers.keep_helper()
    codepith.Index.from_path(tmp_path, model=model, use_cache=False, watch=False)
    assert threading.active_count() > before, "the kept helper has its reader thread"
    workers.drop_helper()
    assert threading.active_count() == before and workers._helper is None
    write(tmp_path, {"b.py": "def beta():\n    return 2\n"})
    index = codepith.Index.from_path(tmp_path, model=model, use_cache=False, watch=False)
    assert "beta" in {s for r in index.search("beta", top_k=3) for s in r.chunk.symbols}
