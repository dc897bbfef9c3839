"""`codepith install` / `uninstall` against temporary home folders, one client at a time.

Each client gets: a fresh install, a re-install that changes nothing, an install beside other servers and
comments (kept), an uninstall back to the original bytes, and an unparsable file (untouched, clear error,
non-zero exit). The commands run through the real entry point (``cli.main``) on real files.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codepith.agents import jsonc
from codepith.agents.texts import BLOCK_LIMIT, block_cost, instruction_block
from codepith.surfaces.cli import main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomlkit as tomllib  # type: ignore[no-redef]


@dataclass
class Home:
    root: Path
    home: Path
    project: Path

    @property
    def claude_dir(self) -> Path:
        return self.home / "claude-config"

    @property
    def codex_home(self) -> Path:
        return self.home / "codex-home"

    @property
    def xdg_config(self) -> Path:
        return self.home / "xdg-config"

    @property
    def opencode_config(self) -> Path:
        return self.home / "oc" / "opencode.json"

    @property
    def state(self) -> Path:
        return self.home / "state"

    def environ(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.claude_dir),
            "CODEX_HOME": str(self.codex_home),
            "XDG_CONFIG_HOME": str(self.xdg_config),
            "XDG_STATE_HOME": str(self.state),
            "OPENCODE_CONFIG": str(self.opencode_config),
            "PATH": os.path.dirname(sys.executable),  # no agent executables: detection sees folders only
        }


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    h = Home(tmp_path, tmp_path / "home", tmp_path / "project")
    h.home.mkdir()
    h.project.mkdir()
    for key, value in h.environ().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("APPDATA", raising=False)
    monkeypatch.chdir(h.project)
    return h


def cli(*args: str) -> int:
    return main(list(args))


def launcher_command() -> str:
    beside = Path(os.path.abspath(sys.executable)).parent / "codepith"
    return str(beside) if beside.is_file() else os.path.abspath(sys.executable)


def only_added(before: str, after: str) -> bool:
    """``after`` is ``before`` plus new lines, except that a line may have gained a trailing comma."""
    removed = [line[2:] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("- ")]
    added = {line[2:] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("+ ")}
    return all(line + "," in added or line.rstrip() + "," in added for line in removed)


def load_json(text: str) -> Any:
    return json.loads(text)


def load_jsonc(text: str) -> Any:
    return jsonc.parse(text).value


def load_toml(text: str) -> Any:
    return tomllib.loads(text)


@dataclass(frozen=True)
class Case:
    agent: str
    scope: str
    path: Callable[[Home], Path]
    load: Callable[[str], Any]
    entry: Callable[[Any], Any]  # the codepith entry in the loaded document
    others: Callable[[Any], Any]  # what of the other settings must survive
    beside: str
    broken: str


CASES = [
    Case(
        "claude",
        "user",
        lambda h: h.claude_dir / ".claude.json",
        load_json,
        lambda d: d["mcpServers"]["codepith"],
        lambda d: (d["numStartups"], d["projects"], d["mcpServers"]["other"], d["userID"]),
        """{
  "numStartups": 3,
  "projects": {
    "/work/x": {
      "allowedTools": []
    }
  },
  "mcpServers": {
    "other": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "other-server"
      ],
      "env": {}
    }
  },
  "userID": "abc"
}""",
        '{\n  "mcpServers": {\n    "x": \n}\n',
    ),
    Case(
        "claude",
        "project",
        lambda h: h.project / ".mcp.json",
        load_json,
        lambda d: d["mcpServers"]["codepith"],
        lambda d: d["mcpServers"]["db"],
        '{\n  "mcpServers": {\n    "db": {"command": "pg-mcp", "args": []}\n  }\n}\n',
        "{ mcpServers: {} }\n",
    ),
    Case(
        "codex",
        "user",
        lambda h: h.codex_home / "config.toml",
        load_toml,
        lambda d: d["mcp_servers"]["codepith"],
        lambda d: (d["model"], d["mcp_servers"]["docs"], d["profiles"]),
        """# Codex settings (hand-written)
model = "gpt-5" # the default

[mcp_servers.docs]
command = "npx"   # keep this comment
args = ["-y", "docs-mcp"]

