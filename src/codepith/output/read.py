"""Bounded, root-confined, streamed reads of a line range: the follow-up call every packet marker names.

A read is bounded three ways: at most ``max_lines`` lines, at most ``max_chars`` characters in the reply
(a longer line is cut with a marker saying how much was cut), and the file is streamed, never loaded:
reading two lines of a 1 GB file reads a few KB. Files with a UTF-16/UTF-32 byte-order mark are decoded
as such. A file that holds secrets (by name or content, see files/secrets.py) is refused: the part read
is scanned, and the whole file when it is at most ``FULL_SCAN_BYTES`` (the only size codepith indexes);
in a larger file, a key block begun in the part read is read to its END (refused if that is over
``FULL_SCAN_BYTES`` further on).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codepith.errors import ArgumentError, CodepithError, PathError, path_argument, whole_number
from codepith.files.ignore import NEVER_OPENED_DIRS
from codepith.files.names import shell_path, show_name, wire_name
from codepith.files.read import bom_encoding
from codepith.files.secrets import SecretScanner, secret_name
from codepith.limits import MAX_LINE

ReadCall = Callable[[str, int, int], str]

_BINARY_SNIFF = 8192
DEFAULT_MAX_CHARS = 20_000
MIN_MAX_CHARS = 1_000
FULL_SCAN_BYTES = 8 << 20  # past this size a read stops after its lines: total line count unknown
_PIECE = 1 << 16  # characters decoded per step
_CUT_MARK = 48  # room kept on each line for its cut marker


def cli_read_call(path: str, start: int, end: int) -> str:
    """The CLI command that shows ``path`` lines ``start``-``end`` (quoted so it can be pasted)."""
    return f"codepith read {shell_path(path)} {start} {end}"


def mcp_read_call(path: str, start: int, end: int) -> str:
    """The MCP tool call that shows ``path`` lines ``start``-``end``: the path as the wire spells it
    (``wire_name``), which the server takes back; a lone surrogate in the JSON would not reach it."""
    return f"read_snippet(path={json.dumps(wire_name(path))}, start_line={start}, end_line={end})"


@dataclass(frozen=True)
class ReadResult:
    rel_path: str  # '/'-separated, relative to the resolved root
    start: int  # first line returned (1-based)
    end: int  # last line returned (inclusive), after clamping to EOF, max_lines and max_chars
    lines: tuple[str, ...]  # a line longer than the budget ends with a marker saying how much was cut
    truncated: bool  # stopped (at max_lines or max_chars) before the (clamped) requested end
    total_lines: int | None  # None: a large file was not read past the lines asked for
    requested_end: int = 0  # the end asked for, before clamping to EOF
    clamped: bool = False  # the requested end was past the end of the file
    by_chars: bool = False  # the stop (if truncated) came from max_chars, not max_lines
    max_chars: int = DEFAULT_MAX_CHARS
    size: int = 0  # bytes on disk

    @property
    def wanted_end(self) -> int:
        """The last line the caller can still get (requested end clamped to EOF when it is known)."""
        if self.total_lines is None:
            return self.requested_end or self.end
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
        raise PathError(f"root folder not found: {show_name(str(root))}") from err
    if not root_r.is_dir():
        raise PathError(f"root is not a folder: {show_name(str(root))}")
    try:
        target = (root_r / path).resolve()
    except (OSError, RuntimeError, ValueError) as err:
        raise PathError(f"cannot resolve path: {show_name(path, limit=200)}") from err
    if target != root_r and root_r not in target.parents:
        raise PathError(f"path is outside the indexed folder: {show_name(path, limit=200)}")
    rel = target.relative_to(root_r).as_posix()
    return target, rel


class _Lines:
    """Lines of a decoded stream, one at a time, keeping at most a given number of characters of each."""

    def __init__(self, stream: io.TextIOBase, scanner: SecretScanner) -> None:
        self.stream = stream
        self.scanner = scanner
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.last_char = ""  # the last character decoded: tells whether the file ends with a newline

    def _fill(self) -> bool:
        piece = self.stream.read(_PIECE)
        if not piece:
            self.eof = True
            return False
        self.scanner.feed(piece)
        self.buf, self.pos, self.last_char = piece, 0, piece[-1]
        return True

    def line(self, keep: int) -> tuple[str, int] | None:
        """The next line (no newline, no CR of CRLF) cut to ``keep`` characters, and how many were cut;
        None at the end of the file."""
        parts: list[str] = []
        kept = cut = 0
        seen = False
        while True:
            if self.pos >= len(self.buf) and not self._fill():
                break
            seen = True
            nl = self.buf.find("\n", self.pos)
            stop = len(self.buf) if nl < 0 else nl
            seg_end = stop - 1 if nl >= 0 and stop > self.pos and self.buf[stop - 1] == "\r" else stop
            room = keep - kept
            take = max(0, min(room, seg_end - self.pos))
            if take:
                parts.append(self.buf[self.pos : self.pos + take])
                kept += take
            cut += seg_end - self.pos - take
            if nl >= 0:
                self.pos = nl + 1
                return "".join(parts), cut
            self.pos = len(self.buf)
        return ("".join(parts), cut) if seen else None

    def read_on(self, limit: int) -> None:
        """Read (and scan) on, at most ``limit`` more characters, while a key block begun in what was read
        is open; no line is kept."""
        while limit > 0 and self.scanner.open_rule() is not None and self._fill():
            limit -= len(self.buf)
        self.pos = len(self.buf)

    def count_rest(self) -> int:
        """Lines left to the end of the file (read through, scanned, not kept)."""
        n = self.buf.count("\n", self.pos)
        tail = self.pos < len(self.buf)
        while self._fill():
            n += self.buf.count("\n")
            tail = True
        self.pos = len(self.buf)
        return n + (1 if tail and self.last_char != "\n" else 0)


def _open_text(target: Path, path: str) -> io.TextIOWrapper:
    try:
        raw = open(target, "rb")  # noqa: SIM115 - wrapped and closed by the caller
    except OSError as err:
        raise PathError(f"cannot read {show_name(path, limit=200)}: {err.strerror or err}") from err
    try:
        head = raw.read(_BINARY_SNIFF)
        raw.seek(0)
    except OSError as err:
        raw.close()
        raise PathError(f"cannot read {show_name(path, limit=200)}: {err.strerror or err}") from err
    encoding = bom_encoding(head)
    if encoding is None and b"\x00" in head:
        raw.close()
        raise CodepithError(f"{show_name(path, limit=200)} looks like a binary file; not showing it")
    return io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors="replace", newline="\n")


def _refuse_secret(path: str, why: str) -> CodepithError:
    return CodepithError(f"refused: {path} holds secrets ({why}); codepith never shows it")


def read_lines(
    root: Path,
    path: str,
    start: int,
    end: int,
    *,
    max_lines: int = 300,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> ReadResult:
    """Lines ``start``-``end`` of a file inside ``root``, streamed: end is clamped to EOF, the span to
    ``max_lines`` lines and the formatted reply to ``max_chars`` characters."""
    path = path_argument("path", path)
    start = whole_number("start line", start, 1, MAX_LINE)
    end = whole_number("end line", end, 1, MAX_LINE)
    if end < start:
        raise ArgumentError(f"end line {end} is before start line {start}")
    max_lines = whole_number("max_lines", max_lines, 1)
    max_chars = whole_number("max_chars", max_chars, MIN_MAX_CHARS)
    target, rel = resolve_inside(root, path)
    inside = NEVER_OPENED_DIRS.intersection(rel.split("/"))
    if inside:  # .git/config holds remote URLs with tokens, hooks, packed refs: never indexed, never shown
        raise CodepithError(f"refused: {show_name(path, limit=200)} is inside {min(inside)}/; codepith never shows it")
    try:
        if not target.exists():
            raise PathError(f"no such file: {show_name(path, limit=200)}")
        if target.is_dir():
            raise PathError(f"{show_name(path, limit=200)} is a folder, not a file")
        if not target.is_file():
            raise PathError(f"{show_name(path, limit=200)} is not a regular file")
        size = target.stat().st_size
    except OSError as err:  # a name too long, a folder it cannot enter
        raise PathError(f"cannot read {show_name(path, limit=200)}: {err.strerror or err}") from err
    if secret_name(rel.rpartition("/")[2]):  # the real name: a link to .env is refused too
        raise _refuse_secret(show_name(path, limit=200), "by its name")
    last_wanted = min(end, start + max_lines - 1)
    width = max(4, len(str(last_wanted)))
    # the header and the notes under the lines, with room for long names and read calls
    budget = max_chars - 2 * len(show_name(rel, limit=200)) - 400
    if budget < 200:
        raise CodepithError(f"max_chars {max_chars} is too small for a read of {show_name(rel, limit=200)}")
    scanner = SecretScanner()
    lines: list[str] = []
    by_chars = False
    total: int | None = None
    with _open_text(target, path) as stream:
        reader = _Lines(stream, scanner)
        number = 0
        while number < start - 1:
            if reader.line(0) is None:
                total = number
                break
            number += 1
        first_keep = budget - (width + 3) - _CUT_MARK
        held = 0  # a line read but left for the next call (it did not fit after the others)
        while total is None and number < last_wanted:
            got = reader.line(first_keep)
            if got is None:
                total = number
                break
            text, cut = got
            if lines and len(text) + cut + width + 3 > budget:
                by_chars, held = True, 1
                break
            if cut:  # only a reply's first line is ever cut: it could not fit in any reply
                text += f" [... line cut: {cut:,} more characters]"
            lines.append(text)
            budget -= width + 3 + len(text)
            number += 1
        if total is None and size <= FULL_SCAN_BYTES:
            total = number + held + reader.count_rest()
        elif total is None:  # a large file read to the lines asked for: a key begun there is read to its end
            reader.read_on(FULL_SCAN_BYTES)
        found = scanner.close()
        if found is None and total is None and not reader.eof:  # or its end is further still: refused too
            found = scanner.open_rule()
    if found is not None:
        raise _refuse_secret(show_name(path, limit=200), f"found by content: {found}")
    if total is not None and start > total:
        raise CodepithError(f"start line {start} is past the end of {show_name(rel, limit=200)} ({total} lines)")
    last = start + len(lines) - 1
    wanted = end if total is None else min(end, total)
    return ReadResult(
        rel_path=rel,
        start=start,
        end=last,
        lines=tuple(lines),
        truncated=last < wanted,
        total_lines=total,
        requested_end=end,
        clamped=total is not None and end > total,
        by_chars=by_chars,
        max_chars=max_chars,
        size=size,
    )


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"


def format_read(result: ReadResult, *, read_call: ReadCall = cli_read_call) -> str:
    """Numbered lines (``  42| text``) under a one-line header, with notes for clamping and truncation."""
    width = max(4, len(str(result.end)))
    if result.total_lines is not None:
        of = f"of {result.total_lines}"
    else:
        of = f"(file of {_size(result.size)}; not counted)"
    out = [f"FILE {show_name(result.rel_path)}  LINES {result.start}-{result.end} {of}"]
    out.extend(f"{n:>{width}}| {text}".rstrip() for n, text in enumerate(result.lines, result.start))
    if result.truncated:
        span = result.end - result.start + 1
        nxt_end = min(result.wanted_end, result.end + max(span, 1))
        nxt = read_call(result.rel_path, result.end + 1, nxt_end)
        limit = f"max_chars={result.max_chars}" if result.by_chars else f"{span} lines"
        out.append(f"... (cut at {limit}; next part: {nxt})")
    if result.clamped:
        out.append(f"(asked for up to line {result.requested_end}; the file ends at {result.total_lines})")
    return "\n".join(out)
