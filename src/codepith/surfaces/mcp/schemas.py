"""What the server advertises: its instructions, the tool list and the limits the schemas state."""

from __future__ import annotations

from typing import Any

from codepith.runner.runners import RUNNERS

MAX_READ_LINES = 300
MAX_TOP_K = 50
MAX_MAX_CHARS = 100_000
MAX_TIMEOUT_S = 3600
DEFAULT_READ_CHARS = 20_000  # output/read.py's DEFAULT_MAX_CHARS (not imported: the front must start fast)
MIN_READ_CHARS = 1_000

INSTRUCTIONS = (
    "Hybrid (BM25 + embedding) code search over local repositories. Call search first; "
    "follow the read_snippet(...) calls in the results to see more lines."
)

CONTENT = {"type": "string", "enum": ["code", "docs", "config", "all"], "default": "code"}
REPO = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    "description": "Folder, folder list (one corpus) or https git URL (optional @ref). Default: server's.",
}
REF = {"type": "string", "description": "Branch, tag or commit for a git URL."}
REPO_SHORT = {"description": "As in search."}  # the type is stated once, in search; args.py checks it
REF_SHORT = {"type": "string"}


def integer(description: str, minimum: int, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, "description": description}
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
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": props,
            **({"required": required} if required else {}),
        },  # no additionalProperties: args.py refuses unknown arguments in one line, for fewer listed bytes
        "annotations": {"readOnlyHint": read_only, "openWorldHint": open_world}
        if read_only
        else {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": open_world},
    }


TOOLS: list[dict[str, Any]] = [
    tool(
        "search",
        "Find code by meaning or identifiers. Returns the best matching lines, numbered, with read_snippet "
        "calls for the rest. Reflects files saved since the last call.",
        {
            "query": {"type": "string", "description": "Natural language or code terms."},
            "repo": REPO,
            "ref": REF,
            "top_k": integer("Results.", 1, 5),
            "content": CONTENT,
            "max_chars": integer("Reply budget in characters.", 200, 6000),
        },
        ["query"],
        True,
    ),
    tool(
        "find_related",
        "Code similar to the chunk at file_path:line (a result path).",
        {
            "file_path": {"type": "string"},
            "line": integer("1-based line.", 1),
            "repo": REPO_SHORT,
            "ref": REF_SHORT,
            "top_k": integer("Results.", 1, 5),
        },
        ["file_path", "line"],
        False,
    ),
    tool(
        "read_snippet",
        f"Numbered lines start_line..end_line of a file in the repo (at most {MAX_READ_LINES}, within max_chars).",
        {
            "path": {"type": "string", "description": "Path as shown in results."},
            "start_line": integer("1-based.", 1),
            "end_line": integer("Inclusive.", 1),
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
        "index_status",
        "Indexed files, chunks, languages, skipped files with reasons, last refresh, model.",
        {"repo": REPO_SHORT, "ref": REF_SHORT, "content": CONTENT},
        [],
        True,
    ),
]
SCHEMAS: dict[str, dict[str, Any]] = {t["name"]: t["inputSchema"] for t in TOOLS}
