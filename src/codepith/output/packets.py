"""Evidence packets: the lines that carry a match, numbered and budgeted, for an agent's context.

An agent pays for every character it reads, so a packet shows the best hits first and, inside each
hit, only the lines holding a query token plus a little context. Everything left out is named by a
marker (line range, and where it matters the exact call that shows it), so nothing is silently lost.
The reply never exceeds ``max_chars``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from codepith.index.tokens import query_terms, tokenize
from codepith.search.result import SearchResult

ReadCall = Callable[[str, int, int], str]

CONTEXT_LINES = 2  # lines shown around each matching line
MAX_GAP = 2  # a gap this small between shown runs is shown rather than replaced by a marker
HEAD_LINES = 8  # lines shown for a hit with no lexical overlap (signature first)
MAX_LINE_CHARS = 300  # longer lines (minified code, data) are shortened in a packet
MIN_HIT_SHARE = 400  # a hit that is not the last may use half the room left, but at least this much
TRAILER_RESERVE_ENTRIES = 2  # room kept for the trailer while hits are emitted

_BACKTICKS = re.compile(r"`{3,}")


@dataclass
class _Group:
    """One or more hits of one file whose spans touch or overlap, shown under one header."""

    path: str
    start: int
    end: int
    score: float
    language: str
    rank: int  # position of the best-ranked member in the results
    path_match: bool
    lines: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Row:
    """A body row: a numbered code line (``line`` set) or an omission marker (``line`` is 0).

    ``cut_ok``: a budget cut may end after this row. Not true for context lines before a run's first
    match, which would spend characters without showing the evidence.
    """

    text: str
    line: int = 0
    cut_ok: bool = False


def _add_lines(group: _Group, start: int, end: int, content: str) -> None:
    for offset, text in enumerate(content.split("\n")):
        number = start + offset
        if number > end:
            break
        group.lines.setdefault(number, text.rstrip())


def group_hits(results: Sequence[SearchResult]) -> list[_Group]:
    """Merge hits of one file that touch or overlap (union span, best score), keep best-first order."""
    by_file: dict[str, list[tuple[int, SearchResult]]] = {}
    for rank, res in enumerate(results):
        by_file.setdefault(res.chunk.file_path, []).append((rank, res))
    groups: list[_Group] = []
    for path, items in by_file.items():
        items.sort(key=lambda item: (item[1].chunk.start_line, item[1].chunk.end_line))
        current: _Group | None = None
        for rank, res in items:
            chunk = res.chunk
            start = max(1, chunk.start_line)
            end = max(start, chunk.end_line)
            if current is not None and start <= current.end + 1:
                current.end = max(current.end, end)
                current.score = max(current.score, res.score)
                current.rank = min(current.rank, rank)
                current.path_match = current.path_match or res.path_match
            else:
                current = _Group(path, start, end, res.score, chunk.language, rank, res.path_match)
                groups.append(current)
            _add_lines(current, start, end, chunk.content)
    groups.sort(key=lambda g: g.rank)
    return groups


def _score(score: float) -> str:
    return f"{score:.0f}" if abs(score) >= 100 else f"{score:.3g}"


def _header(group: _Group) -> str:
    return f"FILE {group.path}  LINES {group.start}-{group.end}  SCORE {_score(group.score)}"


def _code(number: int, text: str, cut_ok: bool) -> _Row:
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]} ... (+{len(text) - MAX_LINE_CHARS} chars)"
    return _Row(f"{number}| {text}".rstrip(), number, cut_ok)


def _gap(start: int, end: int) -> _Row:
    return _Row(f"... (lines {start}-{end} omitted)")


def _rest(path: str, start: int, end: int, read_call: ReadCall) -> _Row:
    return _Row(f"... (lines {start}-{end} omitted; {read_call(path, start, end)})")


def _fill_small_gaps(shown: set[int], group: _Group) -> None:
    """Show gaps of MAX_GAP lines or fewer (between runs and at the span's edges): cheaper than a marker."""
    ordered = sorted(shown)
    bounds = [group.start - 1, *ordered, group.end + 1]
    for left, right in zip(bounds, bounds[1:], strict=False):
        missing = range(left + 1, right)
        if 0 < len(missing) <= MAX_GAP and all(n in group.lines for n in missing):
            shown.update(missing)


def _rows(shown: set[int], group: _Group, matched: set[int] | None = None) -> list[_Row]:
    """Numbered rows for ``shown`` with a gap marker for every omitted stretch inside the span.

    With ``matched`` (the lines holding a query token), a cut may only end at or after a run's first match.
    """
    rows: list[_Row] = []
    previous = group.start - 1
    run_has_match = matched is None
    for number in sorted(shown):
        if number > previous + 1:
            rows.append(_gap(previous + 1, number - 1))
            run_has_match = matched is None
        run_has_match = run_has_match or (matched is not None and number in matched)
        rows.append(_code(number, group.lines[number], run_has_match))
        previous = number
    if previous < group.end:
        rows.append(_gap(previous + 1, group.end))
    return rows


def _body(group: _Group, terms: frozenset[str], read_call: ReadCall) -> list[_Row] | None:
    """Rows for one group, or None when it is a one-line path pointer."""
    matched = {n for n, text in group.lines.items() if terms.intersection(tokenize(text))}
    if not matched:
        if group.path_match:
            return None
        known = sorted(group.lines)
        while known and not group.lines[known[0]].strip():
            known.pop(0)
        head = set(known[:HEAD_LINES])
        if head:
            _fill_small_gaps(head, group)
        rows = _rows(head, group)
        if rows and not rows[-1].line and head:
            last = max(head)
            rows[-1] = _rest(group.path, last + 1, group.end, read_call)
        return rows
    shown: set[int] = set()
    for number in matched:
        for near in range(number - CONTEXT_LINES, number + CONTEXT_LINES + 1):
            if near in group.lines:
                shown.add(near)
    _fill_small_gaps(shown, group)
    return _rows(shown, group, matched)


def _cost(lines: Sequence[str]) -> int:
    """Characters these lines take in the reply, counting one newline after each."""
    return sum(len(line) + 1 for line in lines)


def _fence(rows: Sequence[_Row]) -> str:
    """A fence longer than any backtick run in the shown code, so the block cannot end early."""
    longest = 2
    for row in rows:
        if "```" in row.text:
            longest = max(longest, *(len(run) for run in _BACKTICKS.findall(row.text)))
    return "`" * (longest + 1)


def _block(group: _Group, rows: Sequence[_Row], fence: str) -> list[str]:
    if not any(row.line for row in rows):
        return [_header(group), *(row.text for row in rows)]
    return [_header(group), fence + group.language, *(row.text for row in rows), fence]


def _pointer(group: _Group) -> list[str]:
    return [f"{_header(group)}  (path match only)"]


def _cut(group: _Group, rows: Sequence[_Row], room: int, read_call: ReadCall) -> list[str] | None:
    """The longest prefix of ``rows`` (whole lines) that fits ``room`` with a marker calling for the rest.

    Returns None when not even the header, one code line and the marker fit.
    """
    fence = _fence(rows)
    frame = _cost([_header(group), fence + group.language, fence])
    best = 0
    used = frame
    for keep, row in enumerate(rows, 1):
        used += len(row.text) + 1
        if not row.cut_ok:
            continue  # not on a marker (the rest-marker covers it) nor on context before a match
        rest = _rest(group.path, row.line + 1, group.end, read_call)
        if used + len(rest.text) + 1 > room:
            break
        best = keep
    if not best:
        return None
    last = rows[best - 1].line
    return _block(group, [*rows[:best], _rest(group.path, last + 1, group.end, read_call)], fence)


def _entry(group: _Group) -> str:
    return f"{group.path} {group.start}-{group.end}"


def _trailer(left: Sequence[_Group], room: int, read_call: ReadCall, *, more: bool) -> str | None:
    """One line listing the hits left out (as many as fit in ``room`` characters), or None."""
    if not left or room <= 0:
        return None
    count = f"{len(left)} more hits" if more else f"{len(left)} hits"
    first = left[0]
    call = read_call(first.path, first.start, first.end)
    entries = [_entry(g) for g in left]
    for prefix in (f"{count} (read e.g. {call}): ", f"{count}: "):
        for keep in range(len(entries), 0, -1):
            tail = "" if keep == len(entries) else f", +{len(entries) - keep}"
            line = prefix + ", ".join(entries[:keep]) + tail
            if len(line) <= room:
                return line
    return count[:room]


def _trailer_reserve(left: Sequence[_Group], read_call: ReadCall) -> int:
    if not left:
        return 0
    line = _trailer(left[:TRAILER_RESERVE_ENTRIES], 10**9, read_call, more=True) or ""
    extra = len(f", +{len(left)}") if len(left) > TRAILER_RESERVE_ENTRIES else 0
    return len(line) + extra + 1


def render_packet(
    query: str,
    results: Sequence[SearchResult],
    *,
    max_chars: int = 6000,
    read_call: ReadCall,
) -> str:
    """Render ``results`` for an agent in at most ``max_chars`` characters, best hit first.

    ``read_call(path, start, end)`` returns the call text that shows those lines on the current
    surface, so markers and the trailer tell the agent exactly how to get what was left out.
    """
    if max_chars <= 0:
        return ""
    if not results:
        return f"no results for {query!r}"[:max_chars]
    terms = frozenset(query_terms(query))
    groups = group_hits(results)
    bodies = [_body(g, terms, read_call) for g in groups]
    blocks = [
        _pointer(g) if rows is None else _block(g, rows, _fence(rows))
        for g, rows in zip(groups, bodies, strict=True)
    ]
    whole = [line for block in blocks for line in block]
    if _cost(whole) - 1 <= max_chars:
        return "\n".join(whole)

    out: list[str] = []
    budget = max_chars + 1  # the last line has no newline after it
    left_out: list[_Group] = []
    for index, group in enumerate(groups):
        rest = groups[index + 1 :]
        avail = budget - _cost(out) - _trailer_reserve(rest, read_call)
        room = avail if not rest else min(avail, max(avail // 2, MIN_HIT_SHARE))
        block = blocks[index]
        if _cost(block) <= room:
            out.extend(block)
            continue
        rows = bodies[index]
        cut = _cut(group, rows, room, read_call) if rows else None
        if cut is None:
            left_out = groups[index:]
            break
        out.extend(cut)
        if room >= avail:  # cut by the budget itself, not by the per-hit share: stop here
            left_out = list(rest)
            break
    trailer = _trailer(left_out, budget - _cost(out) - 1, read_call, more=bool(out))
    if trailer:
        out.append(trailer)
    reply = "\n".join(out)
    return reply[:max_chars]
