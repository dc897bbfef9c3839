"""Evidence packets: the lines that carry a match, numbered and budgeted, for an agent's context.

An agent pays for every character it reads, and a hit it never sees is a hit it cannot use. So the
budget is spent breadth first: the best hit gets a readable share first (it is the likeliest
answer); then every other hit, best first (a file's second hit after every file's first), gets a
compact view: its best matching line, or its signature when it matched by meaning only; what is
left grows the shown hits, best first, towards the full view (every line holding a query token plus
two lines of context). A hit too big for the room left does not stop the smaller ones after it.
Everything left out is named: omitted stretches by ``... (lines A-B omitted)`` markers, hits that
did not fit by the trailer, and one marker (on the best hit with omitted lines) carries the exact
call that shows them on the current surface. The reply never exceeds ``max_chars``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from codepith.chunks.chunk import Chunk
from codepith.chunks.lines import numbered_lines
from codepith.files.names import show_name
from codepith.index.tokens import tokenize
from codepith.output.evidence import ANCHOR, Evidence, gather, line_rarity
from codepith.search.query import bound_query
from codepith.search.result import SearchResult
from codepith.structure.definitions import Definition

ReadCall = Callable[[str, int, int], str]
# result path -> that file's indexed lines by number (for an issue-sized query's evidence past the hits)
FileLines = Callable[[str], Mapping[int, str]]
# (result path, language, line) -> the definitions around that line, outermost first
Enclosing = Callable[[str, str, int], Sequence[Definition]]

CONTEXT_LINES = 2  # lines shown around each matching line in a hit's full view
COMPACT_CONTEXT = 0  # lines shown around the best matching line in a hit's compact (pass 1) view
MAX_GAP = 2  # a gap this small between shown runs is shown rather than replaced by a marker
HEAD_LINES = 8  # lines shown for a hit with no lexical overlap (signature first)
COMPACT_HEAD_LINES = 1  # of which the compact view shows this many
MAX_LINE_CHARS = 300  # longer lines (minified code, data) are shortened in a packet
TOP_HIT_SHARE = 15  # percent of the budget the best hit may take before the other hits get a line
BREADTH_SHARE = 80  # percent of the budget pass 1 may fill, so the best hits can still grow in pass 2
TRAILER_RESERVE_ENTRIES = 2  # room kept for the trailer while hits are placed
PROSE_WEIGHT = 0.3  # for an issue-sized query, evidence on a comment or docstring line counts this much
WEAK_HITS = 3  # hits listed under a "no confident match" reply
CRUMB_SIGNATURE_CHARS = 70  # a breadcrumb's signature is cut here
CRUMB_DEPTH = 3  # breadcrumbs name at most this many enclosing definitions (outermost and innermost kept)
EVIDENCE_FILES = 2  # an issue-sized query: the best files whose strongest evidence past the hits is shown too
EVIDENCE_LINES = 5  # ... at most this many lines per file, each with CONTEXT_LINES around it
EVIDENCE_MAX_LINES = 20_000  # ... in files up to this long (each line is scored: ~5 us a line)

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
    dense: bool  # some member was retrieved by meaning (embedding), not only by its words or path
    lines: dict[int, str] = field(default_factory=dict)
    evidence: bool = False  # not a hit: lines of a hit's file that hold an issue's strongest evidence


@dataclass(frozen=True)
class _Row:
    """A body row: a numbered code line (``line`` set) or an omission marker of lines ``start``-``end``."""

    text: str
    line: int = 0
    start: int = 0
    end: int = 0


def _add_lines(group: _Group, start: int, end: int, content: str) -> None:
    for number, text in numbered_lines(start, end, content):
        group.lines.setdefault(number, text)


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
                current.dense = current.dense or res.dense_rank is not None
            else:
                current = _Group(
                    path, start, end, res.score, chunk.language, rank, res.path_match, res.dense_rank is not None
                )
                groups.append(current)
            _add_lines(current, start, end, chunk.content)
    groups.sort(key=lambda g: g.rank)
    return groups


# --- views: which lines of a hit are shown ------------------------------------------------------------


def _fill_small_gaps(shown: set[int], group: _Group) -> set[int]:
    """Show gaps of MAX_GAP lines or fewer (between runs and at the span's edges): cheaper than a marker."""
    ordered = sorted(shown)
    bounds = [group.start - 1, *ordered, group.end + 1]
    filled = set(shown)
    for left, right in zip(bounds, bounds[1:], strict=False):
        missing = range(left + 1, right)
        if 0 < len(missing) <= MAX_GAP and all(n in group.lines for n in missing):
            filled.update(missing)
    return filled


def _around(group: _Group, lines: Iterable[int], context: int) -> set[int]:
    return {near for n in lines for near in range(n - context, n + context + 1) if near in group.lines}


_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;|<!--|\"\"\"|''')")