# profiles below
[profiles.fast]
model = "gpt-5-mini"
""",
        '[mcp_servers\ncommand = "x"\n',
    ),
    Case(
        "cursor",
        "user",
        lambda h: h.home / ".cursor" / "mcp.json",
        load_json,
        lambda d: d["mcpServers"]["codepith"],
        lambda d: d["mcpServers"]["github"],
        '{\n    "mcpServers": {\n        "github": { "command": "docker", "args": ["run", "gh"] }\n    }\n}\n',
        '{"mcpServers": {"github": {"command": "docker",}\n',
    ),
    Case(
        "opencode",
        "user",
        lambda h: h.opencode_config,
        load_jsonc,
        lambda d: d["mcp"]["codepith"],
        lambda d: (d["$schema"], d["mcp"]["jira"], d["theme"]),
        """{
  "$schema": "https://opencode.ai/config.json",
  // my servers
  "mcp": {
    "jira": {
      "type": "remote",
      "url": "https://jira.example.com/mcp", /* team */
      "enabled": true,
    },
  },
  "theme": "opencode",
}
""",
        '{\n  "mcp": {\n    "jira": {"type": "remote" "url": "x"}\n  }\n}\n',
    ),
    Case(
        "gemini",
        "user",
        lambda h: h.home / ".gemini" / "settings.json",
        load_json,
        lambda d: d["mcpServers"]["codepith"],
        lambda d: (d["theme"], d["mcpServers"]["pythonTools"]),
        """{
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server"],
      "timeout": 15000
    }
  }
}
""",
        '{\n  "theme": "GitHub",\n  "mcpServers": {\n',
    ),
    Case(
        "vscode",
        "project",
        lambda h: h.project / ".vscode" / "mcp.json",
        load_jsonc,
        lambda d: d["servers"]["codepith"],
        lambda d: (d["inputs"], d["servers"]["memory"]),
        """{
  // Workspace MCP servers
  "inputs": [
    { "type": "promptString", "id": "token", "description": "API token", "password": true }
  ],
  "servers": {
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"]
    }
  }
}
""",
        '{\n  "servers": {\n    "memory": {\n      "type": "stdio",\n      "command": npx\n    }\n  }\n}\n',
    ),
]

IDS = [f"{c.agent}-{c.scope}" for c in CASES]


def install(case: Case, *extra: str) -> int:
    return cli("install", "--agent", case.agent, "--type", "mcp", "--scope", case.scope, "--yes", *extra)


def uninstall(case: Case, *extra: str) -> int:
    return cli("uninstall", "--agent", case.agent, "--type", "mcp", "--scope", case.scope, "--yes", *extra)


def check_entry(case: Case, entry: Any) -> None:
    command = launcher_command()
    if case.agent == "opencode":
        assert entry["type"] == "local" and entry["enabled"] is True
        argv = entry["command"]
    else:
        argv = [entry["command"], *entry["args"]]
    assert Path(argv[0]).is_absolute() and argv[0] == command
    assert "mcp" in argv
    if case.agent == "codex":
        assert entry["startup_timeout_sec"] >= 30
    if case.agent in ("claude", "vscode"):
        assert entry["type"] == "stdio"
    if case.agent in ("cursor", "vscode"):
        assert argv[-1] == "${workspaceFolder}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fresh_install_then_reinstall_changes_nothing(case: Case, home: Home) -> None:
    path = case.path(home)
    assert install(case) == 0
    first = path.read_bytes()
    check_entry(case, case.entry(case.load(first.decode())))
    if case.load is load_jsonc:  # a fresh file is plain JSON whatever the client accepts
        json.loads(first)
    assert install(case) == 0
    assert path.read_bytes() == first


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_install_beside_other_servers_and_comments_then_uninstall_restores_bytes(
    case: Case, home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    path = case.path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.beside)
    original = path.read_bytes()
    assert install(case) == 0
    text = path.read_text()
    doc = case.load(text)
    check_entry(case, case.entry(doc))
    assert case.others(doc) == case.others(case.load(case.beside))
    assert only_added(case.beside, text), text  # every comment and line of the person's file is still there
    assert install(case) == 0 and path.read_text() == text  # re-install: no change
    capsys.readouterr()
    assert uninstall(case) == 0
    assert path.read_bytes() == original
    assert "restored" in capsys.readouterr().out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_uninstall_after_the_file_changed_cuts_only_codepith(case: Case, home: Home) -> None:
    """A client rewrites its own file after install (Claude Code does, all the time): uninstall keeps
    those changes and removes codepith's entry alone."""
    path = case.path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.beside)
    assert install(case) == 0
    edited = path.read_text()
    if case.load is load_toml:
        edited += '\n[mcp_servers.later]\ncommand = "added-later"\n'
        later = ("mcp_servers", "later")
    else:
        edited, _ = jsonc.set_member(edited, ("addedLater",), True)
        later = ("addedLater",)
    path.write_text(edited)
    assert uninstall(case) == 0
    doc = case.load(path.read_text())
    with pytest.raises(KeyError):
        case.entry(doc)
    assert case.others(doc) == case.others(case.load(case.beside))
    node: Any = doc
    for key in later:
        node = node[key]
    assert node in (True, {"command": "added-later"})
    if case.load is not load_toml:  # and the text is the person's text plus the later change
        assert path.read_text() == jsonc.set_member(case.beside, ("addedLater",), True)[0]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_unparsable_file_is_left_untouched_with_a_clear_error(
    case: Case, home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    path = case.path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.broken)
    before = path.read_bytes()
    assert install(case) != 0
    err = capsys.readouterr().err
    assert str(path) in err and "left untouched" in err and "line" in err
    assert "Traceback" not in err
    assert path.read_bytes() == before
    assert not (home.state / "codepith" / "backups").exists()
    assert uninstall(case) != 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_foreign_codepith_entry_is_left_alone_unless_forced(
    case: Case, home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    path = case.path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    if case.load is load_toml:
        path.write_text(case.beside + '\n[mcp_servers.codepith]\ncommand = "uvx"\nargs = ["codepith", "mcp"]\n')
    else:
        path.write_text(jsonc.set_member(case.beside, case_where(case), {"command": "uvx", "args": ["codepith"]})[0])
    original = path.read_bytes()
    assert install(case) == 1
    assert "did not write" in capsys.readouterr().err
    assert path.read_bytes() == original
    assert uninstall(case) == 1  # not ours to remove either
    assert path.read_bytes() == original
    assert install(case, "--force") == 0
    check_entry(case, case.entry(case.load(path.read_text())))
    assert uninstall(case) == 0
    assert path.read_bytes() == original  # the person's own entry is back, byte for byte


def case_where(case: Case) -> tuple[str, ...]:
    return {"opencode": ("mcp", "codepith"), "vscode": ("servers", "codepith")}.get(
        case.agent, ("mcpServers", "codepith")
    )


def test_opencode_default_location_and_newer_servers_layout(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENCODE_CONFIG")
    path = home.xdg_config / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n  "mcp": {\n    "servers": {\n      "a": {"type": "local", "command": ["a"]}\n    }\n  }\n}\n')
    assert cli("install", "--agent", "opencode", "--type", "mcp", "--yes") == 0
    entry = json.loads(path.read_text())["mcp"]["servers"]["codepith"]
    assert entry["type"] == "local" and entry["command"][0] == launcher_command() and "enabled" not in entry


def test_symlinked_config_is_written_through_the_link(home: Home) -> None:
    real = home.root / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{\n  "theme": "x"\n}\n')
    link = home.home / ".gemini" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    assert link.is_symlink()
    assert json.loads(real.read_text())["mcpServers"]["codepith"]["command"] == launcher_command()


# -- instructions and sub-agents -----------------------------------------------------------------------


def test_instruction_block_is_short_and_names_the_tools() -> None:
    block = instruction_block()
    chars, tokens = block_cost()
    assert chars == len(block) < BLOCK_LIMIT
    assert tokens * 4 >= chars
    for tool in ("search", "find_related", "read_snippet", "run_tests", "outline"):
        assert f"`{tool}" in block
    assert "grep" in block


def test_instructions_in_agents_md_keep_the_persons_text(home: Home) -> None:
    agents_md = home.codex_home / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    agents_md.write_text("# My rules\n\nAlways run make lint.\n")
    original = agents_md.read_bytes()
    assert cli("install", "--agent", "codex", "--type", "instructions", "--yes") == 0
    text = agents_md.read_text()
    assert text.startswith("# My rules\n\nAlways run make lint.\n\n<!-- codepith:begin")
    assert instruction_block() in text
    assert cli("install", "--agent", "codex", "--type", "instructions", "--yes") == 0
    assert agents_md.read_text() == text
    # the person edits their part afterwards: uninstall keeps the edit, removes the block
    agents_md.write_text(text.replace("make lint", "make check"))
    assert cli("uninstall", "--agent", "codex", "--type", "instructions", "--yes") == 0
    assert agents_md.read_bytes() == original.replace(b"make lint", b"make check")


def test_instructions_shared_file_is_one_block_and_created_file_goes_away(home: Home) -> None:
    """Codex and OpenCode at project scope both read ./AGENTS.md: one block, and uninstall deletes the
    file install created."""
    agents = "--agent codex --agent opencode --type instructions --scope project --yes".split()
    assert cli("install", *agents) == 0
    text = (home.project / "AGENTS.md").read_text()
    assert text.count("codepith:begin") == 1
    assert cli("uninstall", *agents) == 0
    assert not (home.project / "AGENTS.md").exists()


def test_claude_md_and_subagent_install_and_uninstall(home: Home) -> None:
    claude_md = home.claude_dir / "CLAUDE.md"
    claude_md.parent.mkdir(parents=True)
    claude_md.write_text("Use British spelling.")  # no final newline
    original = claude_md.read_bytes()
    assert cli("install", "--agent", "claude", "--yes") == 0
    agent = home.claude_dir / "agents" / "codepith-search.md"
    text = agent.read_text()
    assert text.startswith("---\nname: codepith-search\n")
    assert "mcp__codepith__search" in text and "tools:" in text
    assert "<!-- codepith:begin" in claude_md.read_text()
    assert cli("uninstall", "--agent", "claude", "--yes") == 0
    assert not agent.exists()
    assert claude_md.read_bytes() == original
    assert not (home.claude_dir / ".claude.json").exists()


def test_opencode_subagent_and_foreign_agent_file(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    monkey_dir = home.xdg_config / "opencode" / "agents"
    monkey_dir.mkdir(parents=True)
    mine = monkey_dir / "codepith-search.md"
    mine.write_text("---\ndescription: my own\nmode: subagent\n---\nhello\n")
    assert cli("install", "--agent", "opencode", "--type", "subagent", "--yes") == 1
    assert "did not write" in capsys.readouterr().err
    assert mine.read_text().endswith("hello\n")
    mine.unlink()
    assert cli("install", "--agent", "opencode", "--type", "subagent", "--yes") == 0
    assert "mode: subagent" in mine.read_text()
    assert cli("uninstall", "--agent", "opencode", "--type", "subagent", "--yes") == 0
    assert not mine.exists()


# -- choosing, dry runs and scripts --------------------------------------------------------------------


def test_dry_run_prints_the_diff_and_writes_nothing(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    path = home.home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "theme": "x"\n}\n')
    assert cli("install", "--agent", "gemini", "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"--- {path}" in out and f"+++ {path}" in out
    assert '-  "theme": "x"\n+  "theme": "x",' in out and '+    "codepith": {' in out
    assert path.read_text() == '{\n  "theme": "x"\n}\n'
    assert not (home.home / ".gemini" / "GEMINI.md").exists()
    assert not home.state.exists()


def test_without_terminal_or_yes_nothing_is_written(home: Home) -> None:
    (home.home / ".cursor").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "codepith", "install"],
        cwd=home.project,
        env={**os.environ, **home.environ()},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Cursor" in proc.stdout and "mcp.json" in proc.stdout  # what would be done
    assert "--yes" in proc.stderr and "nothing written" in proc.stderr
    assert not (home.home / ".cursor" / "mcp.json").exists()


def test_detection_and_yes_install_into_detected_clients_only(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    (home.home / ".gemini").mkdir()
    home.codex_home.mkdir()
    assert cli("install", "--type", "mcp", "--yes") == 0
    assert (home.home / ".gemini" / "settings.json").exists()
    assert (home.codex_home / "config.toml").exists()
    assert not (home.home / ".cursor").exists()
    assert not (home.claude_dir / ".claude.json").exists()


def test_no_client_detected_is_a_clear_error(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("install", "--yes") == 2
    assert "no agent client found" in capsys.readouterr().err


def test_unknown_agent_is_a_usage_error(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("install", "--agent", "emacs", "--yes") == 2
    assert "unknown agent 'emacs'" in capsys.readouterr().err


def test_interactive_choice_and_confirmation(home: Home) -> None:
    from codepith.agents.clients import Env
    from codepith.agents.install import Options, Ui, run

    (home.home / ".gemini").mkdir()
    answers = iter(["5", "y"])  # 5 = Gemini CLI in the listed order
    shown: list[str] = []
    ui = Ui(shown.append, shown.append, lambda prompt: (shown.append(prompt), next(answers))[1], True)
    env = Env.from_os()
    assert run("install", Options(kinds=("mcp",)), env, ui) == 0
    assert any("* Gemini CLI" in line for line in shown)
    assert (home.home / ".gemini" / "settings.json").exists()
    declined = iter(["", "n"])
    ui = Ui(shown.append, shown.append, lambda prompt: next(declined), True)
    assert run("uninstall", Options(kinds=("mcp",)), env, ui) == 1
    assert (home.home / ".gemini" / "settings.json").exists()


def test_python_dash_m_codepith_runs_the_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "codepith", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("codepith ")


def test_a_throwaway_uvx_environment_is_warned_about(home: Home) -> None:
    from codepith.agents.clients import Env
    from codepith.agents.install import Options, Ui, run
    from codepith.agents.launcher import Launcher

    (home.home / ".gemini").mkdir()
    lines: list[str] = []
    ui = Ui(lines.append, lines.append, lambda prompt: "", False)
    uvx = Launcher(str(home.home / ".cache/uv/archive-v0/abc/bin/codepith"), ())
    assert run("install", Options(kinds=("mcp",), dry_run=True), Env.from_os(), ui, uvx) == 0
    assert any("temporary environment" in line for line in lines)


def test_an_old_block_without_a_record_is_updated_and_uninstall_cuts_it(home: Home) -> None:
    """State lost (another machine, a cleaned state folder): the markers still say which text is codepith's."""
    from codepith.agents.markdown import wrap

    agents_md = home.codex_home / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    agents_md.write_text(f"# Mine\n\n{wrap('an older codepith block')}\n")
    assert cli("install", "--agent", "codex", "--type", "instructions", "--yes") == 0
    assert instruction_block() in agents_md.read_text() and "older" not in agents_md.read_text()
    assert cli("uninstall", "--agent", "codex", "--type", "instructions", "--yes") == 0
    assert agents_md.read_text() == "# Mine\n"


def test_a_file_changed_while_asking_is_left_alone(home: Home) -> None:
    """Claude Code rewrites ~/.claude.json often: a change between plan and write must not be lost."""
    from codepith.agents.clients import Env
    from codepith.agents.install import Options, Ui, run

    path = home.claude_dir / ".claude.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n  "numStartups": 1\n}\n')
    lines: list[str] = []

    def ask(prompt: str) -> str:
        path.write_text('{\n  "numStartups": 2\n}\n')  # the client writes while the person reads the plan
        return "y"

    ui = Ui(lines.append, lines.append, ask, True)
    assert run("install", Options(agents=("claude",), kinds=("mcp",)), Env.from_os(), ui) == 1
    assert path.read_text() == '{\n  "numStartups": 2\n}\n'
    assert any("changed since the plan was made" in line for line in lines)


def test_backups_are_private(home: Home) -> None:
    path = home.claude_dir / ".claude.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"oauthAccount": {"emailAddress": "me@example.com"}}\n')
    path.chmod(0o600)
    assert install(CASES[0]) == 0
    assert path.stat().st_mode & 0o777 == 0o600
    backups = list((home.state / "codepith" / "backups").iterdir())
    assert backups and all(b.stat().st_mode & 0o777 == 0o600 for b in backups)


def test_records_of_entries_removed_by_hand_are_dropped(home: Home) -> None:
    from codepith.agents.clients import Env
    from codepith.agents.state import State, state_dir

    assert cli("install", "--agent", "gemini", "--yes") == 0
    state = State(state_dir(Env.from_os()))
    assert len(state.records) == 2  # settings.json entry and GEMINI.md block
    (home.home / ".gemini" / "settings.json").unlink()
    (home.home / ".gemini" / "GEMINI.md").write_text("mine\n")
    assert cli("uninstall", "--agent", "gemini", "--yes") == 0
    assert State(state_dir(Env.from_os())).records == {}
    assert (home.home / ".gemini" / "GEMINI.md").read_text() == "mine\n"


def test_project_scope_writes_the_projects_files(home: Home) -> None:
    agents = [a for c in ("claude", "codex", "cursor", "opencode", "gemini", "vscode") for a in ("--agent", c)]
    assert cli("install", *agents, "--scope", "project", "--yes") == 0
    p = home.project
    assert json.loads((p / ".mcp.json").read_text())["mcpServers"]["codepith"]["type"] == "stdio"
    assert load_toml((p / ".codex" / "config.toml").read_text())["mcp_servers"]["codepith"]["args"] == ["mcp"]
    assert "codepith" in json.loads((p / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert json.loads((p / "opencode.json").read_text())["mcp"]["codepith"]["type"] == "local"
    assert "codepith" in json.loads((p / ".gemini" / "settings.json").read_text())["mcpServers"]
    assert "codepith" in json.loads((p / ".vscode" / "mcp.json").read_text())["servers"]
    for name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md"):
        assert (p / name).read_text().count("<!-- codepith:begin") == 1
    assert (p / ".claude" / "agents" / "codepith-search.md").exists()
    assert (p / ".opencode" / "agents" / "codepith-search.md").exists()
    assert [f.name for f in home.home.iterdir()] == ["state"]  # only codepith's record in the user's folders
    assert cli("uninstall", *agents, "--scope", "project", "--yes") == 0
    assert sorted(str(f.relative_to(p)) for f in p.rglob("*")) == []  # folders install made are gone too


def test_vscode_user_scope_goes_to_the_profile_folder(home: Home) -> None:
    assert cli("install", "--agent", "vscode", "--type", "mcp", "--yes") == 0
    path = home.xdg_config / "Code" / "User" / "mcp.json"
    assert json.loads(path.read_text())["servers"]["codepith"]["args"][-1] == "${workspaceFolder}"


# -- files that cannot be written ----------------------------------------------------------------------


def test_a_config_that_cannot_be_written_stops_only_itself(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only config folder: one line for that file, the other clients are still set up, exit 1."""
    from codepith.agents import writes

    settings = home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": 1}\n')
    real_write = writes.write_atomic

    def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
        if path == settings:  # the tests run as root too, where a read-only folder is no obstacle
            raise PermissionError(13, "Permission denied", str(path))
        real_write(path, data, mode)

    monkeypatch.setattr(writes, "write_atomic", write_atomic)
    assert cli("install", "--agent", "gemini", "--agent", "cursor", "--type", "mcp", "--yes") == 1
    err = capsys.readouterr().err
    assert f"cannot write {settings} (Permission denied); untouched" in err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1
    assert settings.read_text() == '{"theme": 1}\n'
    assert "codepith" in json.loads((home.home / ".cursor" / "mcp.json").read_text())["mcpServers"]


def test_a_config_is_not_changed_when_its_install_record_cannot_be_saved(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unwritable state folder: uninstall could not undo the edit, so no config is edited at all."""
    from codepith.agents import state, writes

    real_write = writes.write_atomic

    def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
        if home.state in path.parents:  # a read-only state folder (the tests may run as root: simulated)
            raise PermissionError(13, "Permission denied", str(path))
        real_write(path, data, mode)

    monkeypatch.setattr(writes, "write_atomic", write_atomic)
    monkeypatch.setattr(state, "write_atomic", write_atomic)
    settings = home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": 1}\n')
    assert cli("install", "--agent", "gemini", "--agent", "cursor", "--type", "mcp", "--yes") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "internal error" not in "\n".join(err)
    assert "cannot keep a backup copy of" in err[0] and str(settings) in err[0]
    assert "cannot save the install record" in err[1] and "mcp.json left as it was" in err[1]
    assert settings.read_text() == '{"theme": 1}\n'
    assert not (home.home / ".cursor").exists()  # the new file and the folder made for it are gone again


def test_an_install_record_that_cannot_be_read_is_never_written_over(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records say what earlier installs changed, which only they let uninstall undo: a record file that
    cannot be read stops install and uninstall before anything is written (a dry run still shows its plan)."""
    record = home.state / "codepith" / "installed.json"
    assert cli("install", "--agent", "cursor", "--type", "mcp", "--yes") == 0
    kept = record.read_text()
    record.write_text(kept[: len(kept) // 2])  # cut short, as a full disk or a crash may leave it
    capsys.readouterr()
    for action in ("install", "uninstall"):
        assert cli(action, "--agent", "gemini", "--type", "mcp", "--yes") == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot read the install record" in err[0] and "nothing written" in err[0], err
        assert record.read_text() == kept[: len(kept) // 2]
    assert not (home.home / ".gemini").exists()
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--dry-run") in (0, 1)
    assert "cannot read the install record" in capsys.readouterr().err


def test_records_a_version_cannot_read_are_kept_for_the_one_that_can(home: Home) -> None:
    """A record with a field this version does not know still counts; one it cannot read at all is
    written back untouched, not dropped, when other records change."""
    import json

    record = home.state / "codepith" / "installed.json"
    assert cli("install", "--agent", "cursor", "--type", "mcp", "--yes") == 0
    data = json.loads(record.read_text())
    data["records"][0]["from_a_later_version"] = [1, 2]
    foreign = {"path": "/elsewhere/config.json", "written_by": "codepith 9"}
    data["records"].append(foreign)
    record.write_text(json.dumps(data))
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    saved = json.loads(record.read_text())["records"]
    assert foreign in saved and any(r["path"].endswith("settings.json") for r in saved)
    cursor = home.home / ".cursor" / "mcp.json"
    assert cli("uninstall", "--agent", "cursor", "--type", "mcp", "--yes") == 0
    assert not cursor.exists()  # its record (with the unknown field) was read and used
    assert foreign in json.loads(record.read_text())["records"]


# -- comments kept -------------------------------------------------------------------------------------


def test_a_jsonc_file_of_only_comments_keeps_them(home: Home) -> None:
    """VS Code's mcp.json is often just commented-out examples: install writes the document after them,
    and uninstall (the file edited since: cut mode) takes the document away again, comments kept."""
    path = home.xdg_config / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    comments = '// MCP servers for VS Code\n// {"servers": {"github": {"url": "https://example.com/mcp/"}}}\n'
    path.write_text(comments)
    assert cli("install", "--agent", "vscode", "--type", "mcp", "--yes") == 0
    text = path.read_text()
    assert text.startswith(comments) and "codepith" in jsonc.get(text, ("servers",))
    path.write_text(text.replace("VS Code", "VS Code (mine)", 1))
    assert cli("uninstall", "--agent", "vscode", "--type", "mcp", "--yes") == 0
    assert path.read_text() == comments.replace("VS Code", "VS Code (mine)", 1)


# -- files shared between clients ----------------------------------------------------------------------


def test_claude_md_linked_to_agents_md_is_one_file(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    """A common convention: CLAUDE.md a symlink to AGENTS.md. Both names are one file, planned once."""
    agents_md = home.project / "AGENTS.md"
    agents_md.write_text("# Rules\n")
    (home.project / "CLAUDE.md").symlink_to("AGENTS.md")
    both = ("--scope", "project", "--agent", "claude", "--agent", "cursor", "--type", "instructions", "--yes")
    assert cli("install", *both) == 0
    assert agents_md.read_text().count("<!-- codepith:begin") == 1
    assert (home.project / "CLAUDE.md").is_symlink()
    assert cli("uninstall", *both) == 0
    assert "changed since the plan" not in capsys.readouterr().err
    assert agents_md.read_text() == "# Rules\n" and (home.project / "CLAUDE.md").is_symlink()


def test_a_shared_block_stays_while_another_installed_client_uses_it(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex and Cursor both read ./AGENTS.md: uninstalling Codex keeps the block for Cursor, and says so."""
    project = ("--scope", "project", "--type", "instructions", "--yes")
    agents_md = home.project / "AGENTS.md"
    assert cli("install", "--agent", "codex", "--agent", "cursor", *project) == 0
    block = agents_md.read_text()
    capsys.readouterr()
    assert cli("uninstall", "--agent", "codex", *project) == 0
    assert f"kept in {agents_md}: Cursor still uses it" in capsys.readouterr().out
    assert agents_md.read_text() == block
    assert cli("uninstall", "--agent", "cursor", *project) == 0
    assert not agents_md.exists()
    # a client that joins later (the block is already there) counts as a user too
    assert cli("install", "--agent", "codex", *project) == 0
    assert cli("install", "--agent", "vscode", *project) == 0
    assert cli("uninstall", "--agent", "codex", *project) == 0
    assert agents_md.read_text() == block
    assert cli("uninstall", "--agent", "vscode", *project) == 0
    assert not agents_md.exists()


def test_end_of_input_at_a_question_writes_nothing(home: Home) -> None:
    """Ctrl-D at either question is a no: nothing written, exit 1, no internal error."""
    from codepith.agents.clients import Env
    from codepith.agents.install import Options, Ui, run

    (home.home / ".gemini").mkdir()
    lines: list[str] = []

    def eof(prompt: str) -> str:
        raise EOFError

    ui = Ui(lines.append, lines.append, eof, True)
    assert run("install", Options(kinds=("mcp",)), Env.from_os(), ui) == 1
    assert run("install", Options(agents=("gemini",), kinds=("mcp",)), Env.from_os(), ui) == 1
    assert sum("nothing written" in line for line in lines) == 2
    assert list((home.home / ".gemini").iterdir()) == []


@pytest.mark.parametrize("together", [True, False], ids=["one-run", "separate-runs"])
def test_uninstall_removes_the_folder_install_made_for_several_files(home: Home, together: bool) -> None:
    """~/.gemini made by install holds settings.json and GEMINI.md: once both are gone, so is the folder
    (left behind, it would make Gemini CLI count as set up on this machine)."""
    kinds = [("--type", "all")] if together else [("--type", "mcp"), ("--type", "instructions")]
    for kind in kinds:
        assert cli("install", "--agent", "gemini", *kind, "--yes") == 0
    for kind in kinds:
        assert cli("uninstall", "--agent", "gemini", *kind, "--yes") == 0
    assert not (home.home / ".gemini").exists()


def test_a_number_too_long_to_read_is_a_file_that_cannot_be_read(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home.home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"n": ' + "1" * 5000 + "}\n")
    before = path.read_bytes()
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--yes") == 1
    err = capsys.readouterr().err
    assert "cannot read it as JSON" in err and "left untouched" in err and "internal error" not in err
    assert path.read_bytes() == before


def test_an_instruction_file_that_was_there_before_stays_when_only_the_block_is_cut(home: Home) -> None:
    """GEMINI.md existed (blank) before install; edited since, uninstall cuts the block and keeps the file."""
    gemini_md = home.home / ".gemini" / "GEMINI.md"
    gemini_md.parent.mkdir()
    gemini_md.write_text("\n")
    assert cli("install", "--agent", "gemini", "--type", "instructions", "--yes") == 0
    gemini_md.write_text(gemini_md.read_text() + "\n")  # changed since: no exact restore, the block is cut
    assert cli("uninstall", "--agent", "gemini", "--type", "instructions", "--yes") == 0
    assert gemini_md.exists() and gemini_md.read_text().strip() == ""


@pytest.mark.parametrize(
    "agent, kind, name, text",
    [("gemini", "instructions", "GEMINI.md", "Be brief."), ("codex", "mcp", "config.toml", 'model = "o3"')],
)
def test_cut_mode_keeps_a_file_without_a_final_newline_so(
    home: Home, agent: str, kind: str, name: str, text: str
) -> None:
    """Install appends after a newline it adds; cutting codepith's part out again takes that newline too."""
    path = (home.home / ".gemini" if agent == "gemini" else home.codex_home) / name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert cli("install", "--agent", agent, "--type", kind, "--yes") == 0
    path.write_text(path.read_text().replace(text, text.upper()))  # edited since: the entry is cut out
    assert cli("uninstall", "--agent", agent, "--type", kind, "--yes") == 0
    assert path.read_text() == text.upper()


# -- folders that cannot be read -----------------------------------------------------------------------


def _unreadable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``chmod 000 folder`` as a user sees it: whatever lies inside cannot be looked at (the tests run as
    root too, where the mode stops nothing, so stat and open are made to fail as they would)."""
    real_stat, real_open = Path.stat, Path.open

    def inside(path: Path) -> bool:
        return folder in Path(os.path.abspath(path)).parents

    def stat(self: Path, *args: Any, **kw: Any) -> os.stat_result:
        if inside(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kw)

    def open_(self: Path, *args: Any, **kw: Any) -> Any:
        if inside(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kw)

    monkeypatch.setattr(Path, "stat", stat)
    monkeypatch.setattr(Path, "open", open_)


def test_an_unreadable_config_folder_is_reported_in_one_line_and_the_rest_installed(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``chmod 000 ~/.config``: detection raised PermissionError (a traceback); now that folder's clients
    are reported as not looked at, and the clients found elsewhere are set up."""
    (home.home / ".gemini").mkdir()
    monkeypatch.delenv("OPENCODE_CONFIG")
    _unreadable(monkeypatch, home.xdg_config)
    assert cli("install", "--type", "mcp", "--yes") == 0
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all("Permission denied" in line for line in lines), err  # OpenCode, VS Code
    assert any("OpenCode" in line and str(home.xdg_config / "opencode") in line for line in lines)
    assert "codepith" in json.loads((home.home / ".gemini" / "settings.json").read_text())["mcpServers"]
    # named explicitly, the client's config cannot be read: one line, exit 1, nothing else stops
    assert cli("install", "--agent", "opencode", "--agent", "cursor", "--type", "mcp", "--yes") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "Permission denied" in err, err
    assert "codepith" in json.loads((home.home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    # uninstall (every client, unasked): the unreadable ones are reported, the others undone
    assert cli("uninstall", "--type", "mcp", "--yes") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and all("Permission denied" in line for line in err.strip().splitlines()), err
    assert not (home.home / ".gemini" / "settings.json").exists()  # install made it: it goes


@pytest.mark.parametrize(
    "original",
    ["{\n}", "{\n}\n", "{}\n", "{ }\n", "  {\n\n}  \n", '{\n  "mcpServers": {\n  }\n}\n', "{\r\n}\r\n"],
)
def test_an_empty_object_comes_back_as_it_was_spelt_when_uninstall_cuts_the_entry(home: Home, original: str) -> None:
    """Without the backup to restore (cleaned away, or the client rewrote the file), uninstall cuts
    codepith's entry: the empty object install filled (``{\\n}``) came back as ``{}``; now byte for byte."""
    settings = home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(original.encode())
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    for backup in (home.state / "codepith" / "backups").iterdir():
        backup.unlink()
    assert cli("uninstall", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    assert settings.read_bytes() == original.encode()


def test_a_client_edit_elsewhere_keeps_the_emptied_object_as_it_was_spelt(home: Home) -> None:
    """The file changed since install (a client added a setting): the entry is cut, the setting stays,
    and the server object install filled is given back its own inside (a newline and two spaces)."""
    settings = home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "mcpServers": {\n  }\n}\n')
    assert cli("install", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    settings.write_text(settings.read_text().replace("{\n", '{\n  "theme": "dark",\n', 1))
    assert cli("uninstall", "--agent", "gemini", "--type", "mcp", "--yes") == 0
    assert settings.read_text() == '{\n  "theme": "dark",\n  "mcpServers": {\n  }\n}\n'
