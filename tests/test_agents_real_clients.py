"""Real clients read what `codepith install` wrote: Claude Code, Codex and OpenCode from npm, installed
into a temporary prefix.

``claude mcp list`` and ``opencode mcp list`` start every stdio server they know and report whether it
answered (offline: no account needed); ``codex mcp list --json`` parses config.toml; ``opencode agent list``
loads the sub-agent file. The npm installs (20-50 s each, side by side) go to a folder in the temp dir that
test_mcp_client.py shares and later runs reuse; without node/npm or the registry the tests are skipped
with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from codepith.surfaces.cli import main

NPM_DIR = Path(tempfile.gettempdir()) / "codepith-test-npm"  # shared with test_mcp_client.py: one install each
INSTALLS = {  # folder: (package, executable); one prefix each, so one package failing skips only its tests
    "claude-code": ("@anthropic-ai/claude-code", "claude"),
    "codex": ("@openai/codex", "codex"),
    "opencode": ("opencode-ai", "opencode"),
}


@pytest.fixture(scope="session")
def npm_installs() -> dict[str, Path | str]:
    """Each client's bin folder, or why it is missing; missing ones are installed side by side."""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        return {name: "node/npm not available: cannot install the real clients" for name in INSTALLS}
    procs = {}
    for name, (package, exe) in INSTALLS.items():
        prefix = NPM_DIR / name
        if not (prefix / "node_modules" / ".bin" / exe).exists():
            prefix.mkdir(parents=True, exist_ok=True)
            argv = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix), package]
            procs[name] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out: dict[str, Path | str] = {}
    for name, (package, exe) in INSTALLS.items():
        err = ""
        proc = procs.get(name)
        if proc is not None:
            try:
                _, err = proc.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                err = "timed out"
        bin_dir = NPM_DIR / name / "node_modules" / ".bin"
        if (bin_dir / exe).exists():
            out[name] = bin_dir
        else:
            out[name] = f"npm could not install {package}: {(err.strip().splitlines() or ['no output'])[-1]}"
    return out


def _bin(installs: dict[str, Path | str], name: str) -> Path:
    got = installs[name]
    if isinstance(got, str):
        pytest.skip(got)
    return got


@pytest.fixture(scope="session")
def npm_bin(npm_installs: dict[str, Path | str]) -> list[Path]:
    return [_bin(npm_installs, "claude-code"), _bin(npm_installs, "codex")]


@pytest.fixture(scope="session")
def opencode_bin(npm_installs: dict[str, Path | str]) -> Path:
    return _bin(npm_installs, "opencode")


@pytest.fixture
def client_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, npm_bin: list[Path]) -> dict[str, str]:
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
        "PATH": os.pathsep.join([*map(str, npm_bin), os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
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


def test_opencode_mcp_list_shows_codepith_connected_and_loads_the_subagent(
    client_env: dict[str, str], opencode_bin: Path
) -> None:
    env = {
        **client_env,
        "PATH": os.pathsep.join([str(opencode_bin), client_env["PATH"]]),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }
    assert main(["install", "--agent", "opencode", "--yes"]) == 0
    proc = _run(["opencode", "mcp", "list"], env)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    assert re.search(r"codepith\s+connected", plain), plain
    agents = _run(["opencode", "agent", "list"], env)
    assert re.search(r"^codepith-search \(subagent\)", agents.stdout, re.M), agents.stdout + agents.stderr