def _head(group: _Group) -> list[int]:
    """The chunk's lines from its signature on: leading blank and comment lines (licenses, banners) skipped."""
    known = sorted(group.lines)
    texts = [group.lines[n] for n in known]
    for skip in (lambda t: not t.strip() or _COMMENT.match(t) is not None, lambda t: not t.strip()):
        first = next((i for i, text in enumerate(texts) if not skip(text)), None)
        if first is not None:
            return known[first:]
    return known


_DOC_QUOTES = re.compile(r'"""|\'\'\'')


def _prose_lines(group: _Group) -> set[int]:
    """Comment lines and lines inside triple-quoted strings: prose that an issue's prose matches."""
    prose: set[int] = set()
    inside = False
    for n in sorted(group.lines):
        text = group.lines[n]
        quotes = len(_DOC_QUOTES.findall(text))
        if inside or quotes or _COMMENT.match(text):
            prose.add(n)
        if quotes % 2:
            inside = not inside
    return prose


def _density(
    group: _Group, weights: Mapping[str, float], anchors: Iterable[int], prose_weight: float
) -> dict[int, float]:
    """Each line's evidence: the weights of the query tokens it holds, plus a traceback's anchor."""
    density = {n: sum(weights.get(t, 0.0) for t in set(tokenize(text))) for n, text in group.lines.items()}
    if prose_weight != 1.0:  # an issue's words match docstrings and comments; the fix is in the code
        for n in _prose_lines(group):
            density[n] *= prose_weight
    for n in anchors:  # the line a traceback frame names
        if n in density:
            density[n] += ANCHOR
    return density


def _evidence_groups(
    groups: list[_Group], weights: Mapping[str, float], evidence: Evidence, file_lines: FileLines
) -> list[_Group]:
    """``groups`` with, right after the best hit of each of the best EVIDENCE_FILES files, the stretches
    of that file outside its hits around its EVIDENCE_LINES strongest evidence lines. An issue names the
    code it is about (a traceback's function, a quoted identifier); the line that names it is often in
    the right file but not in the hit that ranked best (measured: 84% of a fix's changed lines are in the
    top-10 hits' files, 31% inside the hits), and an agent would otherwise spend a read to find it."""
    out = list(groups)
    for path in list(dict.fromkeys(g.path for g in groups))[:EVIDENCE_FILES]:
        own = [g for g in groups if g.path == path]
        try:
            lines = dict(file_lines(path))
        except Exception:  # noqa: BLE001 - a packet never fails for the extra lines
            continue
        if not lines or max(lines) - min(lines) > EVIDENCE_MAX_LINES:
            continue
        for n in range(min(lines), max(lines)):  # chunks leave out the blank lines between them
            lines.setdefault(n, "")
        taken = {n for g in own for n in range(g.start, g.end + 1)}
        whole = _Group(path, min(lines), max(lines), 0.0, own[0].language, 0, False, False, lines)
        density = _density(whole, weights, evidence.anchored_lines(path), PROSE_WEIGHT)
        best = sorted((n for n, d in density.items() if d > 0 and n not in taken), key=lambda n: (-density[n], n))
        window = sorted(
            {k for n in best[:EVIDENCE_LINES] for k in range(n - CONTEXT_LINES, n + CONTEXT_LINES + 1)}
            & (lines.keys() - taken)
        )
        spans: list[list[int]] = []
        for n in window:  # stretches a small gap apart are one (the gap is shown, as inside a hit)
            gap = range(spans[-1][1] + 1, n) if spans else range(0)
            if spans and len(gap) <= MAX_GAP and all(k in lines and k not in taken for k in gap):
                spans[-1][1] = n
            else:
                spans.append([n, n])
        extra = [
            _Group(
                path,
                start,
                end,
                max(g.score for g in own),
                own[0].language,
                max(g.rank for g in own),
                False,
                False,
                {k: lines[k] for k in range(start, end + 1) if k in lines},
                evidence=True,
            )
            for start, end in spans
        ]
        at = min(i for i, g in enumerate(out) if g.path == path) + 1
        out[at:at] = extra
    return out


