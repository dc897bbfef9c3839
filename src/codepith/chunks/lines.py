"""Line windows: the fallback unit for text without a grammar, and shared line helpers.

Windows are 40 lines without overlap: overlap would index the same lines twice (doubling their BM25
weight and duplicating results) while spans already let an agent read around a hit; 40 lines is about
one screen, close to the median size of the syntax-aware chunks.
"""

from __future__ import annotations

from collections.abc import Iterator

from .chunk import Chunk

WINDOW_LINES = 40
WINDOW_CHARS = 2400  # same byte budget as syntax chunks, so long-lined text is not one giant chunk


def split_lines(text: str) -> list[str]:
    """Split on '\\n' only (as tree-sitter counts rows) and drop a trailing '\\r' of CRLF endings."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def numbered_lines(start: int, end: int, content: str) -> Iterator[tuple[int, str]]:
    """A chunk's lines as (number, text without trailing whitespace), from ``start``, none past ``end``."""
    for offset, text in enumerate(content.split("\n")):
        if start + offset > end:
            return
        yield start + offset, text.rstrip()


def trim_span(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Shrink a 0-based inclusive row span to its first and last non-blank rows; None if all blank."""
    end = min(end, len(lines) - 1)
    while start <= end and not lines[start].strip():
        start += 1
    while end >= start and not lines[end].strip():
        end -= 1
    return (start, end) if start <= end else None


def window_spans(
    lines: list[str], start: int, end: int, size: int = WINDOW_LINES, max_chars: int = WINDOW_CHARS
) -> list[tuple[int, int]]:
    """Non-overlapping windows over rows [start, end]: at most ``size`` rows and about ``max_chars``
    characters each (a single longer line still makes one window), blank edges trimmed."""
    spans: list[tuple[int, int]] = []
    end = min(end, len(lines) - 1)
    row = start
    while row <= end:
        while row <= end and not lines[row].strip():
            row += 1
        if row > end:
            break
        last, chars = row, len(lines[row])
        while last < end and last - row + 1 < size and chars + len(lines[last + 1]) + 1 <= max_chars:
            last += 1
            chars += len(lines[last]) + 1
        span = trim_span(lines, row, last)
        if span is not None:
            spans.append(span)
        row = last + 1
    return spans


def make_chunk(
    rel_path: str,
    lines: list[str],
    start: int,
    end: int,
    language: str,
    symbols: tuple[str, ...] = (),
    kind: str = "lines",
    binds: tuple[str, ...] = (),
) -> Chunk:
    """A Chunk for 0-based inclusive rows [start, end] (stored 1-based)."""
    return Chunk(
        file_path=rel_path,
        start_line=start + 1,
        end_line=end + 1,
        content="\n".join(lines[start : end + 1]),
        language=language,
        symbols=symbols,
        kind=kind,
        binds=binds,
    )


def line_chunks(
    rel_path: str, text: str, language: str, size: int = WINDOW_LINES, max_chars: int = WINDOW_CHARS
) -> list[Chunk]:
    """Split any text into windows of ``size`` lines; whitespace-only windows are skipped."""
    lines = split_lines(text)
    spans = window_spans(lines, 0, len(lines) - 1, size, max_chars)
    return [make_chunk(rel_path, lines, s, e, language) for s, e in spans]
