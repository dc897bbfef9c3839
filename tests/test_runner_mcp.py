"""run_tests over MCP stdio: a real `codepith mcp` process, a real pytest run, refusals, and shutdown."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from conftest import write
from test_mcp import RawServer
from test_runner import HANG, gone

QUICK = "def test_ok():\n    assert True\n\n\ndef test_bad():\n    assert 'spam' == 'eggs'\n"


def text(reply: dict[str, Any]) -> tuple[bool, str]:
    result = reply["result"]
    return bool(result.get("isError")), str(result["content"][0]["text"])


def test_run_tests_over_stdio_and_shutdown_kills_the_run(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    write(repo, {"conftest.py": "", "test_quick.py": QUICK, "test_hang.py": HANG})
    raw = RawServer(repo, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    try:
        _, listed = raw.handshake()
        tool = {t["name"]: t for t in listed["result"]["tools"]}["run_tests"]
        assert tool["annotations"] == {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}

        def call(rid: int, args: dict[str, Any]) -> tuple[bool, str]:
            return text(raw.request(rid, "tools/call", {"name": "run_tests", "arguments": args}))

        is_error, reply = call(3, {"select": "test_quick.py", "max_chars": 1500})
        assert not is_error, reply
        assert len(reply) <= 1500
        assert "pytest: exit 1" in reply and "1 passed, 1 failed, 0 skipped, 0 errors" in reply
        assert "FAILED test_quick.py::test_bad" in reply and "AssertionError: assert 'spam' == 'eggs'" in reply
        assert "at test_quick.py:6" in reply

        refusals = [
            ({"runner": "rake"}, "unknown test runner 'rake'"),
            ({"select": "$(id)"}, "shell syntax"),
            ({"select": "--rootdir=/ -p evil"}, "may not start with '-'"),
            ({"repo": "https://github.com/o/r"}, "local folders only"),
            ({"repo": [str(repo), str(tmp_path)]}, "one repository folder"),
            ({"repo": str(tmp_path / "elsewhere")}, "refused:"),  # outside the server's roots (confine.py)
            ({"timeout_s": 0}, "timeout_s must be at least 1"),
            ({"command": "rm -rf /"}, "unknown argument 'command'"),
        ]
        for rid, (args, expected) in enumerate(refusals, start=10):
            is_error, message = call(rid, args)
            assert is_error and expected in message and "\n" not in message, (args, message)

        # a run in flight when the client leaves: its whole process group dies with the server
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 50,
                "method": "tools/call",
                "params": {"name": "run_tests", "arguments": {"select": "test_hang.py", "timeout_s": 120}},
            }
        )
        pid_file = repo / "pids.txt"
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip().count(" ") == 1):
            assert time.monotonic() < deadline, "the hanging test never started"
            time.sleep(0.1)
        pids = [int(p) for p in pid_file.read_text().split()]
        t0 = time.monotonic()  # the run does not block the protocol loop
        assert raw.request(51, "ping")["result"] == {}
        lines = {"path": "test_quick.py", "start_line": 1, "end_line": 2}
        read = raw.request(52, "tools/call", {"name": "read_snippet", "arguments": lines})
        assert "def test_ok" in text(read)[1] and time.monotonic() - t0 < 30
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        raw.proc.wait(timeout=20)
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
        raw.proc.wait()
    for pid in pids:
        assert gone(pid), f"process {pid} outlived the server"
    assert os.path.exists(pid_file)


def test_a_server_ended_by_sigterm_leaves_no_test_run_nor_its_folder(tmp_path: Path) -> None:
    """The server dies at once on SIGTERM: its run's group was killed, but the run's temporary folder
    (the JUnit report) was left in the temp folder for good."""
    import signal

    repo = tmp_path / "proj"
    temp = tmp_path / "tmp"
    temp.mkdir()
    write(repo, {"conftest.py": "", "test_hang.py": HANG})
    raw = RawServer(repo, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "TMPDIR": str(temp)})
    try:
        raw.handshake()
        call = {"name": "run_tests", "arguments": {"select": "test_hang.py", "timeout_s": 120}}
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        pid_file = repo / "pids.txt"
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip().count(" ") == 1):
            assert time.monotonic() < deadline, "the hanging test never started"
            time.sleep(0.1)
        assert [p.name for p in temp.iterdir() if p.name.startswith("codepith-test-")]  # the run's folder
        raw.proc.send_signal(signal.SIGTERM)
        assert raw.proc.wait(timeout=60) == -signal.SIGTERM
        assert all(gone(int(pid)) for pid in pid_file.read_text().split())
        assert not [p.name for p in temp.iterdir() if p.name.startswith("codepith-test-")]
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
        raw.proc.communicate(timeout=60)
