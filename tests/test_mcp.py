"""End to end: the real `codepith mcp PATH` process over stdio, via the SDK client and raw JSON-RPC."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
TOOL_NAMES = {"search", "find_related", "read_snippet", "outline", "index_status", "run_tests"}

APP = '''"""A tiny shop."""


def compute_invoice_total(items, tax_rate):
    """Sum the item prices and add tax."""
    subtotal = sum(item.price for item in items)
    return subtotal * (1 + tax_rate)


def apply_discount(total, percent):
    return total * (1 - percent / 100)
'''

UTIL = '''import hashlib


def hash_password(password, salt):
    """Salted sha256 of a password."""
    return hashlib.sha256(salt + password.encode()).hexdigest()


def verify_password(password, salt, expected):
    return hash_password(password, salt) == expected
'''


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {"shop/app.py": APP, "shop/util.py": UTIL}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "CODEPITH_CACHE_DIR": os.environ["CODEPITH_CACHE_DIR"],
        "HF_HUB_OFFLINE": "1",
    }
    for key in ("CODEPITH_MODEL", "PATH", "HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra or {})
    return env


def server_cmd(path: Path | str | None, allow: Sequence[Path | str] = ()) -> list[str]:
    extra = [arg for folder in allow for arg in ("--allow", str(folder))]
    return [sys.executable, "-m", "codepith.surfaces.cli", "mcp", *([str(path)] if path is not None else []), *extra]


@asynccontextmanager
async def session(
    path: Path | str | None, extra_env: dict[str, str] | None = None, allow: Sequence[Path | str] = ()
) -> AsyncIterator[Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cmd = server_cmd(path, allow)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(extra_env))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


async def ok(s: Any, tool: str, args: dict[str, Any], **kw: Any) -> str:
    result = await s.call_tool(tool, args, **kw)
    assert not result.is_error, text_of(result)
    assert result.structured_content is None
    return text_of(result)


async def err(s: Any, tool: str, args: dict[str, Any]) -> str:
    result = await s.call_tool(tool, args)
    assert result.is_error
    message = text_of(result)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


# -- raw wire: the exact bytes on stdout ---------------------------------------------------------------
class RawServer:
    """The server as a subprocess spoken to in raw JSON-RPC lines; stdout kept for inspection."""

    def __init__(self, path: Path, extra_env: dict[str, str] | None = None) -> None:
        env = dict(os.environ)
        env.update(server_env(extra_env))
        self.proc = subprocess.Popen(
            server_cmd(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.lines: list[bytes] = []

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 120) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no reply from the server"
        line = self.proc.stdout.readline()
        self.lines.append(line)
        return dict(json.loads(line))

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})})
        while True:
            msg = self.recv()
            if msg.get("id") == rid:
                return msg

    def handshake(self, version: str = "2025-06-18") -> tuple[dict[str, Any], dict[str, Any]]:
        init = self.request(
            1,
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return init, self.request(2, "tools/list")

    def close(self) -> tuple[bytes, bytes]:
        out, errs = self.proc.communicate(timeout=60)
        return out, errs


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shoprepo")


def test_tools_list_is_small_annotated_and_plain(repo: Path) -> None:
    raw = RawServer(repo)
    try:
        init, listed = raw.handshake()
        list_line = raw.lines[-1]
    finally:
        raw.close()
    assert init["result"]["serverInfo"]["name"] == "codepith"
    assert len(list_line) < 3000
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(tools) == TOOL_NAMES
    for name, tool in tools.items():
        assert tool["annotations"]["readOnlyHint"] is (name != "run_tests")  # runs the repository's code
        assert tool["annotations"]["openWorldHint"] is (name in ("search", "index_status", "run_tests"))
        assert "outputSchema" not in tool
        assert len(tool["description"]) < 200
    assert tools["search"]["inputSchema"]["required"] == ["query"]


def test_fast_front_answers_exactly_like_the_sdk(repo: Path) -> None:
    """The stdlib front that answers the handshake while the SDK loads says what the SDK would say."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from codepith.surfaces.mcp.front import FRONT_VERSIONS

    assert set(FRONT_VERSIONS) <= set(HANDSHAKE_PROTOCOL_VERSIONS)
    replies = []
    for front in ("1", "0"):
        raw = RawServer(repo, {"CODEPITH_MCP_FRONT": front})
        try:
            replies.append(raw.handshake("2025-11-25"))
            # and the SDK takes over seamlessly: a ping and a tool call after the handshake
            assert raw.request(3, "ping")["result"] == {}
            call = raw.request(4, "tools/call", {"name": "search", "arguments": {"query": "  "}})
            assert call["result"]["isError"] is True
        finally:
            raw.close()
    (front_init, front_list), (sdk_init, sdk_list) = replies
    assert front_init == sdk_init
    assert front_list["result"]["tools"] == sdk_list["result"]["tools"]


