"""The agent clients codepith installs into: where each keeps its config and what an entry looks like.

Sources (each client's own documentation, checked when this was written):
- Claude Code: user servers under ``mcpServers`` in ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json``
  when set; verified against ``claude mcp add -s user`` 2.1.197, which writes ``{"type": "stdio",
  "command", "args", "env"}``), project servers in ``.mcp.json``; memory in ``CLAUDE.md``; sub-agents in
  ``~/.claude/agents/`` and ``.claude/agents/`` (code.claude.com docs: mcp, memory, sub-agents).
- Codex: ``$CODEX_HOME/config.toml`` (default ``~/.codex``), ``[mcp_servers.NAME]`` with ``command``,
  ``args``, ``startup_timeout_sec`` (default 10 s); ``.codex/config.toml`` in trusted projects; ``AGENTS.md``
  (developers.openai.com/codex: config reference, MCP, AGENTS.md).
- Cursor: ``~/.cursor/mcp.json`` and ``.cursor/mcp.json``, ``mcpServers`` with ``command``/``args``;
  ``${workspaceFolder}`` is interpolated; project rules from ``AGENTS.md`` (cursor.com/docs: MCP, rules).
- OpenCode: ``~/.config/opencode/opencode.json`` (``$XDG_CONFIG_HOME``; ``$OPENCODE_CONFIG`` names a file),
  ``mcp.NAME = {"type": "local", "command": [...], "enabled": true}``; config written in the newer
  ``mcp.servers.NAME`` layout gets its entry there (without ``enabled``); agents in
  ``~/.config/opencode/agents/`` and ``.opencode/agents/`` with ``mode: subagent``; ``AGENTS.md``
  (opencode.ai/docs: mcp-servers, agents, rules).
- Gemini CLI: ``~/.gemini/settings.json`` and ``.gemini/settings.json``, ``mcpServers`` with
  ``command``/``args``; context file ``GEMINI.md`` (google-gemini/gemini-cli docs/tools/mcp-server.md).
- VS Code: ``.vscode/mcp.json`` (workspace) or ``mcp.json`` in the user profile folder, key ``servers``,
  ``{"type": "stdio", "command", "args"}``, ``${workspaceFolder}`` interpolated; ``AGENTS.md`` for Copilot
  (code.visualstudio.com/docs/copilot/reference/mcp-configuration).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codepith.agents import jsonc
from codepith.agents.launcher import Launcher
from codepith.agents.texts import SUBAGENT_NAME, claude_subagent, instruction_block, opencode_subagent

SERVER = "codepith"
KINDS = ("mcp", "instructions", "subagent")
SCOPES = ("user", "project")
CODEX_STARTUP_TIMEOUT = 30  # seconds; Codex's default of 10 is tight for a first start on a busy machine


@dataclass(frozen=True)
class Env:
    """Where the person's files are: home, project folder and environment (tests pass their own)."""

    home: Path
    cwd: Path
    environ: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform

    @classmethod
    def from_os(cls) -> Env:
        return cls(Path.home(), Path.cwd(), dict(os.environ))

    def var(self, name: str) -> str | None:
        value = self.environ.get(name, "")
        return value or None

    def which(self, exe: str) -> str | None:
        return shutil.which(exe, path=self.environ.get("PATH", ""))

    def config_home(self) -> Path:
        xdg = self.var("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"


@dataclass(frozen=True)
class Target:
    """One thing install writes: an entry in a config file, a block in a markdown file, or a whole file."""

    client: str
    kind: str  # mcp | instructions | subagent
    path: Path
    fmt: str  # json | toml | markdown | file
    where: tuple[str, ...]  # key path of the entry (json, toml); () otherwise
    value: Any  # the entry, the block text, or the file text

    @property
    def key(self) -> str:
        return f"{self.path}::{'.'.join(self.where)}"


@dataclass(frozen=True)
class Client:
    id: str
    name: str
    executables: tuple[str, ...]
    homes: Callable[[Env], list[Path]]  # any of these existing means the client is set up here
    mcp: Callable[[Env, str, Launcher], Target | None]
    instructions: Callable[[Env, str], Path | None]
    subagent: Callable[[Env, str], tuple[Path, str] | None]

    def detected(self, env: Env) -> bool:
        return any(env.which(exe) for exe in self.executables) or any(_exists(p) for p in self.homes(env))

    def unreadable(self, env: Env) -> str | None:
        """A home of this client that cannot be looked at (``chmod 000 ~/.config``), with why: detection
        cannot tell whether the client is there, which install says in one line rather than guessing."""
        for p in self.homes(env):
            try:
                p.stat()
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                return f"{p} ({exc.strerror or type(exc).__name__})"
        return None

    def targets(self, env: Env, kinds: tuple[str, ...], scope: str, launcher: Launcher) -> list[Target]:
        out: list[Target] = []
        if "mcp" in kinds:
            t = self.mcp(env, scope, launcher)
            if t is not None:
                out.append(t)
        if "instructions" in kinds:
            p = self.instructions(env, scope)
            if p is not None:
                out.append(Target(self.id, "instructions", p, "markdown", (), instruction_block()))
        if "subagent" in kinds:
            s = self.subagent(env, scope)
            if s is not None:
                out.append(Target(self.id, "subagent", s[0], "file", (), s[1]))
        return out

    def supports(self, env: Env, kind: str, scope: str) -> bool:
        probe = Launcher("/codepith", ())
        return bool(self.targets(env, (kind,), scope, probe))


def _exists(path: Path) -> bool:
    """``path.exists()``, but False when a folder on the way cannot be read (PermissionError): what is
    behind it is reported by whatever then tries to read it, never as a traceback here."""
    try:
        return path.exists()
    except OSError:
        return False


def _json_target(client: str, path: Path, where: tuple[str, ...], entry: dict[str, Any]) -> Target:
    return Target(client, "mcp", path, "json", where, entry)


# -- Claude Code ---------------------------------------------------------------------------------------


def _claude_dir(env: Env) -> Path:
    d = env.var("CLAUDE_CONFIG_DIR")
    return Path(d) if d else env.home / ".claude"


def _claude_json(env: Env) -> Path:
    d = env.var("CLAUDE_CONFIG_DIR")
    return Path(d) / ".claude.json" if d else env.home / ".claude.json"


def _claude_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    path = _claude_json(env) if scope == "user" else env.cwd / ".mcp.json"
    entry = {"type": "stdio", "command": launcher.command, "args": [*launcher.args, "mcp"], "env": {}}
    return _json_target("claude", path, ("mcpServers", SERVER), entry)


CLAUDE = Client(
    "claude",
    "Claude Code",
    ("claude",),
    lambda env: [_claude_json(env), _claude_dir(env)],
    _claude_mcp,
    lambda env, scope: (_claude_dir(env) if scope == "user" else env.cwd) / "CLAUDE.md",
    lambda env, scope: (
        (_claude_dir(env) if scope == "user" else env.cwd / ".claude") / "agents" / f"{SUBAGENT_NAME}.md",
        claude_subagent(),
    ),
)

# -- Codex ---------------------------------------------------------------------------------------------


def _codex_home(env: Env) -> Path:
    d = env.var("CODEX_HOME")
    return Path(d) if d else env.home / ".codex"


def _codex_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    folder = _codex_home(env) if scope == "user" else env.cwd / ".codex"
    entry = {
        "command": launcher.command,
        "args": [*launcher.args, "mcp"],
        "startup_timeout_sec": CODEX_STARTUP_TIMEOUT,
    }
    return Target("codex", "mcp", folder / "config.toml", "toml", ("mcp_servers", SERVER), entry)


CODEX = Client(
    "codex",
    "Codex",
    ("codex",),
    lambda env: [_codex_home(env)],
    _codex_mcp,
    lambda env, scope: (_codex_home(env) if scope == "user" else env.cwd) / "AGENTS.md",
    lambda env, scope: None,
)

# -- Cursor --------------------------------------------------------------------------------------------


def _cursor_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    folder = env.home / ".cursor" if scope == "user" else env.cwd / ".cursor"
    entry = {"command": launcher.command, "args": [*launcher.args, "mcp", "${workspaceFolder}"]}
    return _json_target("cursor", folder / "mcp.json", ("mcpServers", SERVER), entry)


CURSOR = Client(
    "cursor",
    "Cursor",
    ("cursor", "cursor-agent"),
    lambda env: [env.home / ".cursor"],
    _cursor_mcp,
    lambda env, scope: env.cwd / "AGENTS.md" if scope == "project" else None,  # user rules live in its app DB
    lambda env, scope: None,
)

# -- OpenCode ------------------------------------------------------------------------------------------


def _opencode_dir(env: Env) -> Path:
    return env.config_home() / "opencode"


def _first_existing(*paths: Path) -> Path:
    for p in paths:
        if _exists(p):
            return p
    return paths[0]


def _opencode_file(env: Env, scope: str) -> Path:
    if scope == "user":
        named = env.var("OPENCODE_CONFIG")
        if named:
            return Path(named)
        d = _opencode_dir(env)
        return _first_existing(d / "opencode.json", d / "opencode.jsonc")
    return _first_existing(env.cwd / "opencode.json", env.cwd / "opencode.jsonc")


def _opencode_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    path = _opencode_file(env, scope)
    command = [launcher.command, *launcher.args, "mcp"]
    try:
        servers = jsonc.get(path.read_text(encoding="utf-8"), ("mcp", "servers")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, jsonc.JsoncError):
        servers = None  # the plan reports the file; the classic layout is the default
    if isinstance(servers, dict):
        return _json_target("opencode", path, ("mcp", "servers", SERVER), {"type": "local", "command": command})
    return _json_target("opencode", path, ("mcp", SERVER), {"type": "local", "command": command, "enabled": True})


OPENCODE = Client(
    "opencode",
    "OpenCode",
    ("opencode",),
    lambda env: [_opencode_dir(env), _opencode_file(env, "user")],
    _opencode_mcp,
    lambda env, scope: (_opencode_dir(env) if scope == "user" else env.cwd) / "AGENTS.md",
    lambda env, scope: (
        (_opencode_dir(env) if scope == "user" else env.cwd / ".opencode") / "agents" / f"{SUBAGENT_NAME}.md",
        opencode_subagent(),
    ),
)

# -- Gemini CLI ----------------------------------------------------------------------------------------


def _gemini_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    folder = env.home / ".gemini" if scope == "user" else env.cwd / ".gemini"
    entry = {"command": launcher.command, "args": [*launcher.args, "mcp"]}
    return _json_target("gemini", folder / "settings.json", ("mcpServers", SERVER), entry)


GEMINI = Client(
    "gemini",
    "Gemini CLI",
    ("gemini",),
    lambda env: [env.home / ".gemini"],
    _gemini_mcp,
    lambda env, scope: (env.home / ".gemini" if scope == "user" else env.cwd) / "GEMINI.md",
    lambda env, scope: None,
)

# -- VS Code -------------------------------------------------------------------------------------------


def _vscode_user_dir(env: Env) -> Path:
    if env.platform == "darwin":
        return env.home / "Library" / "Application Support" / "Code" / "User"
    if env.platform.startswith("win"):
        appdata = env.var("APPDATA")
        return (Path(appdata) if appdata else env.home / "AppData" / "Roaming") / "Code" / "User"
    return env.config_home() / "Code" / "User"


def _vscode_mcp(env: Env, scope: str, launcher: Launcher) -> Target:
    path = _vscode_user_dir(env) / "mcp.json" if scope == "user" else env.cwd / ".vscode" / "mcp.json"
    entry = {"type": "stdio", "command": launcher.command, "args": [*launcher.args, "mcp", "${workspaceFolder}"]}
    return _json_target("vscode", path, ("servers", SERVER), entry)


VSCODE = Client(
    "vscode",
    "VS Code",
    ("code",),
    lambda env: [_vscode_user_dir(env), env.home / ".vscode"],
    _vscode_mcp,
    lambda env, scope: env.cwd / "AGENTS.md" if scope == "project" else None,
    lambda env, scope: None,
)

CLIENTS: dict[str, Client] = {c.id: c for c in (CLAUDE, CODEX, CURSOR, OPENCODE, GEMINI, VSCODE)}
