"""MCP latency: time to tools/list, to the first search (cold and warm disk cache), warm search latency.

Speaks raw JSON-RPC to `codepith mcp REPO` over stdio (no client library in the timings).
By default it builds a ~2,000-file repository from the benchmark corpora (/work/corpora) in a
temporary folder; give --repo to measure your own. Usage:

    python benchmarks/mcp_latency.py [--repo DIR] [--files 2000] [--queries 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
CODE_EXT = {
    ".py",
    ".js",
    ".ts",
    ".go",
    ".rs",
    ".rb",
    ".php",
    ".java",
    ".c",
    ".h",
    ".cpp",
    ".hpp",
    ".tsx",
    ".jsx",
}
QUERIES = [
    "parse http request headers",
    "retry with exponential backoff",
    "validate user input schema",
    "open a database connection",
    "handle websocket messages",
    "serialize object to json",
    "middleware for authentication",
    "read configuration file",
    "router path parameters",
    "async task cancellation",
]


def build_corpus(dest: Path, files: int, corpora: Path) -> Path:
    """Copy code files from the benchmark corpora (sorted, round-robin over projects) until ``files``."""
    projects = sorted(p for p in corpora.iterdir() if p.is_dir())
    pools = []
    for proj in projects:
        found = sorted(p for p in proj.rglob("*") if p.is_file() and p.suffix in CODE_EXT and ".git" not in p.parts)
        pools.append((proj, found))
    copied = 0
    while copied < files and any(pool for _, pool in pools):
        for proj, pool in pools:
            if not pool or copied >= files:
                continue
            src = pool.pop(0)
            target = dest / proj.name / src.relative_to(proj)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            copied += 1
    return dest


class Server:
    def __init__(self, repo: Path, cache: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
        env["CODEPITH_CACHE_DIR"] = str(cache)
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codepith.surfaces.cli", "mcp", str(repo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0
        self.progress = 0

    def request(self, method: str, params: dict[str, Any] | None = None, progress: bool = False) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        rid = self.next_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = dict(params)
            if progress:
                msg["params"]["_meta"] = {"progressToken": f"p{rid}"}
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            if not select.select([self.proc.stdout], [], [], 300)[0]:
                raise SystemExit(f"no reply to {method} within 300 s")
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"server exited during {method}")
            reply = json.loads(line)
            if reply.get("method") == "notifications/progress":
                self.progress += 1
            if reply.get("id") == rid:
                if "error" in reply:
                    raise SystemExit(f"{method} failed: {reply['error']}")
                return dict(reply)

    def handshake(self) -> float:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        self.request("tools/list", {})
        return time.perf_counter() - self.t0

    def search(self, query: str, progress: bool = False) -> tuple[float, dict[str, Any]]:
        t = time.perf_counter()
        reply = self.request("tools/call", {"name": "search", "arguments": {"query": query}}, progress)
        if reply["result"].get("isError"):
            raise SystemExit(f"search failed: {reply['result']['content'][0]['text']}")
        return time.perf_counter() - t, reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measure(repo: Path, queries: int) -> dict[str, Any]:
    files = sum(1 for p in repo.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory(prefix="codepith-mcp-bench-") as tmp:
        cache = Path(tmp)
        cold = Server(repo, cache)
        t_list = cold.handshake()
        first, _ = cold.search(QUERIES[0], progress=True)
        t_first = time.perf_counter() - cold.t0
        lat = []
        for i in range(queries):
            took, _ = cold.search(QUERIES[i % len(QUERIES)])
            lat.append(took)
        # a saved file must show up in the next search: that search pays for the re-index of one file
        probe = next(p for p in sorted(repo.rglob("*.py")))
        original = probe.read_bytes()
        probe.write_bytes(original + b"\ndef zzz_fresh_probe_function():\n    return 1\n")
        try:
            t_edit, reply = cold.search("zzz_fresh_probe_function")
            seen = "zzz_fresh_probe_function" in reply["result"]["content"][0]["text"]
        finally:
            probe.write_bytes(original)
        progress = cold.progress
        cold.close()
        warm = Server(repo, cache)
        warm_list = warm.handshake()
        warm_first, _ = warm.search(QUERIES[1])
        t_warm_first = time.perf_counter() - warm.t0
        warm.close()
    return {
        "files": files,
        "tools_list_s": round(t_list, 3),
        "first_search_cold_s": round(t_first, 3),
        "first_search_cold_call_s": round(first, 3),
        "progress_notifications": progress,
        "warm_search_median_ms": round(statistics.median(lat) * 1000, 1),
        "warm_search_p90_ms": round(sorted(lat)[int(0.9 * (len(lat) - 1))] * 1000, 1),
        "search_after_edit_ms": round(t_edit * 1000, 1),
        "edit_seen": seen,
        "restart_tools_list_s": round(warm_list, 3),
        "restart_first_search_s": round(t_warm_first, 3),
        "restart_first_search_call_s": round(warm_first, 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, help="repository to serve (default: build one from --corpora)")
    ap.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="codepith-mcp-repo-") as tmp:
        repo = args.repo or build_corpus(Path(tmp) / "bench-repo", args.files, args.corpora)
        result = measure(repo.resolve(), args.queries)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
