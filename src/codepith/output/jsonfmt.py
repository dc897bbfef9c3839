"""Machine-readable results: a plain dict that ``json.dumps`` takes as is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codepith.errors import text_argument, whole_number
from codepith.search.query import bound_query
from codepith.search.result import SearchResult


def _snippet(content: str, max_lines: int | None) -> str:
    if max_lines is None:
        return content
    lines = content.split("\n")
    return "\n".join(lines[:max_lines])


def result_to_dict(result: SearchResult, *, max_snippet_lines: int | None = None) -> dict[str, Any]:
    """One hit: location, rounded score and (unless ``max_snippet_lines`` is 0) its content.

    The ``content`` key is left out rather than sent empty, so a consumer can tell "no text asked for
    or none there" from a real snippet by the key alone.
    """
    chunk = result.chunk
    item: dict[str, Any] = {
        "file_path": chunk.file_path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "score": round(float(result.score), 4),
    }
    if max_snippet_lines is not None:
        max_snippet_lines = whole_number("max_snippet_lines", max_snippet_lines, 0)
    if max_snippet_lines != 0:
        text = _snippet(chunk.content, max_snippet_lines)
        if text.strip():
            item["content"] = text
    return item


def results_to_json(
    query: str,
    results: Sequence[SearchResult],
    *,
    max_snippet_lines: int | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """``{"query", "results": [...]}``, plus ``"notes"`` (a cut query, why the index is empty) if any.

    ``max_snippet_lines``: None = whole chunk, 0 = location only (no ``content`` key), N = first N lines.
    """
    if max_snippet_lines is not None:
        max_snippet_lines = whole_number("max_snippet_lines", max_snippet_lines, 0)
    query = text_argument("query", query)
    out: dict[str, Any] = {
        "query": bound_query(query)[0],  # the text searched (a very long query is cut)
        "results": [result_to_dict(r, max_snippet_lines=max_snippet_lines) for r in results],
    }
    if notes:
        out["notes"] = list(notes)
    return out
