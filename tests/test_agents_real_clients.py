"""Real clients read what `codepith install` wrote: Claude Code and Codex from npm, in a temporary prefix.

``claude mcp list`` starts every stdio server it knows and reports whether it answered (offline: no
account needed); ``codex mcp list --json`` parses config.toml. The npm install (about 20 s) happens once
per test session; without node/npm or the registry the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codepith.surfaces.cli import main

PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex")


@pytest.fixture(scope="session")
def npm_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        pytest.skip("node/npm not available: cannot install the real Claude Code and Codex clients")
    prefix = tmp_path_factory.mktemp("npm-clients")
    try:
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm install of the real clients timed out")
    bin_dir = prefix / "node_modules" / ".bin"
    if proc.returncode != 0 or not (bin_dir / "claude").exists() or not (bin_dir / "codex").exists():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"npm could not install {' '.join(PACKAGES)}: {last}")
    return bin_dir


@pytest.fixture
def client_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, npm_bin: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("def handler():\n    return 1\n")
    env = {
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "PATH": os.pathsep.join([str(npm_bin), os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    for key in ("CLAUDE_CONFIG_DIR", "OPENCODE_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(project)
    keep = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "CODEPITH_CACHE_DIR", "HF_HUB_OFFLINE")}
    return {**keep, **env}


def _run(argv: list[str], env: dict[str, str], timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=os.getcwd(), capture_output=True, text=True, timeout=timeout)


def test_claude_mcp_list_shows_codepith_connected(client_env: dict[str, str]) -> None:
    assert main(["install", "--agent", "claude", "--type", "mcp", "--yes"]) == 0
    proc = _run(["claude", "mcp", "list"], client_env)
    out = proc.stdout + proc.stderr
    line = next((x for x in out.splitlines() if x.startswith("codepith:")), "")
    assert re.search(r"Connected", line), out
    # and uninstall takes it out again as far as Claude Code is concerned
    assert main(["uninstall", "--agent", "claude", "--type", "mcp", "--yes"]) == 0
    proc = _run(["claude", "mcp", "list"], client_env)
    assert "codepith:" not in proc.stdout


def test_claude_project_scope_mcp_json_is_read(client_env: dict[str, str]) -> None:
    assert main(["install", "--agent", "claude", "--type", "mcp", "--scope", "project", "--yes"]) == 0
    proc = _run(["claude", "mcp", "get", "codepith"], client_env)
    assert "Project" in proc.stdout or "project" in proc.stdout, proc.stdout + proc.stderr


def test_codex_mcp_list_lists_codepith(client_env: dict[str, str]) -> None:
    assert main(["install", "--agent", "codex", "--type", "mcp", "--yes"]) == 0
    proc = _run(["codex", "mcp", "list", "--json"], client_env)
    assert proc.returncode == 0, proc.stderr
    servers = {s["name"]: s for s in json.loads(proc.stdout)}
    entry = servers["codepith"]
    assert entry["enabled"] is True
    assert Path(entry["transport"]["command"]).is_absolute()
    assert "mcp" in entry["transport"]["args"]
    assert entry["startup_timeout_sec"] == 30
    plain = _run(["codex", "mcp", "list"], client_env)
    assert re.search(r"^codepith\s", plain.stdout, re.M), plain.stdout