def _views(
    group: _Group, weights: Mapping[str, float], anchors: Iterable[int] = (), *, prose_weight: float = 1.0
) -> list[frozenset[int]]:
    """Growing sets of shown lines for one hit: ``[compact, ..., full]``; ``[]`` for a path-only pointer.

    A hit with query tokens: its best line (most evidence: the query tokens it holds, weighted by
    ``output.evidence``, plus a traceback's anchor; earliest on ties), then the
    matching lines with CONTEXT_LINES of context around each, one more at a time, best first, up to
    the full view (all of them). A hit matched by meaning only: its head, signature first, growing to HEAD_LINES lines.
    """
    density = _density(group, weights, anchors, prose_weight)
    matched = sorted((n for n, d in density.items() if d), key=lambda n: (-density[n], n))
    views: list[frozenset[int]] = []

    def push(shown: set[int]) -> None:
        view = frozenset(_fill_small_gaps(shown, group))
        if view and (not views or view != views[-1]):
            views.append(view)

    if matched:
        push(_around(group, matched[:1], COMPACT_CONTEXT))
        shown: set[int] = set()
        for number in matched:  # then whole evidence runs, best line first, so each step reads on its own
            shown |= _around(group, [number], CONTEXT_LINES)
            push(shown)
        return views
    if group.path_match and not group.dense:
        return []  # matched only through its path: a one-line pointer
    head = _head(group)
    for size in range(COMPACT_HEAD_LINES, HEAD_LINES + 1):
        push(set(head[:size]))
    return views


# --- rendering --------------------------------------------------------------------------------------


def _score(score: float) -> str:
    return f"{score:.0f}" if abs(score) >= 100 else f"{score:.3g}"


def _header(group: _Group) -> str:
    mark = "  (issue evidence, not a hit)" if group.evidence else ""
    return f"FILE {show_name(group.path)}  LINES {group.start}-{group.end}  SCORE {_score(group.score)}{mark}"


def _code(number: int, text: str) -> _Row:
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]} ... (+{len(text) - MAX_LINE_CHARS} chars)"
    return _Row(f"{number}| {text}".rstrip(), line=number)


def _gap(start: int, end: int, call: str = "") -> _Row:
    text = f"... (lines {start}-{end} omitted; {call})" if call else f"... (lines {start}-{end} omitted)"
    return _Row(text, start=start, end=end)


def _rows(shown: frozenset[int], group: _Group) -> list[_Row]:
    """Numbered rows for ``shown`` with a gap marker for every omitted stretch inside the span."""
    rows: list[_Row] = []
    previous = group.start - 1
    for number in sorted(shown):
        if number > previous + 1:
            rows.append(_gap(previous + 1, number - 1))
        rows.append(_code(number, group.lines[number]))
        previous = number
    if previous < group.end:
        rows.append(_gap(previous + 1, group.end))
    return rows


def _fence(rows: Sequence[_Row]) -> str:
    """A fence longer than any backtick run in the shown code, so the block cannot end early."""
    longest = 2
    for row in rows:
        if "```" in row.text:
            longest = max(longest, *(len(run) for run in _BACKTICKS.findall(row.text)))
    return "`" * (longest + 1)


def _cost(lines: Iterable[str]) -> int:
    """Characters these lines take in the reply, counting one newline after each."""
    return sum(len(line) + 1 for line in lines)


def _call_row(rows: Sequence[_Row]) -> int | None:
    """Index of the marker that carries the read call: the one after the last shown line, else the last."""
    markers = [i for i, row in enumerate(rows) if not row.line]
    if not markers:
        return None
    after = [i for i in markers if i > max((i for i, row in enumerate(rows) if row.line), default=-1)]
    return (after or markers)[-1]