def test_nothing_but_protocol_on_stdout(repo: Path) -> None:
    raw = RawServer(repo)
    try:
        raw.handshake()
        raw.request(3, "tools/call", {"name": "search", "arguments": {"query": "invoice total"}})
        raw.request(
            4,
            "tools/call",
            {"name": "read_snippet", "arguments": {"path": "../x", "start_line": 1, "end_line": 2}},
        )
        raw.request(5, "tools/call", {"name": "index_status", "arguments": {}})
        raw.request(6, "nonexistent/method")
    finally:
        out, _ = raw.close()
    for line in raw.lines + out.splitlines():
        if line.strip():
            assert json.loads(line)["jsonrpc"] == "2.0"


def test_tools_end_to_end(repo: Path) -> None:
    async def scenario() -> None:
        async with session(repo) as s:
            listed = await s.list_tools()
            assert {t.name for t in listed.tools} == TOOL_NAMES

            found = await ok(s, "search", {"query": "invoice total with tax"})
            assert "shop/app.py" in found and "compute_invoice_total" in found
            assert "| " in found  # numbered lines

            snippet = await ok(s, "read_snippet", {"path": "shop/app.py", "start_line": 4, "end_line": 7})
            assert "compute_invoice_total" in snippet
            assert "   4| def compute_invoice_total" in snippet
            assert "subtotal * (1 + tax_rate)" in snippet

            related = await ok(s, "find_related", {"file_path": "shop/util.py", "line": 5})
            assert "FILE " in related

            status = await ok(s, "index_status", {})
            assert "files: 2" in status and "python" in status and "model:" in status
            assert "last refresh:" in status and "skipped:" in status

    run(scenario)


def test_edit_is_reflected_in_the_next_search(repo: Path) -> None:
    async def scenario() -> None:
        async with session(repo) as s:
            first = await ok(s, "search", {"query": "reticulate_splines_quickly"})
            assert first.startswith("no confident match") and "def reticulate_splines_quickly" not in first
            (repo / "shop" / "splines.py").write_text(
                "def reticulate_splines_quickly(n):\n    return [i * 2 for i in range(n)]\n"
            )
            second = await ok(s, "search", {"query": "reticulate_splines_quickly"})
            assert "shop/splines.py" in second and "reticulate_splines_quickly" in second
            # an edit in place, not only a new file
            (repo / "shop" / "splines.py").write_text("def frobnicate_widgets_now(n):\n    return n\n")
            third = await ok(s, "search", {"query": "frobnicate_widgets_now"})
            assert "frobnicate_widgets_now" in third
            assert "reticulate_splines_quickly" not in third
            (repo / "shop" / "splines.py").unlink()
            gone = await ok(s, "search", {"query": "frobnicate_widgets_now"})
            assert "shop/splines.py" not in gone

    run(scenario)


