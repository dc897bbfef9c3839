"""The ``file:line`` frames of a traceback or stack that belong to the repository.

A frame is kept when its file exists inside the repository and outside vendored or installed code
(site-packages, node_modules, a virtualenv, cargo's target folder); every runner prints its locations
differently, but all print ``path:line`` or Python's ``File "path", line N``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from codepith.runner.results import Frame

VENDORED = frozenset(
    {"site-packages", "dist-packages", "node_modules", ".venv", "venv", ".tox", ".nox", "target", ".cargo"}
)

# a line number has at most 9 digits: a longer run of digits is not a location, and int() refuses
# more than 4300 digits (a message like "data.bin:" + 5000 digits would crash the run's reply)
_LINE = r"(\d{1,9})(?!\d)"
_PY_FILE = re.compile(r'File "([^"\n]+)", line ' + _LINE)
# a path with an extension, then :line (and maybe :column); not preceded by a path character
_PATH_LINE = re.compile(r"(?<![\w./@+-])((?:file://)?[\w./@+-]*\w\.[A-Za-z0-9]{1,8}):" + _LINE + r"(?::\d+)?")


def _repo_path(raw: str, root: Path, bases: Sequence[Path]) -> str | None:
    raw = raw.removeprefix("file://")
    candidates = [Path(raw)] if raw.startswith("/") else [base / raw for base in bases]
    for candidate in candidates:
        try:
            path = candidate.resolve()
        except (OSError, RuntimeError):
            continue
        if root not in path.parents:
            continue
        rel = path.relative_to(root)
        if VENDORED.intersection(rel.parts[:-1]) or not path.is_file():
            continue
        return rel.as_posix()
    return None


def repo_frames(
    text: str, root: Path, *, innermost_last: bool, bases: Sequence[Path] | None = None
) -> tuple[Frame, ...]:
    """Repository frames in ``text``, innermost first, each once."""
    found: list[tuple[int, str, int]] = []
    for pattern in (_PY_FILE, _PATH_LINE):
        for m in pattern.finditer(text):
            found.append((m.start(), m.group(1), int(m.group(2))))
    found.sort()
    frames: list[Frame] = []
    seen: set[tuple[str, int]] = set()
    search = list(bases) if bases else [root]
    for _, raw, line in found:
        rel = _repo_path(raw, root, search)
        if rel is None or (rel, line) in seen:
            continue
        seen.add((rel, line))
        frames.append(Frame(rel, line))
    return tuple(reversed(frames)) if innermost_last else tuple(frames)
