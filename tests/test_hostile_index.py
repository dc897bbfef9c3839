"""No single file fails a repository: real trees, the real `codepith` command in a subprocess.

Faults that real files rarely produce on demand (a grammar crash, a segfault, a hang) are injected with a
``sitecustomize`` module on the subprocess's PYTHONPATH, so the code under test is the shipped code.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write

KERNEL_TEST_BPF = Path("/work/kernel/linux-source-6.1/lib/test_bpf.c")
SRC = Path(__file__).resolve().parents[1] / "src"


def _env(tmp_path: Path, hook: str | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(SRC), env.get("PYTHONPATH", "")]
    if hook is not None:
        hook_dir = tmp_path / "hook"
        hook_dir.mkdir(exist_ok=True)
        (hook_dir / "sitecustomize.py").write_text(hook)
        paths.insert(0, str(hook_dir))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir(exist_ok=True)
    env.update(TMPDIR=str(private_tmp), CODEPITH_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    env.update(extra)
    return env


def _server_env(tmp_path: Path, hook: str, **extra: str) -> dict[str, str]:
    """What an MCP server started by ``test_mcp.session`` needs on top of its own environment."""
    env = _env(tmp_path, hook, **extra)
    return {k: env[k] for k in ("PYTHONPATH", "TMPDIR", *extra)}


def _cli(env: dict[str, str], *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codepith.surfaces.cli", *argv],
        env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def _nested_parens(depth: int = 3000) -> str:
    """3,000 nested parentheses over short lines (one long line would be skipped as minified)."""
    opening = "".join("(" if i % 40 else "(\n" for i in range(depth))
    closing = "".join(")" if i % 40 else ")\n" for i in range(depth))
    return f"int deeply_nested_marker = {opening}1{closing};\n"


def test_deep_files_index_fully_and_are_searchable(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    else_if = "".join(f"    {'} else ' if i else ''}if (x == {i}) {{\n        y = {i};\n" for i in range(1000))
    write(
        root,
        {
            "parens.c": _nested_parens(),
            "chain.c": "int chain_marker(int x) {\n    int y = 0;\n" + else_if + "    }\n    return y;\n}\n",
            "ok.c": "int plain_function(void) { return 1; }\n",
        },
    )
    if KERNEL_TEST_BPF.is_file():
        (root / "lib").mkdir()
        shutil.copy(KERNEL_TEST_BPF, root / "lib" / "test_bpf.c")
    env = _env(tmp_path)
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    expected = 4 if KERNEL_TEST_BPF.is_file() else 3
    assert f": {expected} files," in proc.stdout
    assert "skipped" not in proc.stdout and "chunking error" not in proc.stdout
    found = _cli(env, "search", "deeply_nested_marker", str(root), "-k", "1")
    assert found.returncode == 0 and "FILE parens.c" in found.stdout
    found = _cli(env, "search", "chain_marker", str(root), "-k", "1")
    assert "FILE chain.c" in found.stdout
    if KERNEL_TEST_BPF.is_file():
        found = _cli(env, "search", "bpf_fill_maxinsns11", str(root), "-k", "1")
        assert "FILE lib/test_bpf.c" in found.stdout


CHUNKER_FAULT = """
import codepith.chunks.chunker as _chunker

_real = _chunker.syntax_pieces


def _faulty(root, language):
    if b"TRIGGER_CHUNKER_FAULT" in (root.text or b""):
        raise RecursionError("maximum recursion depth exceeded")
    return _real(root, language)