@dataclass
class _Plan:
    """One hit's possible renderings: its views, their sizes (computed when first asked), the chosen one."""

    group: _Group
    views: list[frozenset[int]]
    read_call: ReadCall
    enclosing: Enclosing | None = None
    weak: bool = False  # listed under "no confident match"
    level: int = -1  # index into views; -1 = not shown (a path-only pointer has the one level 0)
    crumb_mode: int = 0  # 0: no breadcrumb, 1: kinds and names, 2: the innermost by its signature
    _sizes: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def pointer(self) -> bool:
        return not self.views

    @property
    def shown(self) -> bool:
        return self.level >= 0

    @property
    def top(self) -> int:
        """The fullest level."""
        return max(len(self.views) - 1, 0)

    def block(self, level: int, with_call: bool) -> list[str]:
        header = _header(self.group) + ("  (weak)" if self.weak else "")
        if self.pointer:
            return [f"{header}  (path match only)"]
        rows = _rows(self.views[level], self.group)
        at = _call_row(rows) if with_call else None
        if at is not None:
            marker = rows[at]
            rows[at] = _gap(marker.start, marker.end, self.read_call(self.group.path, marker.start, marker.end))
        fence = _fence(rows)
        crumb = self.crumb(level) if self.crumb_mode else None
        return [
            header,
            *([crumb] if crumb else []),
            fence + self.group.language,
            *(row.text for row in rows),
            fence,
        ]

    def crumb(self, level: int) -> str | None:
        """Where the first shown line sits (enclosing definitions whose signature is not shown)."""
        if self.enclosing is None:
            return None
        shown = self.views[level]
        try:
            definitions = self.enclosing(self.group.path, self.group.language, min(shown))
        except Exception:  # noqa: BLE001 - structure is a bonus; a packet never fails for it
            return None
        return breadcrumb(definitions, shown, signature=self.crumb_mode > 1)

    def size(self, level: int) -> tuple[int, int]:
        """Characters of the block at ``level``, and the extra characters when it carries the read call."""
        key = (level, self.crumb_mode)
        if key not in self._sizes:
            plain = _cost(self.block(level, False))
            self._sizes[key] = (plain, _cost(self.block(level, True)) - plain)
        return self._sizes[key]


def _crumb(definition: Definition, signature: bool) -> str:
    sig = definition.signature if signature and definition.signature else f"{definition.kind} {definition.name}"
    if len(sig) > CRUMB_SIGNATURE_CHARS:
        sig = sig[: CRUMB_SIGNATURE_CHARS - 3].rstrip() + "..."
    return f"{sig} ({definition.line})"


def breadcrumb(definitions: Sequence[Definition], shown: Iterable[int], *, signature: bool = True) -> str | None:
    """``in: class A (3) > def f(self, x): (9)``: the definitions a hit sits in whose signature line
    is not already shown, outermost first, each with its line; None when there are none.

    The innermost is named by its signature when ``signature``, else by kind and name like the ones
    around it (the cheaper form, for when the room left is small).
    """
    visible = set(shown)
    names = [d for d in definitions if d.line not in visible]
    if not names:
        return None
    if len(names) > CRUMB_DEPTH:
        names = [names[0], *names[-(CRUMB_DEPTH - 1) :]]
    return "in: " + " > ".join(_crumb(d, signature and i == len(names) - 1) for i, d in enumerate(names))


def _entry(group: _Group) -> str:
    return f"{show_name(group.path)} {group.start}-{group.end}"


def _trailer(left: Sequence[_Group], room: int, read_call: ReadCall, *, more: bool, call: bool) -> str | None:
    """One line listing the hits left out (as many as fit in ``room`` characters), or None."""
    if not left or room <= 0:
        return None
    count = f"{len(left)} more hits" if more else f"{len(left)} hits"
    first = left[0]
    entries = [_entry(g) for g in left]
    prefixes = [f"{count} (read e.g. {read_call(first.path, first.start, first.end)}): "] if call else []
    for prefix in [*prefixes, f"{count}: "]:
        for keep in range(len(entries), 0, -1):
            tail = "" if keep == len(entries) else f", +{len(entries) - keep}"
            line = prefix + ", ".join(entries[:keep]) + tail
            if len(line) <= room:
                return line
    return count[:room]