def test_bad_input_comes_back_as_one_line_tool_errors(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("top secret\n")

    async def scenario() -> None:
        async with session(repo) as s:
            assert "empty query" in await err(s, "search", {"query": "   "})
            assert "missing required argument 'query'" in await err(s, "search", {})
            assert "unknown argument 'qurey'" in await err(s, "search", {"qurey": "x"})
            assert "top_k" in await err(s, "search", {"query": "x", "top_k": 0})
            assert "no such file" in await err(
                s, "read_snippet", {"path": "shop/nope.py", "start_line": 1, "end_line": 3}
            )
            assert "past the end" in await err(
                s, "read_snippet", {"path": "shop/app.py", "start_line": 500, "end_line": 510}
            )
            assert "before start line" in await err(
                s, "read_snippet", {"path": "shop/app.py", "start_line": 5, "end_line": 2}
            )
            assert "outside" in await err(s, "read_snippet", {"path": "../secret.txt", "start_line": 1, "end_line": 1})
            assert "outside" in await err(
                s, "read_snippet", {"path": str(tmp_path / "secret.txt"), "start_line": 1, "end_line": 1}
            )
            assert "unknown repository" in await err(s, "search", {"query": "x", "repo": "no/such/place"})
            assert "refused" in await err(s, "search", {"query": "x", "repo": "/no/such/place"})
            assert "not in the index" in await err(s, "find_related", {"file_path": "nope.py", "line": 1})
            assert "line 900" in await err(s, "find_related", {"file_path": "shop/app.py", "line": 900})
            assert "ssh" in await err(s, "search", {"query": "x", "repo": "git@github.com:o/r.git"})
            assert "file://" in await err(s, "search", {"query": "x", "repo": f"file://{repo}"})
            assert "unknown tool" in await err(s, "run_shell", {})
            # the server kept running
            assert "compute_invoice_total" in await ok(s, "search", {"query": "invoice total"})

    run(scenario)


def test_progress_notifications_while_indexing(tmp_path: Path) -> None:
    files = {f"pkg/mod_{i:03d}.py": f"def handler_{i}(request):\n    return {i}\n" for i in range(60)}
    root = make_repo(tmp_path / "many", files)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def scenario() -> None:
        async with session(root) as s:
            await ok(s, "search", {"query": "handler request"}, progress_callback=on_progress)

    run(scenario)
    assert seen, "no progress notification while indexing"
    assert seen[-1][0] == seen[-1][1] == 60
    assert all(m and "indexing" in m for _, _, m in seen)


def test_several_repositories_as_one_corpus(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "alpha", {"billing.py": "def charge_credit_card(card, amount):\n    return amount\n"})
    b = make_repo(tmp_path / "beta", {"billing.py": "def refund_credit_card(card, amount):\n    return -amount\n"})

    async def scenario() -> None:
        async with session(a, allow=[b]) as s:
            found = await ok(s, "search", {"query": "credit card", "repo": [str(a), str(b)]})
            assert "alpha/billing.py" in found and "beta/billing.py" in found
            assert f"repo={json.dumps([str(a), str(b)])}" in found or "read_snippet" not in found
            text = await ok(
                s,
                "read_snippet",
                {"path": "beta/billing.py", "start_line": 1, "end_line": 2, "repo": [str(a), str(b)]},
            )
            assert "refund_credit_card" in text and "beta/billing.py" in text
            # the default repository is still the server's PATH
            assert "refund_credit_card" not in await ok(s, "search", {"query": "refund credit card"})

    run(scenario)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_url_repository(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", {"lib/geo.py": "def haversine_distance(a, b):\n    return 0.0\n"})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=work, check=True)
    subprocess.run([*git, "tag", "v1"], cwd=work, check=True)
    bare = tmp_path / "geo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    url = f"file://{bare}"
    other = make_repo(tmp_path / "here")

    async def scenario() -> None:
        async with session(other, {"CODEPITH_ALLOW_FILE_URLS": "1"}) as s:
            assert "not cloned yet" in await err(
                s, "read_snippet", {"path": "lib/geo.py", "start_line": 1, "end_line": 1, "repo": url}
            )
            found = await ok(s, "search", {"query": "haversine distance", "repo": url, "ref": "v1"})
            assert "lib/geo.py" in found
            text = await ok(
                s, "read_snippet", {"path": "lib/geo.py", "start_line": 1, "end_line": 2, "repo": url + "@v1"}
            )
            assert "haversine_distance" in text
            status = await ok(s, "index_status", {"repo": url, "ref": "v1"})
            assert "files: 1" in status

    run(scenario)


def test_two_servers_share_the_disk_cache(repo: Path) -> None:
    async def one(results: list[str]) -> None:
        async with session(repo) as s:
            results.append(await ok(s, "search", {"query": "hash password salt"}))
            results.append(await ok(s, "index_status", {}))

    async def scenario() -> None:
        results: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, results)
            tg.start_soon(one, results)
        assert len(results) == 4
        assert all("shop/util.py" in r for r in results[::2] if "FILE" in r)
        # a third server starts from what the two wrote
        again: list[str] = []
        await one(again)
        assert "hash_password" in again[0]

    run(scenario)
    cached = list(Path(os.environ["CODEPITH_CACHE_DIR"], "indexes").glob("*/manifest.sqlite"))
    assert len(cached) == 1
    assert not list(Path(os.environ["CODEPITH_CACHE_DIR"], "indexes").glob("*/.tmp-*"))


def test_savings_recorded_for_search_and_read(repo: Path) -> None:
    async def scenario() -> None:
        async with session(repo) as s:
            await ok(s, "search", {"query": "apply discount"})
            await ok(s, "read_snippet", {"path": "shop/app.py", "start_line": 1, "end_line": 3})
            await ok(s, "find_related", {"file_path": "shop/app.py", "line": 5})

    run(scenario)
    stats = Path(os.environ["CODEPITH_CACHE_DIR"]) / "stats.jsonl"
    calls = [json.loads(line)["call"] for line in stats.read_text().splitlines()]
    assert calls == ["search", "read", "related"]


def test_bad_server_path_fails_fast_with_one_line(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(server_env())
    proc = subprocess.run(
        server_cmd(tmp_path / "missing"),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "no such folder" in proc.stderr and proc.stderr.count("\n") == 1


def test_undecodable_file_names_survive_the_wire(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9_rates.py")  # not valid UTF-8: kept as the same bytes on disk
    (repo / "shop" / name).write_text("def exchange_rate_lookup(code):\n    return RATES[code]\n")

    async def scenario() -> None:
        async with session(repo) as s:
            found = await ok(s, "search", {"query": "exchange_rate_lookup"})
            assert "shop/caf\\xe9_rates.py" in found
            snippet = await ok(s, "read_snippet", {"path": "shop/caf\\xe9_rates.py", "start_line": 1, "end_line": 2})
            assert "exchange_rate_lookup" in snippet
            related = await ok(s, "find_related", {"file_path": "shop/caf\\xe9_rates.py", "line": 1})
            assert "FILE " in related
            for tool, args in (
                ("search", {"query": "exchange_rate_lookup"}),
                ("find_related", {"file_path": "shop/app.py", "line": 1}),
            ):
                hits = json.loads(await ok(s, tool, {**args, "format": "json"}))  # valid JSON, the name in it
                paths = [h["file_path"] for h in hits]
                assert "shop/caf\\xe9_rates.py" in paths, paths
                again = await ok(s, "read_snippet", {"path": "shop/caf\\xe9_rates.py", "start_line": 1, "end_line": 1})
                assert "exchange_rate_lookup" in again

    run(scenario)


def test_a_literal_backslash_name_and_an_undecodable_one_are_told_apart(repo: Path) -> None:
    """``lit\\xe9.py`` (a backslash, x, e, 9) and the name with the byte 0xE9 were both shown
    ``lit\\xe9.py``, which read back as the second: each is now spelt its own way and reads back as itself."""
    (repo / "shop" / "lit\\xe9.py").write_text("def spelled_literal_marker():\n    return 'literal'\n")
    (repo / "shop" / os.fsdecode(b"lit\xe9.py")).write_text("def spelled_byte_marker():\n    return 'byte'\n")
    literal, byte = "shop/lit\\\\xe9.py", "shop/lit\\xe9.py"  # as shown: lit\\xe9.py and lit\xe9.py

    async def scenario() -> None:
        async with session(repo) as s:
            found = await ok(s, "search", {"query": "spelled_literal_marker spelled_byte_marker", "top_k": 5})
            assert f"FILE {literal} " in found and f"FILE {byte} " in found, found
            hits = json.loads(await ok(s, "search", {"query": "spelled marker", "format": "json", "top_k": 10}))
            assert {literal, byte} <= {h["file_path"] for h in hits}
            mapped = await ok(s, "outline", {"path": "shop"})
            assert literal in mapped and byte in mapped, mapped
            for shown, marker in ((literal, "'literal'"), (byte, "'byte'")):
                snippet = await ok(s, "read_snippet", {"path": shown, "start_line": 1, "end_line": 2})
                assert marker in snippet and f"FILE {shown}" in snippet, snippet
                assert shown in await ok(s, "outline", {"path": shown})

    run(scenario)


def test_every_name_is_shown_one_way_and_read_back() -> None:
    """show_name (then show_bytes on the wire) and wire_name are undone by read_name, for any name."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from codepith.files.names import read_name, show_bytes, show_name, wire_name

    alphabet = st.sampled_from(["\\", "x", "u", "n", "e", "9", "0", "8", "\n", "\x1b", "\x85", "\udce9", "\udc85", "a"])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(alphabet, max_size=8).map("".join))
    def check(name: str) -> None:
        assert read_name(show_bytes(show_name(name))) == name
        assert read_name(wire_name(name)) == name

    check()
    assert show_name("src/app.py") == "src/app.py" and wire_name("dir\\b.py") == "dir\\b.py"


def test_json_format_tri_state_snippet_lines(repo: Path) -> None:
    """csp's contract: absent -> 10 lines, null -> whole chunk, 0 -> location only, N -> first N lines."""
    long_body = "\n".join(f"    step_{i} = compute_invoice_total(items, {i})" for i in range(30))
    (repo / "shop" / "long.py").write_text(f"def invoice_report(items):\n{long_body}\n    return step_0\n")

    async def scenario() -> None:
        async with session(repo) as s:
            query = {"query": "invoice report", "format": "json", "top_k": 3}
            default = json.loads(await ok(s, "search", query))
            assert isinstance(default, list) and default
            for item in default:
                assert set(item) <= {"file_path", "start_line", "end_line", "score", "content"}
                assert isinstance(item["score"], float) and item["start_line"] <= item["end_line"]
            report = next(i for i in default if i["file_path"] == "shop/long.py")
            assert len(report["content"].split("\n")) == 10

            full = json.loads(await ok(s, "search", {**query, "max_snippet_lines": None}))
            whole = next(i for i in full if i["file_path"] == "shop/long.py")
            assert len(whole["content"].split("\n")) == whole["end_line"] - whole["start_line"] + 1 > 10

            bare = json.loads(await ok(s, "search", {**query, "max_snippet_lines": 0}))
            assert bare and all("content" not in i for i in bare)

            three = json.loads(await ok(s, "search", {**query, "max_snippet_lines": 3}))
            assert all(len(i["content"].split("\n")) <= 3 for i in three if "content" in i)

            related = json.loads(await ok(s, "find_related", {"file_path": "shop/app.py", "line": 5, "format": "json"}))
            assert isinstance(related, list) and all("file_path" in i for i in related)
            assert "FILE " in await ok(s, "search", {"query": "invoice report"})  # packets stay the default
            assert "max_snippet_lines" in await err(s, "search", {"query": "x", "max_snippet_lines": 3})
            assert "format" in await err(s, "search", {"query": "x", "format": "xml"})
            assert "at least 0" in await err(s, "search", {"query": "x", "format": "json", "max_snippet_lines": -1})

    run(scenario)


def test_outline_tool_file_and_map(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("def hidden():\n    pass\n")

    async def scenario() -> None:
        async with session(repo) as s:
            text = await ok(s, "outline", {"path": "shop/app.py"})
            assert text.startswith("OUTLINE shop/app.py")
            assert "function: def compute_invoice_total(items, tax_rate):" in text
            assert "apply_discount" in text
            whole = await ok(s, "outline", {"path": ".", "max_chars": 400})
            assert whole.startswith("MAP .") and len(whole) <= 400
            assert re.search(r"^  \d+-\d+ function: def \w+\(", whole, re.M), whole
            focused = await ok(s, "outline", {"path": ".", "focus": "password hashing", "max_chars": 300})
            assert "_password(" in focused and "invoice" not in focused, focused
            assert "outside" in await err(s, "outline", {"path": "../outside.py"})
            assert "outside" in await err(s, "outline", {"path": str(tmp_path / "outside.py")})
            assert "nothing indexed" in await err(s, "outline", {"path": "nope"})

    run(scenario)


def test_search_says_when_nothing_matches(repo: Path) -> None:
    async def scenario() -> None:
        async with session(repo) as s:
            text = await ok(s, "search", {"query": "zzqqxxnotfound"})
            assert text.startswith("no confident match for 'zzqqxxnotfound'")
            assert sum(line.startswith("FILE ") for line in text.splitlines()) <= 3
            found = await ok(s, "search", {"query": "invoice total with tax"})
            assert not found.startswith("no confident match") and "compute_invoice_total" in found

    run(scenario)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_server_dies_on_sigint_and_sigterm_with_stdin_open(repo: Path, sig: int) -> None:
    """SIGINT became a KeyboardInterrupt whose shutdown waited on the thread reading stdin: the server
    answered nothing and lived until the client closed its stdin."""
    raw = RawServer(repo)
    try:
        raw.handshake()
        reply = raw.request(3, "tools/call", {"name": "search", "arguments": {"query": "invoice total"}})
        assert not reply["result"]["isError"]
        raw.proc.send_signal(sig)
        assert raw.proc.wait(timeout=60) == -sig
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
        raw.proc.communicate(timeout=60)
