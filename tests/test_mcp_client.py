"""Real MCP clients see the server: Claude Code reports it connected; Codex reads it from config.toml.

The npm packages are installed once into a folder under the system temp dir and reused by re-runs.
Skipped only where npm (or node) is not available.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
NPM_DIR = Path(tempfile.gettempdir()) / "codepith-test-npm"

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="npm/node not available: cannot install clients",
)


def npm_bin(package: str, folder: str, binary: str) -> Path:
    """``binary`` of ``package``, installed with npm into NPM_DIR/folder unless already there."""
    prefix = NPM_DIR / folder
    exe = prefix / "node_modules" / ".bin" / binary
    if not exe.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, f"npm install {package} failed: {proc.stderr[-2000:]}"
    assert exe.exists(), f"{package} installed no {binary} binary"
    return exe


def client_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_"))}
    env["HOME"] = str(home)
    env["DISABLE_AUTOUPDATER"] = "1"
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return env


def server_command(repo: Path) -> list[str]:
    return [sys.executable, "-m", "codepith.surfaces.cli", "mcp", str(repo)]


def server_env() -> dict[str, str]:
    return {
        "PYTHONPATH": str(SRC),
        "CODEPITH_CACHE_DIR": os.environ["CODEPITH_CACHE_DIR"],
        "HF_HUB_OFFLINE": "1",
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "main.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    return root


def test_claude_code_reports_codepith_connected(repo: Path, tmp_path: Path) -> None:
    claude = npm_bin("@anthropic-ai/claude-code", "claude-code", "claude")
    home = tmp_path / "home"
    home.mkdir()
    env = client_env(home)
    add = ["mcp", "add", "codepith"]
    for key, value in server_env().items():
        add += ["-e", f"{key}={value}"]
    add += ["--", *server_command(repo)]
    proc = subprocess.run([str(claude), *add], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    listed = subprocess.run(
        [str(claude), "mcp", "list"], cwd=repo, env=env, capture_output=True, text=True, timeout=180
    )
    assert listed.returncode == 0, listed.stderr
    line = next((ln for ln in listed.stdout.splitlines() if ln.startswith("codepith")), "")
    assert "Connected" in line and "Failed" not in line, listed.stdout


def test_codex_reads_codepith_from_config_toml(repo: Path, tmp_path: Path) -> None:
    codex = npm_bin("@openai/codex", "codex", "codex")
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    cmd = server_command(repo)
    env_toml = ", ".join(f"{k} = {json.dumps(v)}" for k, v in server_env().items())
    (codex_home / "config.toml").write_text(
        "[mcp_servers.codepith]\n"
        f"command = {json.dumps(cmd[0])}\n"
        f"args = {json.dumps(cmd[1:])}\n"
        f"env = {{ {env_toml} }}\n"
    )
    env = client_env(home)
    env["CODEX_HOME"] = str(codex_home)
    proc = subprocess.run(
        [str(codex), "mcp", "list", "--json"], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    servers = {s["name"]: s for s in json.loads(proc.stdout)}
    assert servers["codepith"]["enabled"] is True
    assert servers["codepith"]["transport"]["args"][-2:] == ["mcp", str(repo)]