class _Budget:
    """The packet being planned: which view of each hit is shown, and what it all costs."""

    def __init__(self, plans: list[_Plan], max_chars: int, trailer_reserve: int) -> None:
        self.plans = plans
        self.limit = max_chars + 1  # the last line has no newline after it
        self.trailer_reserve = trailer_reserve

    def bearer(self) -> _Plan | None:
        """The best-ranked shown hit with an omitted stretch: its marker names the read call."""
        for plan in self.plans:
            if plan.shown and plan.size(plan.level)[1]:
                return plan
        return None

    def total(self) -> int:
        used = sum(p.size(p.level)[0] for p in self.plans if p.shown)
        bearer = self.bearer()
        if bearer is not None:
            used += bearer.size(bearer.level)[1]
        if any(not p.shown and not p.group.evidence for p in self.plans):
            used += self.trailer_reserve
        return used

    def try_level(self, plan: _Plan, level: int, limit: int | None = None) -> bool:
        """Show ``plan`` at ``level`` if the packet still fits ``limit`` (default: the budget)."""
        before = plan.level
        plan.level = level
        if self.total() <= (self.limit if limit is None else limit):
            return True
        plan.level = before
        return False

    def add_crumb(self, plan: _Plan) -> None:
        """The hit's breadcrumb by signature if it fits, else by kinds and names, else none."""
        for mode in (2, 1):
            plan.crumb_mode = mode
            if self.total() <= self.limit:
                return
        plan.crumb_mode = 0

    def grow(self, plan: _Plan, limit: int) -> None:
        """Show ``plan`` at its fullest level that keeps the packet within ``limit``, one step at a time.

        Stops at the first step that does not fit: later steps only add lines.
        """
        while plan.level < plan.top and self.try_level(plan, plan.level + 1, limit):
            pass


def _first_pass_order(plans: Sequence[_Plan]) -> list[_Plan]:
    """Hits in rank order, but a file's second and later hits after every file's first. Issue evidence
    counts as a first: the best files' strongest lines are likelier the fix than a tenth hit's file."""
    seen: set[str] = set()
    first: list[_Plan] = []
    later: list[_Plan] = []
    for plan in plans:
        (later if plan.group.path in seen and not plan.group.evidence else first).append(plan)
        seen.add(plan.group.path)
    return first + later


def _trailer_reserve(groups: Sequence[_Group], read_call: ReadCall) -> int:
    """Room kept for the trailer: a count and a couple of entries (it lists more when more is left)."""
    left = groups[-TRAILER_RESERVE_ENTRIES:]
    line = _trailer(left, 10**9, read_call, more=True, call=False) or ""
    return len(line) + len(f", +{len(groups)}") + 1


def _memo(enclosing: Enclosing) -> Enclosing:
    """One lookup per (path, line) while a packet is planned: every view of a hit asks again."""
    seen: dict[tuple[str, str, int], Sequence[Definition]] = {}

    def lookup(path: str, language: str, line: int) -> Sequence[Definition]:
        key = (path, language, line)
        if key not in seen:
            seen[key] = enclosing(path, language, line)
        return seen[key]

    return lookup


