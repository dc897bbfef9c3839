"""What codepith tells agents: the instruction block for AGENTS.md / CLAUDE.md and the search sub-agent.

The block is read at the start of every session, so every character is paid for again and again: it
stays under 800 characters (markers included; ``block_cost()`` measures it, the tests hold the limit).
It says when codepith beats grep and when it does not, how to follow the ``read_snippet`` calls in
results, and to run ``run_tests`` after edits: the three habits that make agents use the tool instead of
grepping anyway.
"""

from __future__ import annotations

from codepith.agents.markdown import wrap

SUBAGENT_NAME = "codepith-search"
MANAGED = "<!-- managed by `codepith install`; `codepith uninstall` removes this file -->"
BLOCK_LIMIT = 800
CHARS_PER_TOKEN = 4  # the estimate codepith's savings log uses

INSTRUCTIONS = """\
## Code search: codepith (MCP)
- Looking for code you have not seen, or asking in words ("where are retries handled?"): call \
`search` before grep; `find_related` from a hit, `outline` for a file's map.
- Use grep for an exact string you already know, or to list every occurrence.
- Results end in `read_snippet(path, start, end)` calls: run those to see more lines instead of \
reading whole files.
- After an edit, call `run_tests` before you say it works."""

_ROLE = """\
You find code for the agent that called you. Use the codepith MCP tools first:
1. `search` with the question in words or a symbol name (try two or three phrasings if the first misses).
2. `read_snippet` on the most promising hits (the results end in ready-made calls), `outline` for a
   file's structure, `find_related` to see code like a hit.
3. grep/glob only for exact strings you already know.
Never edit files. Answer with the locations that matter as `path:start-end`, one line each on why,
plus the few lines of code that settle the question; say plainly if you found nothing."""

SUBAGENT_DESCRIPTION = (
    "Finds where something is implemented in the codebase with codepith's hybrid code search. "
    "Use it for questions like 'where is X handled?' before grepping."
)


def instruction_block() -> str:
    """The managed block, markers included, as written into AGENTS.md / CLAUDE.md."""
    return wrap(INSTRUCTIONS)


def block_cost() -> tuple[int, int]:
    """(characters, estimated tokens) the instruction block adds to every session."""
    n = len(instruction_block())
    return n, -(-n // CHARS_PER_TOKEN)


def claude_subagent() -> str:
    """A Claude Code sub-agent (``~/.claude/agents/NAME.md``: YAML front matter name/description/tools,
    body = system prompt; docs: code.claude.com sub-agents). MCP tools are named ``mcp__SERVER__TOOL``."""
    tools = ", ".join(
        [f"mcp__codepith__{t}" for t in ("search", "read_snippet", "find_related", "outline", "index_status")]
        + ["Read", "Grep", "Glob"]
    )
    head = f"---\nname: {SUBAGENT_NAME}\ndescription: {SUBAGENT_DESCRIPTION}\ntools: {tools}\n---\n"
    return f"{head}{MANAGED}\n\n{_ROLE}\n"


def opencode_subagent() -> str:
    """An OpenCode agent file (``~/.config/opencode/agents/NAME.md``: front matter description and
    ``mode: subagent``, body = system prompt; docs: opencode.ai/docs/agents)."""
    return f"---\ndescription: {SUBAGENT_DESCRIPTION}\nmode: subagent\n---\n{MANAGED}\n\n{_ROLE}\n"
