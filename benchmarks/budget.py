"""Budgeted replies for the token-efficiency benchmark: what code lines a reply shows, and recall.

A target counts only when the reply shows at least one line of its code, so every system's reply
is reduced to the same thing: for each file, the set of line numbers whose text appears in the reply.
Packets are parsed (numbered lines under a FILE header); chunk and whole-file replies are built
here with their shown lines recorded as they are added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from metrics import Target, normalize_path

ShownLines = dict[str, set[int]]

_HEADER = re.compile(r"^FILE (?P<path>.+?)  LINES (?P<start>\d+)-(?P<end>\d+)  SCORE \S+")
_NUMBERED = re.compile(r"^(?P<line>\d+)\|(?: |$)")
_FENCE = re.compile(r"^`{3,}")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Query words that carry no search intent; codepith's own stop words plus common question filler.
STOP_WORDS = frozenset(
    """a an and are as at be by do does for from how i if in into is it its of on or the this that to
    was what when where which who why with can will should would there their then than these those
    not but has have had been being about after before any all each other some such only also via
    our you your they them we used using""".split()
)


@dataclass(frozen=True)
class Document:
    """A piece of a file as a reply shows it: its path, the number of its first line, its lines."""

    path: str
    first_line: int
    lines: tuple[str, ...]

    @property
    def last_line(self) -> int:
        return self.first_line + max(len(self.lines), 1) - 1


@dataclass(frozen=True)
class Reply:
    """A reply text and, per file, the line numbers whose code it shows."""

    text: str
    shown: Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class PacketParts:
    """Characters of a parsed packet by kind of line (newlines counted with the line before them)."""

    headers: int = 0
    fences: int = 0
    code: int = 0
    markers: int = 0
    pointers: int = 0
    trailer: int = 0
    hits: int = 0
    code_lines: int = 0


def split_lines(text: str) -> tuple[str, ...]:
    """Lines of a file or chunk as numbered by editors: a final newline does not open a line."""
    if not text:
        return ()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return tuple(lines)


def packet_shown_lines(reply: str) -> ShownLines:
    """Per file, the line numbers a packet shows as code (``N| ...`` rows under a FILE header).

    Headers, omission markers, path-only pointers and the trailer show no code, so they add nothing.
    """
    shown: ShownLines = {}
    path: str | None = None
    for line in reply.split("\n"):
        header = _HEADER.match(line)
        if header:
            path = normalize_path(header.group("path"))
            continue
        numbered = _NUMBERED.match(line)
        if numbered and path is not None:
            shown.setdefault(path, set()).add(int(numbered.group("line")))
    return shown


@dataclass(frozen=True)
class PacketHeader:
    """A FILE header of a packet: the hit's file and line span, and whether it is a path-only pointer."""

    path: str
    start: int
    end: int
    pointer: bool


def packet_headers(reply: str) -> list[PacketHeader]:
    """Every FILE header of a packet, in order."""
    out: list[PacketHeader] = []
    for line in reply.split("\n"):
        m = _HEADER.match(line)
        if m:
            out.append(
                PacketHeader(
                    normalize_path(m["path"]),
                    int(m["start"]),
                    int(m["end"]),
                    line.endswith("(path match only)"),
                )
            )
    return out


def packet_parts(reply: str) -> PacketParts:
    """Where a packet's characters go: headers, fences, code rows, omission markers, pointers, trailer."""
    counts = dict.fromkeys(("headers", "fences", "code", "markers", "pointers", "trailer", "hits", "code_lines"), 0)
    in_fence = False
    for line in reply.split("\n"):
        size = len(line) + 1
        if _HEADER.match(line):
            counts["hits"] += 1
            counts["pointers" if line.endswith("(path match only)") else "headers"] += size
        elif _FENCE.match(line):
            counts["fences"] += size
            in_fence = not in_fence
        elif in_fence and _NUMBERED.match(line):
            counts["code"] += size
            counts["code_lines"] += 1
        elif line.startswith("... (lines "):
            counts["markers"] += size
        else:
            counts["trailer"] += size
    return PacketParts(**counts)


def concat_documents(docs: Iterable[Document], budget: int) -> Reply:
    """Documents in order, each as ``path:start-end`` then its lines, until ``budget`` characters.

    The document that does not fit is cut after its last whole line that fits (those lines count);
    nothing after it is added. A header whose first line does not fit is left out too.
    """
    parts: list[str] = []
    shown: ShownLines = {}
    used = 0
    for doc in docs:
        header = f"{doc.path}:{doc.first_line}-{doc.last_line}\n"
        if used + len(header) > budget:
            break
        body: list[str] = []
        size = len(header)
        complete = True
        for offset, line in enumerate(doc.lines):
            if used + size + len(line) + 1 > budget:
                complete = False
                break
            body.append(line + "\n")
            size += len(line) + 1
            shown.setdefault(normalize_path(doc.path), set()).add(doc.first_line + offset)
        if body or (complete and not doc.lines):
            parts.append(header)
            parts.extend(body)
            used += size
        if not complete:
            break
    return Reply("".join(parts), {p: frozenset(s) for p, s in shown.items()})


def target_shown(shown: Mapping[str, Iterable[int]], target: Target) -> bool:
    """The reply shows a line of the target: its file, and for a span, a line inside the span."""
    lines = shown.get(target.path)
    if not lines:
        return False
    if not target.has_span:
        return True
    assert target.start_line is not None and target.end_line is not None
    return any(target.start_line <= n <= target.end_line for n in lines)


def budget_recall(shown: Mapping[str, Iterable[int]], targets: Sequence[Target]) -> float | None:
    """Share of the distinct targets the reply shows code of; None when there are no targets."""
    unique = list(dict.fromkeys(targets))
    if not unique:
        return None
    return sum(1 for t in unique if target_shown(shown, t)) / len(unique)


def query_keywords(query: str) -> list[str]:
    """Distinct lower-cased query words of 3+ characters, stop words dropped, in query order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        low = word.lower()
        if len(low) >= 3 and low not in STOP_WORDS:
            seen.setdefault(low, None)
    return list(seen)


def rank_files(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Files by distinct keywords contained, then total matches, then path (``counts[path][kw]``)."""
    scored = [
        (sum(1 for c in per_kw.values() if c > 0), sum(per_kw.values()), path)
        for path, per_kw in counts.items()
        if any(c > 0 for c in per_kw.values())
    ]
    scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
    return [path for _, _, path in scored]