_chunker.syntax_pieces = _faulty
"""


def test_a_chunker_error_gives_line_windows_and_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(
        root,
        {
            "bad.py": "# TRIGGER_CHUNKER_FAULT\ndef windowed_function():\n    return 'still searchable'\n",
            "good.py": "def fine():\n    return 1\n",
        },
    )
    env = _env(tmp_path, CHUNKER_FAULT, CODEPITH_WORKERS="0")
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    assert ": 2 files," in proc.stdout
    assert "line windows after a chunking error: 1 files" in proc.stdout
    assert "chunker error: nesting too deep: 1 (e.g. bad.py)" in proc.stdout
    again = _cli(env, "index", str(root))  # the reason is kept in the cache, not only in this run
    assert "chunker error: nesting too deep: 1 (e.g. bad.py)" in again.stdout
    found = _cli(env, "search", "windowed_function", str(root), "-k", "1")
    assert "FILE bad.py  LINES 1-3" in found.stdout


def test_a_file_of_more_definitions_than_a_segment_holds_does_not_fail_the_build(tmp_path: Path) -> None:
    """70,000 one-line functions (840 KB, under the default size limit) were 70,000 chunks, more than one
    index segment numbers: the whole build failed with an internal error."""
    import itertools
    import string

    root = tmp_path / "repo"
    alnum = string.ascii_letters + string.digits
    names = ("".join(t) for t in itertools.product(string.ascii_uppercase, alnum, alnum))
    generated = "".join(f"def {name}():0\n" for name in itertools.islice(names, 70_000))
    write(root, {"generated.py": generated, "good.py": "def fine_marker_function():\n    return 1\n"})
    env = _env(tmp_path)
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "chunker error: more than 50000 chunks: 1 (e.g. generated.py)" in proc.stdout, proc.stdout
    found = _cli(env, "search", "fine_marker_function", str(root), "-k", "1")
    assert "FILE good.py" in found.stdout, found.stdout


WORKER_FAULT = """
import os
import signal
import time

import codepith.index.analyze as _analyze

_real = _analyze.index_text


def _faulty(rel_path, text, language):
    if rel_path == "crash.py":
        os.kill(os.getpid(), signal.SIGSEGV)
    if rel_path == "hang.py":
        time.sleep(3600)
    return _real(rel_path, text, language)


_analyze.index_text = _faulty
"""


def _many_files(root: Path, n: int = 240) -> None:
    write(root, {f"pkg/m{i}.py": f"def handler_{i}(x):\n    return x + {i}\n" for i in range(n)})


def test_a_worker_that_crashes_or_hangs_does_not_fail_the_build(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _many_files(root)
    write(root, {"crash.py": "def crash_victim():\n    return 1\n", "hang.py": "def hang_victim():\n    return 2\n"})
    env = _env(tmp_path, WORKER_FAULT, CODEPITH_WORKERS="2", CODEPITH_FILE_TIMEOUT="3")
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    assert ": 242 files, 242 chunks" in proc.stdout
    assert f"worker crashed (exit {-signal.SIGSEGV}): 1 (e.g. crash.py)" in proc.stdout
    assert "worker timed out (> 3s): 1 (e.g. hang.py)" in proc.stdout
    for name, path in (("crash_victim", "crash.py"), ("hang_victim", "hang.py"), ("handler_123", "pkg/m123.py")):
        found = _cli(env, "search", name, str(root), "-k", "1")
        assert f"FILE {path}" in found.stdout
    assert not list((tmp_path / "tmp").iterdir()), "nothing left in the temp folder"


SLOW_WORKER = """
import sys
import time

import codepith.index.analyze as _analyze

_real = _analyze.index_text


def _slow(rel_path, text, language):
    time.sleep(0.05)
    return _real(rel_path, text, language)


