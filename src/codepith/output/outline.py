"""Outlines for an agent: a file's definitions or a repository map, numbered by line, within a budget.

Same conventions as packets: the reply never exceeds ``max_chars``, and what is left out is named
with the exact call that shows it (a read call for a file's omitted definitions, an outline call for
the files a map had no room for).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from codepith.files.names import shell_path, show_name, wire_name
from codepith.structure.definitions import Definition
from codepith.structure.outline import FileOutline, MapEntry, RepoMap

ReadCall = Callable[[str, int, int], str]
OutlineCall = Callable[[str], str]

DEFAULT_MAX_CHARS = 4000  # about aider's default map of 1k tokens


def cli_outline_call(path: str) -> str:
    return f"codepith outline {shell_path(path)}"


def mcp_outline_call(path: str) -> str:
    return f"outline(path={json.dumps(wire_name(path))})"  # spelt as read_snippet's path is


def render_outline(
    outline: FileOutline | RepoMap, *, max_chars: int, read_call: ReadCall, outline_call: OutlineCall
) -> str:
    """A file's outline or a folder's map, never over ``max_chars``."""
    if max_chars <= 0:
        return ""
    if isinstance(outline, FileOutline):
        return render_file_outline(outline, max_chars=max_chars, read_call=read_call)
    return render_repo_map(outline, max_chars=max_chars, outline_call=outline_call, read_call=read_call)


INDENT = "  "
MAX_READ_SPAN = 300  # a suggested read covers at most this many lines (the read limit)


def _row(definition: Definition, depth: int) -> str:
    return f"{INDENT * depth}{definition.start_line}-{definition.end_line} {definition.kind}: {definition.signature}"


def _fit(lines: Sequence[str], max_chars: int) -> str:
    return "\n".join(lines)[:max_chars]


def render_file_outline(outline: FileOutline, *, max_chars: int, read_call: ReadCall) -> str:
    """Every definition, nested by indentation, in line order; when over budget, shallower ones first."""
    defs = outline.definitions
    head = f"OUTLINE {show_name(outline.path)}  {len(defs)} definitions"
    if not defs:
        if outline.unparsed:
            return _fit([f"OUTLINE {show_name(outline.path)}  no outline: {outline.unparsed}"], max_chars)
        language = outline.language or "unknown language"
        return _fit([f"OUTLINE {show_name(outline.path)}  no definitions found ({language})"], max_chars)
    rows = [_row(d, d.depth) for d in defs]
    order = sorted(range(len(defs)), key=lambda i: (defs[i].depth, defs[i].line))
    chosen: set[int] = set()
    used = len(head) + 1
    if used + sum(len(r) + 1 for r in rows) <= max_chars + 1:
        reserve = 0  # everything fits: no trailer
    else:  # an upper bound on the trailer's size
        widest = Definition("", "", "", 10**7, 10**7, 10**7, 0)
        reserve = len(_file_trailer(outline.path, [widest] * len(defs), read_call)) + 1
    for i in order:
        if used + len(rows[i]) + 1 + reserve <= max_chars + 1:
            chosen.add(i)
            used += len(rows[i]) + 1
    out = [head, *(rows[i] for i in sorted(chosen))]
    omitted = [defs[j] for j in sorted(set(range(len(defs))) - chosen)]
    if omitted:
        out.append(_file_trailer(outline.path, omitted, read_call))
    return _fit(out, max_chars)


def _file_trailer(path: str, omitted: Sequence[Definition], read_call: ReadCall) -> str:
    first = omitted[0]
    end = min(first.end_line, first.start_line + MAX_READ_SPAN - 1)
    return f"... ({len(omitted)} definitions omitted; e.g. {read_call(path, first.start_line, end)})"


def render_repo_map(repo_map: RepoMap, *, max_chars: int, outline_call: OutlineCall, read_call: ReadCall) -> str:
    """The best-ranked definitions grouped under their files (files in rank order, rows by line)."""
    if not repo_map.entries:
        return _fit([f"MAP {_scope(repo_map)}  no definitions found"], max_chars)
    chosen: list[MapEntry] = []
    files: dict[str, list[MapEntry]] = {}
    head_for = lambda shown: (  # noqa: E731
        f"MAP {_scope(repo_map)}  {shown} of {repo_map.names} definitions in {repo_map.files} files, "
        "most referenced first"
    )
    used = len(head_for(repo_map.names)) + 1
    entries = list(repo_map.entries)
    longest = max(entries, key=lambda e: len(e.path))
    reserve = len(_map_trailer(repo_map, 0, [longest], outline_call)) + 1
    for entry in entries:
        cost = len(_row(entry.definition, 1)) + 1 + (0 if entry.path in files else len(show_name(entry.path)) + 1)
        if used + cost + reserve <= max_chars + 1:
            used += cost
            chosen.append(entry)
            files.setdefault(entry.path, []).append(entry)
    # counted as the map counts its names, (file, name) once: a class and its companion object (or a
    # declaration and its definition) are two rows of one name, and "4 of 3 definitions" said otherwise
    shown = len({(e.path, e.definition.name) for e in chosen})
    out = [head_for(shown)]
    for path, items in files.items():
        out.append(show_name(path))  # a name holding a newline must not forge a row
        out.extend(_row(e.definition, 1) for e in sorted(items, key=lambda e: e.definition.line))
    if shown < repo_map.names:
        taken = {id(e) for e in chosen}  # not ``e not in chosen``: thousands of rows compared with each other
        left = next((e for e in entries if id(e) not in taken), None)
        out.append(_map_trailer(repo_map, shown, [left] if left is not None else [], outline_call))
    if not chosen and entries:
        first = entries[0]
        out.append(read_call(first.path, first.definition.start_line, first.definition.start_line))
    return _fit(out, max_chars)


def _scope(repo_map: RepoMap) -> str:
    return show_name(repo_map.scope) or "."


def _map_trailer(repo_map: RepoMap, shown: int, left: Sequence[MapEntry], outline_call: OutlineCall) -> str:
    more = repo_map.names - shown
    hint = f"; e.g. {outline_call(left[0].path)}" if left else ""
    return f"... ({more} more definitions{hint})"
