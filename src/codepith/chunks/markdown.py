"""Markdown split at headings: each section (heading + body) is a chunk named by its heading.

A line scanner is used rather than a grammar: headings are all that matter here, and scanning is far
cheaper than parsing. Fenced code blocks are skipped so '# comment' lines inside them are not headings.
"""

from __future__ import annotations

import re

from .chunk import Chunk
from .lines import make_chunk, split_lines, trim_span, window_spans

SECTION_MAX_LINES = 60
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    """(row, heading text) for each heading; a setext heading starts at its text row."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    front_matter_end = -1
    if lines and lines[0].strip() == "---":  # YAML front matter: its closing '---' is no heading
        front_matter_end = next((r for r in range(1, len(lines)) if lines[r].strip() == "---"), 0)
    for row, line in enumerate(lines):
        if row <= front_matter_end:
            continue
        fence_match = _FENCE.match(line)
        if fence is not None:
            marker = fence_match.group(1) if fence_match else ""
            if marker[:1] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        atx = _ATX.match(line)
        if atx:
            found.append((row, (atx.group(2) or "").strip()))
            continue
        if row > 0 and _SETEXT.match(line) and lines[row - 1].strip():
            prev = lines[row - 1]
            after_heading = bool(found) and found[-1][0] == row - 1
            looks_like_block = prev.lstrip().startswith(("-", "*", "|", ">", "+"))
            if not after_heading and not looks_like_block and row > front_matter_end:
                found.append((row - 1, prev.strip()))
    return found


def markdown_chunks(rel_path: str, text: str, language: str = "markdown") -> list[Chunk]:
    """One chunk per section; long sections are windowed, each window keeping the heading."""
    lines = split_lines(text)
    starts = _headings(lines)
    bounds: list[tuple[int, int, str]] = []
    if not starts or starts[0][0] > 0:
        bounds.append((0, (starts[0][0] - 1) if starts else len(lines) - 1, ""))
    for i, (row, title) in enumerate(starts):
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines) - 1
        bounds.append((row, end, title))
    chunks: list[Chunk] = []
    for start, end, title in bounds:
        span = trim_span(lines, start, end)
        if span is None:
            continue
        symbols = (title,) if title else ()
        for s, e in window_spans(lines, span[0], span[1], SECTION_MAX_LINES):
            chunks.append(make_chunk(rel_path, lines, s, e, language, symbols, "section"))
    return chunks