_analyze.index_text = _slow
"""


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (a supervised command's workers are its grandchildren)."""
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            out.extend(int(x) for x in task.read_text().split())
    except OSError:
        return out
    return out + [g for c in out for g in _children(c)]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_kill_9_during_a_build_leaves_no_debris(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _many_files(root, 400)
    env = _env(tmp_path, SLOW_WORKER, CODEPITH_WORKERS="2")
    proc = subprocess.Popen(
        [sys.executable, "-m", "codepith.surfaces.cli", "index", str(root)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        workers = _children(proc.pid)
    assert len(workers) >= 2, "the build started its workers"
    time.sleep(1.0)  # let them get going
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [w for w in alive if Path(f"/proc/{w}").exists() and "Z" not in _state(w)]
    assert not alive, "workers end with their parent"
    assert not list((tmp_path / "tmp").iterdir()), "no job files in the temp folder"
    cache = tmp_path / "cache"
    leftovers = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    assert not [p for p in leftovers if "job" in p.name], leftovers


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_legacy_job_files_of_dead_builds_are_removed(tmp_path: Path) -> None:
    from codepith.index.workers import remove_legacy_job_files

    old = tmp_path / "codepith-jobs-abc123"
    fresh = tmp_path / "codepith-jobs-def456"
    other = tmp_path / "unrelated-file"
    for p in (old, fresh, other):
        p.write_bytes(b"pickled source")
    hour_ago = time.time() - 7200
    os.utime(old, (hour_ago, hour_ago))
    os.utime(other, (hour_ago, hour_ago))
    assert remove_legacy_job_files(str(tmp_path)) == 1
    assert not old.exists() and fresh.exists() and other.exists()


TOKENIZER_FAULT = """
import codepith.index.analyze as _analyze

_real = _analyze.term_bags


def _faulty(rel_path, chunks):
    if rel_path == "poison.py":
        raise ValueError("tokenizer broke")
    return _real(rel_path, chunks)


_analyze.term_bags = _faulty
"""


def test_a_failure_past_the_chunker_still_leaves_the_rest_indexed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"poison.py": "def poisoned():\n    return 1\n", "fine.py": "def fine_function():\n    return 2\n"})
    env = _env(tmp_path, TOKENIZER_FAULT, CODEPITH_WORKERS="0")
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "indexing error: ValueError: 1 (e.g. poison.py)" in proc.stdout
    found = _cli(env, "search", "fine_function", str(root), "-k", "1")
    assert "FILE fine.py" in found.stdout


def _beside_good(tmp_path: Path, rel: str, text: str) -> Path:
    """A repository of one hostile file and one ordinary one (good.py) that every request must still find."""
    root = tmp_path / "repo"
    write(root, {rel: text, "good.py": "def compute_invoice_total(items):\n    return sum(items)\n"})
    return root


def test_mcp_status_lists_fallbacks_and_search_notes_a_cut_query(tmp_path: Path) -> None:
    from test_mcp import ok, run, session

    root = _beside_good(tmp_path, "bad.py", "# TRIGGER_CHUNKER_FAULT\ndef windowed_function():\n    return 1\n")
    extra = _server_env(tmp_path, CHUNKER_FAULT, CODEPITH_WORKERS="0")

    async def go() -> None:
        async with session(root, extra) as s:
            status = await ok(s, "index_status", {})
            assert "line windows after a chunking error: 1 files:" in status
            assert "chunker error: nesting too deep: 1 (e.g. bad.py)" in status
            text = await ok(s, "search", {"query": "compute invoice total " * 2000, "max_chars": 1500})
            assert text.startswith("note: query cut to its first 9,9") and "of 44,000 characters" in text
            assert "good.py" in text and len(text) <= 1500

    run(go)


def test_mcp_server_survives_a_file_whose_chunking_crashes_or_hangs(tmp_path: Path) -> None:
    """A small repository and an edit are chunked in the server's kept helper, not in the server: the file
    that crashes or hangs the grammar costs itself its syntax chunks, and every request still answers."""
    from test_mcp import ok, run, session

    root = _beside_good(tmp_path, "crash.py", "def crash_victim():\n    return 1\n")
    extra = _server_env(tmp_path, WORKER_FAULT, CODEPITH_FILE_TIMEOUT="3")

    async def go() -> None:
        async with session(root, extra) as s:
            text = await ok(s, "search", {"query": "compute invoice total"})
            assert "good.py" in text
            assert "crash_victim" in await ok(s, "search", {"query": "crash_victim"})
            (root / "hang.py").write_text("def hang_victim():\n    return 2\n")
            started = time.monotonic()
            text = await ok(s, "search", {"query": "hang_victim"})
            assert "hang.py" in text and time.monotonic() - started < 60
            status = await ok(s, "index_status", {})
            assert f"worker crashed (exit {-signal.SIGSEGV}): 1 (e.g. crash.py)" in status
            assert "worker timed out (> 3s): 1 (e.g. hang.py)" in status
            (root / "later.py").write_text("def added_after_the_hang():\n    return 3\n")
            assert "later.py" in await ok(s, "search", {"query": "added_after_the_hang"})

    run(go)


# crashes only in the process that started (the CLI), not in a worker of it
_IN_CLI = 'rel_path == "crash.py" and os.environ["PARENT"] == str(os.getpid())'
_MARK_CLI = "\nos.environ.setdefault('PARENT', str(os.getpid()))\n"
INPROCESS_FAULT = WORKER_FAULT.replace('rel_path == "crash.py"', _IN_CLI) + _MARK_CLI


@pytest.mark.parametrize("everywhere", [False, True])
def test_a_file_that_crashes_an_in_process_build_is_isolated_by_the_next(tmp_path: Path, everywhere: bool) -> None:
    """Without the supervising parent (as for an API user), a grammar that crashes a small in-process build
    kills that run; the next run chunks the file the journal names in a worker and indexes the rest."""
    root = tmp_path / "repo"
    write(root, {
        "crash.py": "def crash_victim():\n    return 1\n",
        "fine.py": "def fine_function():\n    return 2\n",
    })  # fmt: skip
    env = _env(tmp_path, WORKER_FAULT if everywhere else INPROCESS_FAULT, CODEPITH_SUPERVISE="0")
    first = _cli(env, "index", str(root))
    assert first.returncode == -signal.SIGSEGV, (first.returncode, first.stderr)
    second = _cli(env, "index", str(root))
    assert second.returncode == 0, second.stderr
    assert ": 2 files," in second.stdout
    crashed = f"worker crashed (exit {-signal.SIGSEGV}): 1 (e.g. crash.py)"
    assert (crashed in second.stdout) == everywhere, second.stdout
    third = _cli(env, "index", str(root))
    assert third.returncode == 0 and ": 2 files," in third.stdout
    for name, path in (("crash_victim", "crash.py"), ("fine_function", "fine.py")):
        assert f"FILE {path}" in _cli(env, "search", name, str(root), "-k", "1").stdout


# hangs (deaf to ^C, as a parse in C is) or crashes in the process that runs the command, not in a worker
CLI_FAULT = """
import os
import signal
import sys
import time

import codepith.index.analyze as _analyze

_real = _analyze.index_text


def _in_worker():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name in ("_forked_main", "_serve"):
            return True
        frame = frame.f_back
    return False


def _faulty(rel_path, text, language):
    mine = not _in_worker()  # the command's own parse (a supervising parent parses nothing)
    if rel_path.startswith("crash") and mine:
        os.kill(os.getpid(), signal.SIGSEGV)
    if rel_path.startswith("hang") and mine:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        time.sleep(3600)
    return _real(rel_path, text, language)


_analyze.index_text = _faulty
"""


def test_a_supervised_command_survives_files_that_crash_or_hang_its_build(tmp_path: Path) -> None:
    """The CLI runs a build in a forked child: a child that dies in a parse, or stays on one file past the
    timeout, is run again with that file chunked in a worker; the command itself succeeds."""
    root = tmp_path / "repo"
    write(root, {
        "crash_a.py": "def crash_victim():\n    return 1\n",
        "crash_b.py": "def second_victim():\n    return 1\n",
        "hang.py": "def hang_victim():\n    return 2\n",
        "fine.py": "def fine_function():\n    return 3\n",
    })  # fmt: skip
    env = _env(tmp_path, CLI_FAULT, CODEPITH_FILE_TIMEOUT="3")
    started = time.monotonic()
    proc = _cli(env, "search", "hang_victim", str(root), "-k", "1", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "FILE hang.py" in proc.stdout and time.monotonic() - started < 60
    for name in ("crash_a.py", "crash_b.py"):
        assert f"codepith: warning: chunking {name} was killed by signal {int(signal.SIGSEGV)}" in proc.stderr
    assert "codepith: warning: chunking hang.py took over 3 s; running again with that file in a worker" in proc.stderr
    assert "Traceback" not in proc.stderr
    again = _cli(env, "index", str(root))
    assert again.returncode == 0 and ": 4 files," in again.stdout and "warning" not in again.stderr
    for name, path in (("crash_victim", "crash_a.py"), ("second_victim", "crash_b.py"), ("fine_function", "fine.py")):
        assert f"FILE {path}" in _cli(env, "search", name, str(root), "-k", "1").stdout


NO_PIDFD = """
import os


def _no_pidfd(pid, flags=0):
    raise OSError(38, "Function not implemented")


os.pidfd_open = _no_pidfd
"""


def test_a_supervised_command_without_pidfds_polls_its_child(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"crash_a.py": "def crash_victim():\n    return 1\n", "fine.py": "def fine():\n    return 3\n"})
    env = _env(tmp_path, CLI_FAULT + NO_PIDFD)
    proc = _cli(env, "search", "crash_victim", str(root), "-k", "1", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "FILE crash_a.py" in proc.stdout and "was killed by signal" in proc.stderr
    assert _cli(env, "search", "x", str(tmp_path / "nope")).returncode == 2  # the child's status, passed on


def test_a_supervised_command_stuck_in_a_parse_still_ends_on_ctrl_c(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"hang.py": "def hang_victim():\n    return 2\n", "fine.py": "def fine():\n    return 3\n"})
    env = _env(tmp_path, CLI_FAULT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "codepith.surfaces.cli", "index", str(root)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _children(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2.0)  # the child is in the hang by now
        child = _children(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        for pid in [*_children(proc.pid), proc.pid]:  # a failure leaves nothing hanging
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while child and time.monotonic() < deadline:
        child = [c for c in child if Path(f"/proc/{c}").exists() and "Z" not in _state(c)]
        time.sleep(0.1)
    assert not child, "the stuck child was killed"


GIL_HOG = """
import re

import codepith.index.analyze as _analyze

_real = _analyze.index_text


def _faulty(rel_path, text, language):
    if rel_path == "spin.py":  # catastrophic backtracking: minutes in C with the GIL held, as a runaway parse
        re.match(r"(a+)+$", "a" * 64 + "b")
    return _real(rel_path, text, language)


_analyze.index_text = _faulty
"""


def test_an_orphaned_worker_stuck_in_c_ends_itself(tmp_path: Path) -> None:
    """A worker whose parent died while it spun in C (the MCP server closed mid-parse) would spin for ever;
    at twice the per-file timeout it exits by itself, from faulthandler's C watchdog thread."""
    import pickle

    env = _env(tmp_path, GIL_HOG, CODEPITH_FILE_TIMEOUT="2")
    worker = subprocess.Popen(
        [sys.executable, "-m", "codepith.index.workers"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert worker.stdout is not None and worker.stdin is not None
        assert pickle.load(worker.stdout) == "codepith-worker-ready"
        pickle.dump((0, "fine.py", "def fine():\n    return 1\n", "python"), worker.stdin)
        pickle.dump((1, "spin.py", "def spin():\n    return 2\n", "python"), worker.stdin)
        worker.stdin.flush()
        assert pickle.load(worker.stdout)[0] == 0
        started = time.monotonic()
        assert worker.wait(timeout=30) == 1
        assert 3.5 < time.monotonic() - started < 20
    finally:
        worker.kill()
        worker.wait()
