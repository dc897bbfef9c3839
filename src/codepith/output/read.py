"""Bounded, root-confined reads of a line range: the follow-up call every packet marker names."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codepith.errors import CodepithError, PathError

ReadCall = Callable[[str, int, int], str]

_BINARY_SNIFF = 8192


def cli_read_call(path: str, start: int, end: int) -> str:
    """The CLI command that shows ``path`` lines ``start``-``end`` (quoted so it can be pasted)."""
    return f"codepith read {shlex.quote(path)} {start} {end}"


def mcp_read_call(path: str, start: int, end: int) -> str:
    """The MCP tool call that shows ``path`` lines ``start``-``end``."""
    return f"read_snippet(path={json.dumps(path)}, start_line={start}, end_line={end})"


@dataclass(frozen=True)
class ReadResult:
    rel_path: str  # '/'-separated, relative to the resolved root
    start: int  # first line returned (1-based)
    end: int  # last line returned (inclusive), after clamping to EOF and to max_lines
    lines: tuple[str, ...]
    truncated: bool  # cut at max_lines before the (clamped) requested end
    total_lines: int
    requested_end: int = 0  # the end asked for, before clamping to EOF
    clamped: bool = False  # the requested end was past the end of the file

    @property
    def wanted_end(self) -> int:
        """The last line the caller can still get (requested end clamped to EOF)."""
        return min(self.requested_end, self.total_lines) if self.requested_end else self.total_lines


def resolve_inside(root: Path, path: str) -> tuple[Path, str]:
    """Resolve ``path`` (relative to ``root`` or absolute) and refuse anything that lands outside root.

    Symlinks are resolved on both sides so a link pointing out of the root is caught too.
    Returns the resolved path and its '/'-separated path relative to the resolved root.
    """
    if not path or not path.strip():
        raise PathError("empty path")
    try:
        root_r = Path(root).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as err:
        raise PathError(f"root folder not found: {root}") from err
    if not root_r.is_dir():
        raise PathError(f"root is not a folder: {root}")
    try:
        target = (root_r / path).resolve()
    except (OSError, RuntimeError, ValueError) as err:
        raise PathError(f"cannot resolve path: {path!r}") from err
    if target != root_r and root_r not in target.parents:
        raise PathError(f"path is outside the indexed folder: {path}")
    rel = target.relative_to(root_r).as_posix()
    return target, rel


def _split_lines(text: str) -> list[str]:
    """Split on '\\n' only (as chunk line numbers do), dropping '\\r' of CRLF and the final empty piece."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return []
    parts = text.split("\n")
    if text.endswith("\n"):
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def read_lines(root: Path, path: str, start: int, end: int, *, max_lines: int = 300) -> ReadResult:
    """Lines ``start``-``end`` of a file inside ``root``; end is clamped to EOF, the span to ``max_lines``."""
    if start < 1:
        raise CodepithError(f"start line must be 1 or more, got {start}")
    if end < start:
        raise CodepithError(f"end line {end} is before start line {start}")
    if max_lines < 1:
        raise CodepithError(f"max_lines must be 1 or more, got {max_lines}")
    target, rel = resolve_inside(root, path)
    if not target.exists():
        raise PathError(f"no such file: {path}")
    if target.is_dir():
        raise PathError(f"{path} is a folder, not a file")
    if not target.is_file():
        raise PathError(f"{path} is not a regular file")
    try:
        data = target.read_bytes()
    except OSError as err:
        raise PathError(f"cannot read {path}: {err.strerror or err}") from err
    if b"\x00" in data[:_BINARY_SNIFF]:
        raise CodepithError(f"{path} looks like a binary file; not showing it")
    lines = _split_lines(data.decode("utf-8", errors="replace"))
    total = len(lines)
    if start > total:
        raise CodepithError(f"start line {start} is past the end of {rel} ({total} lines)")
    clamped = end > total
    last = min(end, total)
    truncated = last - start + 1 > max_lines
    if truncated:
        last = start + max_lines - 1
    return ReadResult(
        rel_path=rel,
        start=start,
        end=last,
        lines=tuple(lines[start - 1 : last]),
        truncated=truncated,
        total_lines=total,
        requested_end=end,
        clamped=clamped,
    )


def format_read(result: ReadResult, *, read_call: ReadCall = cli_read_call) -> str:
    """Numbered lines (``  42| text``) under a one-line header, with notes for clamping and truncation."""
    width = max(4, len(str(result.end)))
    out = [f"FILE {result.rel_path}  LINES {result.start}-{result.end} of {result.total_lines}"]
    out.extend(f"{n:>{width}}| {text}".rstrip() for n, text in enumerate(result.lines, result.start))
    if result.truncated:
        span = result.end - result.start + 1
        nxt_end = min(result.wanted_end, result.end + span)
        nxt = read_call(result.rel_path, result.end + 1, nxt_end)
        out.append(f"... (cut at {span} lines; next part: {nxt})")
    if result.clamped:
        out.append(f"(asked for up to line {result.requested_end}; the file ends at {result.total_lines})")
    return "\n".join(out)
