"""What the server advertises: its instructions, the tool list and the limits the schemas state."""

from __future__ import annotations

from typing import Any

from codepith.limits import MAX_MAX_CHARS, MAX_TOP_K, MIN_MAX_CHARS  # noqa: F401 - re-exported
from codepith.runner.runners import RUNNERS

MAX_READ_LINES = 300
MAX_TIMEOUT_S = 3600
DEFAULT_READ_CHARS = 20_000  # output/read.py's DEFAULT_MAX_CHARS (not imported: the front must start fast)
MIN_READ_CHARS = 1_000

INSTRUCTIONS = (
    "Hybrid (BM25 + embedding) code search over local repositories. Call search first; "
    "follow the read_snippet(...) calls in the results to see more lines."
)

CONTENT = {"enum": ["code", "docs", "config", "all"]}  # default: the server's --content
REPO = {
    "type": ["string", "array"],
    "description": "Folder, folder list or https git URL[@ref]; default: server's.",
}
REF = {"type": "string"}
REPO_SHORT = {"type": ["string", "array"]}
REF_SHORT = {"type": "string"}
FORMAT = {"enum": ["packet", "json"]}
SNIPPET = {
    "type": ["integer", "null"],
    "minimum": 0,
    "description": "json: 10, null=all, 0=none",
}


def integer(description: str, minimum: int, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if description:
        schema["description"] = description
    if default is not None:
        schema["default"] = default
    return schema


def tool(
    name: str,
    description: str,
    props: dict[str, Any],
    required: list[str],
    open_world: bool,
    read_only: bool = True,
) -> dict[str, Any]:
    """A tool entry, kept terse: every character of tools/list is paid by every agent session.

    Unknown arguments are refused by ``args.check_args`` rather than by ``additionalProperties``.
    """
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return {
        "name": name,
        "description": description,
        "inputSchema": schema,
        "annotations": {"readOnlyHint": read_only, "openWorldHint": open_world}
        if read_only
        else {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": open_world},
    }


TOOLS: list[dict[str, Any]] = [
    tool(
        "search",
        "Find code by meaning or names: numbered lines, read_snippet calls for more.",
        {
            "query": {"type": "string"},
            "repo": REPO,
            "ref": REF,
            "top_k": integer("", 1, 5),
            "content": CONTENT,
            "max_chars": integer("", MIN_MAX_CHARS, 6000),
            "format": FORMAT,
            "max_snippet_lines": SNIPPET,
        },
        ["query"],
        True,
    ),
    tool(
        "find_related",
        "Code similar to the chunk at file_path:line.",
        {
            "file_path": {"type": "string"},
            "line": integer("", 1),
            "repo": REPO_SHORT,
            "ref": REF_SHORT,
            "top_k": integer("", 1, 5),
            "format": FORMAT,
            "max_snippet_lines": {"type": ["integer", "null"], "minimum": 0},
        },
        ["file_path", "line"],
        False,
    ),
    tool(
        "read_snippet",
        f"Numbered lines of a file (at most {MAX_READ_LINES}, within max_chars).",
        {
            "path": {"type": "string"},
            "start_line": integer("", 1),
            "end_line": integer("", 1),
            "max_chars": {"type": "integer", "minimum": MIN_READ_CHARS, "default": DEFAULT_READ_CHARS},
            "repo": REPO_SHORT,
            "ref": REF_SHORT,
        },
        ["path", "start_line", "end_line"],
        False,
    ),
    tool(  # runs the repository's own code: not read-only, may write or delete (destructive), may fetch
        "run_tests",
        "Run the repo's tests (runner detected if omitted): counts, each failure's message and file:line.",
        {
            "runner": {"type": "string", "enum": list(RUNNERS)},
            "select": {"type": "string", "description": "Node id/-k expr, go -run, cargo filter, npm test file."},
            "timeout_s": {"type": "integer", "minimum": 1, "default": 300},
            "max_chars": {"type": "integer", "minimum": 200, "default": 6000},
            "repo": {"type": "string"},
        },
        [],
        True,
        read_only=False,
    ),
    tool(
        "outline",
        "A file's definitions, or a folder's ('.' = repo) most referenced ones.",
        {
            "path": {"type": "string"},
            "max_chars": integer("", MIN_MAX_CHARS, 4000),
            "focus": {"type": "string"},
            "repo": REPO_SHORT,
            "ref": REF_SHORT,
        },
        ["path"],
        False,
    ),
    tool(
        "index_status",
        "Files, languages, skipped files, model.",
        {"repo": REPO_SHORT, "ref": REF_SHORT, "content": CONTENT},
        [],
        True,
    ),
]
SCHEMAS: dict[str, dict[str, Any]] = {t["name"]: t["inputSchema"] for t in TOOLS}