def render_packet(
    query: str,
    results: Sequence[SearchResult],
    *,
    max_chars: int = 6000,
    read_call: ReadCall,
    notes: Sequence[str] = (),
    enclosing: Enclosing | None = None,
    confident: bool = True,
    weak: bool = False,
    file_lines: FileLines | None = None,
) -> str:
    """Render ``results`` for an agent in at most ``max_chars`` characters, best hit first.

    ``read_call(path, start, end)`` returns the call text that shows those lines on the current
    surface, so the markers and the trailer tell the agent exactly how to get what was left out.
    ``notes`` (a cut query, why the index is empty) come first, as ``note:`` lines.
    ``enclosing(path, language, line)``, when given, names the definitions a hit sits in: a
    breadcrumb line under its header, added best hit first once the code is placed, in the room
    left (by signature, else by kind and name), so it never costs a hit or a line of code. ``confident=False`` (nothing
    in the corpus really matches, see ``api.Confidence``) says so first and lists at most WEAK_HITS
    hits, each marked ``(weak)``. ``file_lines(path)``, when given, lets an issue-sized query's packet
    show a hit file's strongest evidence lines outside its hits (headed ``(issue evidence, not a hit)``).
    """
    if max_chars <= 0:
        return ""
    query = bound_query(query)[0]  # what was searched: a 10 MB query costs its evidence scan no more than that
    head = "".join(f"note: {n}\n" if not n.startswith(" ") else f"{n}\n" for n in notes)
    if not results:
        shown = query if len(query) <= 200 else query[:200] + "..."
        return (head + f"no results for {shown!r}")[:max_chars]
    if head:
        if len(head) >= max_chars // 2:
            head = head[: max_chars // 2 - 4] + "...\n"
        return head + _render(query, results, max_chars - len(head), read_call, enclosing, confident, weak, file_lines)
    return _render(query, results, max_chars, read_call, enclosing, confident, weak, file_lines)


def _render(
    query: str,
    results: Sequence[SearchResult],
    max_chars: int,
    read_call: ReadCall,
    enclosing: Enclosing | None,
    confident: bool,
    weak: bool,
    file_lines: FileLines | None = None,
) -> str:
    if max_chars <= 0:
        return ""
    if not confident:
        note = no_match_line(query)
        rest = _render(query, results[:WEAK_HITS], max_chars - len(note) - 1, read_call, enclosing, True, True)
        return f"{note}\n{rest}"[:max_chars] if rest else note[:max_chars]
    evidence = gather(query)
    groups = group_hits(results)
    weights = line_rarity(evidence, (text for g in groups for text in g.lines.values()))
    if evidence.long and file_lines is not None and not weak:
        groups = _evidence_groups(groups, weights, evidence, file_lines)
    if enclosing is not None:
        enclosing = _memo(enclosing)
    plans = [
        _Plan(
            g,
            _views(g, weights, evidence.anchored_lines(g.path), prose_weight=PROSE_WEIGHT if evidence.long else 1.0),
            read_call,
            enclosing,
            weak,
        )
        for g in groups
    ]
    budget = _Budget(plans, max_chars, _trailer_reserve([p.group for p in plans if not p.group.evidence], read_call))

    if plans:  # pass 0: the best hit, the likeliest answer, gets a readable share of the budget
        budget.try_level(plans[0], 0)
        budget.grow(plans[0], budget.limit * TOP_HIT_SHARE // 100 + budget.trailer_reserve)
    order = _first_pass_order(plans)
    breadth = budget.limit * BREADTH_SHARE // 100
    for plan in order:  # pass 1: a compact view of every other hit, as long as the breadth share allows
        if not plan.shown:
            budget.try_level(plan, 0, breadth)
    for plan in plans:  # pass 2: grow the shown hits, best first, as far as the budget allows
        if plan.shown:
            budget.grow(plan, budget.limit)
    for plan in order:  # pass 3: whatever is still left goes to compact views of the hits left out
        if not plan.shown:
            budget.try_level(plan, 0)
    if plans and not any(p.shown for p in plans):  # a tight budget: the best hit beats naming the rest
        budget.trailer_reserve = 0
        budget.try_level(plans[0], 0)
    if enclosing is not None:  # last: breadcrumbs, best hit first, in the room the code left
        for plan in plans:
            if plan.shown and not plan.pointer:
                budget.add_crumb(plan)

    bearer = budget.bearer()
    out: list[str] = []
    for plan in plans:
        if plan.shown:
            out.extend(plan.block(plan.level, plan is bearer))
    left = [p.group for p in plans if not p.shown and not p.group.evidence]
    trailer = _trailer(left, budget.limit - _cost(out) - 1, read_call, more=bool(out), call=bearer is None)
    if trailer:
        out.append(trailer)
    return "\n".join(out)[:max_chars]


def no_match_line(query: str) -> str:
    """The first line of a reply with no confident match: say so, and what to try instead."""
    shown = query if len(query) <= 60 else query[:57] + "..."
    return (
        f"no confident match for {shown!r}: no query word occurs in the code and nothing is close in meaning "
        "(try other words, or grep); closest weak hits:"
    )


def related_query(seed: Chunk) -> str:
    """Words that mark the lines of related code worth showing: the names the seed chunk defines
    (where related code calls or mirrors them), else the identifiers of its first line."""
    if seed.symbols:
        return " ".join(seed.symbols)
    first = next((ln for ln in seed.content.splitlines() if ln.strip()), "")
    return first.strip()
