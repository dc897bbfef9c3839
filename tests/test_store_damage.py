"""A damaged store: a manifest or segment hurt on disk, a manifest that disagrees with itself, a build killed
by the OOM killer. Each is repaired (or refused with one line); none is a traceback, none deletes an index
that only a lock or a permission kept out of reach."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import write

import codepith
from codepith.store import layout

SRC = Path(__file__).resolve().parents[1] / "src"


def _repo(root: Path, n: int = 12) -> None:
    write(root, {f"m{i}.py": f"def function_number_{i}(x):\n    return x + {i}\n" for i in range(n)})
    past = time.time_ns() - 600 * 1_000_000_000  # not racy: a rerun trusts their stats
    for p in root.rglob("*"):
        os.utime(p, ns=(past, past))


def _folder(root: Path, model) -> Path:  # type: ignore[no-untyped-def]
    return layout.index_dir(str(root.resolve()), "code", model.info.digest)


def _segments(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("seg-"))


def _found(index: codepith.Index, name: str) -> list[str]:
    return [r.chunk.file_path for r in index.search(name, top_k=1)]


def _hurt_page(manifest: Path, table: str) -> None:
    """Overwrite the first b-tree page of ``table`` with garbage: the file still opens (its schema and meta
    pages are sound), and SQLite says "database disk image is malformed" when the table is read."""
    con = sqlite3.connect(manifest)
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with open(manifest, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xa5" * page_size)


def _said(err: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    """What a person saw: the lines on stderr, and the warnings (which pytest's log capture takes)."""
    return err.strip().splitlines() + [f"codepith: warning: {r.getMessage()}" for r in caplog.records]


def test_a_manifest_damaged_inside_a_table_is_rebuilt_with_a_notice(tmp_path: Path, model, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    _hurt_page(_folder(root, model) / "manifest.sqlite", "files")
    assert main(["search", "function_number_3", str(root), "-k", "1"]) == 0
    out, err = capsys.readouterr()
    assert "FILE m3.py" in out
    lines = _said(err, caplog)
    assert len(lines) == 1 and lines[0].startswith("codepith: warning:") and "malformed" in lines[0], err
    index = codepith.Index.from_path(root, model=model)  # repaired for good: nothing to redo
    assert index.rebuilt == {} and index.last_stats[0].unchanged == 12
    assert _found(index, "function_number_5") == ["m5.py"]


@pytest.mark.parametrize("value", ["walk_skipped", "fresh"])
def test_a_manifest_whose_stored_json_is_damaged_is_rebuilt(tmp_path: Path, model, value: str, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    """Flipped bytes inside a value SQLite does not check (its JSON) were an internal error on every run."""
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    con = sqlite3.connect(_folder(root, model) / "manifest.sqlite")
    con.execute("UPDATE meta SET value = substr(value, 1, length(value) - 3) || 'x' WHERE key = ?", (value,))
    con.commit()
    con.close()
    assert main(["search", "function_number_3", str(root), "-k", "1"]) == 0
    out, err = capsys.readouterr()
    lines = _said(err, caplog)
    assert "FILE m3.py" in out and len(lines) == 1 and "unusable" in lines[0], lines
    assert main(["index", str(root)]) == 0
    assert ": 12 files," in capsys.readouterr().out


def test_a_locked_manifest_is_never_reset(tmp_path: Path, model, monkeypatch, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    """A lock another process holds is not damage: nothing is removed, and once it is free the cached index
    is used as it was."""
    from codepith.store import manifest
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    index = codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    before = _segments(folder)
    monkeypatch.setattr(manifest, "_BUSY_SECONDS", 0.2)
    index._stores[0]._con.execute("PRAGMA busy_timeout = 200")
    holder = sqlite3.connect(folder / "manifest.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        write(root, {"m1.py": "def function_number_1(x):\n    return x - 1\n"})
        (stats,) = index.refresh()  # an open index keeps its last generation and says why
        assert stats.failed and "locked" in stats.failed
        assert _found(index, "function_number_2") == ["m2.py"]
        assert main(["search", "function_number_2", str(root), "-k", "1"]) in (0, 2)
        said = "\n".join(_said(capsys.readouterr().err, caplog))
        assert "internal error" not in said and "unusable" not in said and "damaged" not in said, said
        assert "locked" in said
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _segments(folder) == before, "nothing was removed"
    again = codepith.Index.from_path(root, model=model)
    assert again.rebuilt == {} and again.last_stats[0].changed == 1 and again.last_stats[0].added == 0


class _Refusing:
    """A connection whose statements fail as SQLite fails them when the file may not be read or written."""

    def __init__(self, con: sqlite3.Connection, message: str) -> None:
        self._con, self._message = con, message

    def execute(self, sql: str, *args: object) -> object:
        if sql.startswith(("BEGIN", "SELECT", "UPDATE", "INSERT", "DELETE")):
            raise sqlite3.OperationalError(self._message)
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


@pytest.mark.parametrize("message", ["attempt to write a readonly database", "unable to open database file"])
def test_a_manifest_that_may_not_be_read_is_never_reset(tmp_path: Path, model, message: str) -> None:  # type: ignore[no-untyped-def]
    from codepith.errors import CodepithError

    root = tmp_path / "repo"
    _repo(root)
    index = codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    before = _segments(folder)
    st = index._stores[0]
    real = st._owned_con
    st._owned_con = _Refusing(real, message)  # type: ignore[assignment]
    write(root, {"m1.py": "def function_number_1(x):\n    return x - 1\n"})
    try:
        index.refresh()
    except CodepithError as exc:  # one line for a person, never "manifest unreadable" and a rebuild
        assert message in str(exc)
    else:
        assert message in (index.last_stats[0].failed or "")
    st._owned_con = real
    assert _segments(folder) == before and st.file_count() == 12


def _behind_its_back(root: Path, model, sql: str) -> None:  # type: ignore[no-untyped-def]
    """Run ``sql`` on the index's manifest from another connection, as another process would."""
    con = sqlite3.connect(_folder(root, model) / "manifest.sqlite")
    con.execute(sql)
    con.commit()
    con.close()


def test_a_commit_that_misses_a_row_it_changes_rolls_back_and_repairs(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """A file's row gone from the manifest behind this process's back: its stat update found nothing to
    change and was committed anyway, so the file was in no generation again, and never searched."""
    root = tmp_path / "repo"
    _repo(root)
    index = codepith.Index.from_path(root, model=model)
    _behind_its_back(root, model, "DELETE FROM files WHERE rel = CAST('m4.py' AS BLOB)")
    os.utime(root / "m4.py")  # touched, the same content: a stat update of its row
    index.refresh()
    assert _found(index, "function_number_4") == ["m4.py"]
    assert index._stores[0].file_count() == 12
    again = codepith.Index.from_path(root, model=model)
    assert _found(again, "function_number_4") == ["m4.py"] and again.last_stats[0].added == 0


def test_a_commit_that_misses_a_meta_row_rolls_back_and_rebuilds(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "repo"
    _repo(root)
    index = codepith.Index.from_path(root, model=model)
    _behind_its_back(root, model, "DELETE FROM meta WHERE key = 'generation'")
    write(root, {"m1.py": "def function_number_1(x):\n    return x - 1\n"})
    index.refresh()
    assert _found(index, "function_number_1") == ["m1.py"] and index._stores[0].file_count() == 12
    assert index._stores[0].generation() > 0


@pytest.mark.parametrize("array", ["docs", "dchunks"])
def test_postings_that_name_chunks_past_the_segment_are_repaired(tmp_path: Path, model, array: str) -> None:  # type: ignore[no-untyped-def]
    """Chunk numbers past the segment's count (a damaged postings array) made a search fail with an
    IndexError, or score chunks that are not there; the segment is now found damaged and its files redone."""
    from codepith.store.segment import _layout

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    (seg_name,) = _segments(folder)
    path = folder / seg_name / "arrays.bin"
    with open(path, "r+b") as fh:
        dtype, _shape, offset, count = _layout(fh.fileno(), os.fstat(fh.fileno()).st_size)[array]
        fh.seek(offset)
        fh.write(np.full(count, 60000, dtype).tobytes())
    index = codepith.Index.from_path(root, model=model)
    assert _found(index, "function_number_7") == ["m7.py"]
    assert seg_name not in _segments(folder), "the damaged segment was dropped and its files redone"
    assert _found(codepith.Index.from_path(root, model=model), "function_number_7") == ["m7.py"]


def test_a_full_check_finds_postings_past_the_segment_though_their_sums_match(tmp_path: Path) -> None:
    from codepith.store import segment

    folder = tmp_path / "store"
    folder.mkdir()
    name, sums = segment.persist(
        folder,
        vectors=np.zeros((2, 4), np.float32),
        lengths=np.ones(2, np.float32),
        marks=np.zeros(2, np.uint8),
        postings=(np.array([1, 2], np.uint64), np.array([0, 5]), np.array([1, 1])),
        defs=(np.array([3], np.uint64), np.array([1])),
        blobs=[b"", b""],
    )
    why = segment.verify(folder / name, sums, full=True, chunks=2)
    assert why is not None and "chunk" in why
    assert segment.verify(folder / name, sums, full=False, chunks=2) is None  # the quick check reads only sizes


KILLED = """
import os, signal
from codepith.index import build
_real = build.refresh


def _oom(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer ends a process


build.refresh = _oom
"""


def test_a_build_killed_by_sigkill_is_reported_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _repo(root, 2)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILLED)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), str(SRC)]),
        "CODEPITH_CACHE_DIR": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("CODEPITH_SUPERVISE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "codepith.surfaces.cli", "index", str(root)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codepith: error:") and "SIGKILL" in lines[0], proc.stderr
    assert "out-of-memory killer" in lines[0]


@pytest.mark.parametrize("name", ["build.lock", "manifest.sqlite", "source.json"])
def test_a_folder_where_a_store_file_belongs_is_removed(tmp_path: Path, model, name: str, capsys) -> None:  # type: ignore[no-untyped-def]
    """A folder in the place of the lock file or the manifest failed every build ("Is a directory",
    "unable to open database file") and kept the index out of the cache until it was cleared by hand."""
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    path = _folder(root, model) / name
    path.unlink()
    (path / "inside").mkdir(parents=True)
    assert main(["index", str(root)]) == 0
    assert ": 12 files," in capsys.readouterr().out
    assert path.is_file()
    index = codepith.Index.from_path(root, model=model)
    assert index.unsaved == {} and index.last_stats[0].unchanged == 12


@pytest.mark.parametrize("errno_", [13, 24])  # EACCES, EMFILE
def test_a_segment_that_cannot_be_read_for_now_is_kept(tmp_path: Path, model, monkeypatch, errno_: int) -> None:  # type: ignore[no-untyped-def]
    """No permission, or too many open files, says nothing of the segment: it was taken for damage,
    and a repair that found it unreadable still emptied the whole index."""
    from codepith.errors import CodepithError
    from codepith.store import segment

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    before = _segments(folder)
    real = segment.open_packed

    def refused(path, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno_, os.strerror(errno_), str(path))

    monkeypatch.setattr(segment, "open_packed", refused)
    monkeypatch.setattr(segment, "_digest_file", refused)
    with pytest.raises(CodepithError, match=f"could not read the index in .*{os.strerror(errno_)}"):
        codepith.Index.from_path(root, model=model)
    monkeypatch.setattr(segment, "open_packed", real)
    assert _segments(folder) == before, "nothing was removed"
    index = codepith.Index.from_path(root, model=model)
    assert index.rebuilt == {} and index.last_stats[0].unchanged == 12
    assert _found(index, "function_number_5") == ["m5.py"]


def test_index_verify_finds_a_byte_flipped_in_place(tmp_path: Path, model, capsys) -> None:  # type: ignore[no-untyped-def]
    """A byte flipped inside a segment's vectors keeps every size: a look never read it, so its scores were
    wrong for as long as the segment lived. ``codepith index --verify`` reads every byte and redoes it."""
    from codepith.store.segment import _layout
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    (seg_name,) = _segments(folder)
    with open(folder / seg_name / "arrays.bin", "r+b") as fh:
        _dtype, _shape, offset, _count = _layout(fh.fileno(), os.fstat(fh.fileno()).st_size)["vectors"]
        fh.seek(offset + 3)
        byte = fh.read(1)
        fh.seek(offset + 3)
        fh.write(bytes([byte[0] ^ 0x40]))
    assert main(["index", str(root)]) == 0
    assert "unusable" not in capsys.readouterr().out and _segments(folder) == [seg_name], "a look does not see it"
    assert main(["index", "--verify", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"verified: damage found and repaired (segment {seg_name}: arrays.bin: checksum mismatch)" in out, out
    assert "unusable" not in out and "rebuilt" not in out, "one account of what happened, not a contradiction"
    assert ": 12 files," in out and seg_name not in _segments(folder)
    assert main(["index", "--verify", str(root)]) == 0
    assert "verified: every byte of the index matches its checksums" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["search", "function_number_2", "-k", "1"], ["index"]])
def test_a_command_under_a_lock_says_so_once(tmp_path: Path, model, monkeypatch, capsys, caplog, argv) -> None:  # type: ignore[no-untyped-def]
    """The first look of a new Index whose write fails (a lock held past the wait) warns once, not from
    both the opening and the look."""
    from codepith.store import manifest
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    _repo(root)
    codepith.Index.from_path(root, model=model)
    folder = _folder(root, model)
    monkeypatch.setattr(manifest, "_BUSY_SECONDS", 0.2)
    write(root, {"m1.py": "def function_number_1(x):\n    return x - 1\n"})
    holder = sqlite3.connect(folder / "manifest.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        caplog.clear()
        capsys.readouterr()
        main([argv[0], *argv[1:2], str(root), *argv[2:]])
        said = "\n".join(_said(capsys.readouterr().err, caplog))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert said.count("as last written") == 1, said
