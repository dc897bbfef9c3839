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
