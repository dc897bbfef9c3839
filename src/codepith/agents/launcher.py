"""The command an agent client runs to start codepith's MCP server: absolute, so it works from any
working directory and without the client's PATH knowing where codepith was installed."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Launcher:
    command: str  # an absolute path
    args: tuple[str, ...]  # arguments before codepith's own ("mcp", ...)

    def argv(self, *extra: str) -> list[str]:
        return [self.command, *self.args, *extra]


def _script_beside(python: Path) -> Path | None:
    """The ``codepith`` console script installed with this interpreter (venv/bin, Scripts on Windows)."""
    names = ("codepith.exe", "codepith") if os.name == "nt" else ("codepith",)
    for name in names:
        candidate = python.parent / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def current(python: str | None = None) -> Launcher:
    """The console script beside the running interpreter, else ``python -m codepith``.

    The interpreter path is kept as given (not resolved): a virtualenv's ``bin/python`` is a symlink to
    the base interpreter, and resolving it would leave the virtualenv and its packages behind.
    """
    exe = Path(os.path.abspath(python or sys.executable))
    script = _script_beside(exe)
    if script is not None:
        return Launcher(str(script), ())
    return Launcher(str(exe), ("-m", "codepith"))


_EPHEMERAL = ("/uv/archive-v", "/.cache/uv/", "/pip-build-env-", "/pipx/.cache/", "/.uv/cache/")


def ephemeral_warning(launcher: Launcher) -> str | None:
    """A warning when the command lives in a throw-away environment (``uvx``, ``pipx run``): the entry
    would break the day that cache is cleaned."""
    path = launcher.command.replace("\\", "/")
    if any(mark in path for mark in _EPHEMERAL):
        return (
            f"{launcher.command} is in a temporary environment (uvx / pipx run); agents will fail to start "
            "codepith once that cache is cleaned: install it for good (`uv tool install codepith` or "
            "`pipx install codepith`) and run `codepith install` from there"
        )
    return None
