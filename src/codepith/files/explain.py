"""Say why a walk found (nearly) nothing: name the ignore file, the line and the rule, and how to override.

An empty index that only says "0 files" or "no results" sends a person (or an agent) hunting; Debian's
kernel tree, whose top ``.gitignore`` holds ``/*``, is the classic case. These lines are written once,
here, and every surface (``index``, ``search``, the MCP tools) shows them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ignore import CODEPITHIGNORE
from .source import IgnoreHit, SkipReport

MAX_RULES = 3  # rules named in one explanation


def _examples(items: Sequence[str]) -> str:
    return f" (e.g. {', '.join(items)})" if items else ""


def _override(hit: IgnoreHit) -> str:
    if hit.source.endswith(CODEPITHIGNORE):
        return f"to index them, remove or change line {hit.line} of {hit.source}"
    rule = hit.rule.strip()
    return (
        f"to index them anyway, add the line '!{rule}' to {hit.base}{CODEPITHIGNORE} "
        f"(its '!' lines override {hit.source.rpartition('/')[2]})"
    )


def explain_hidden(hidden: Sequence[IgnoreHit], files: int) -> list[str]:
    """Lines naming the ignore rules, when they hid everything or more entries than were indexed.

    Empty when ignore rules are not the story (a normal ``.gitignore`` hides a few build folders).
    A hidden folder counts once, however many files it holds.
    """
    total = sum(h.count for h in hidden)
    if not hidden or (files and total <= files):
        return []
    if files:
        head = f"ignore rules hid {total} files and folders, more than the {files} files indexed:"
    else:
        head = f"ignore rules hid everything ({total} files and folders):"
    lines = [head]
    for hit in hidden[:MAX_RULES]:
        lines.append(f"  {hit.source} line {hit.line} '{hit.rule.strip()}' hid {hit.count}{_examples(hit.examples)}")
        lines.append(f"    {_override(hit)}")
    return lines


def explain_empty(files: int, skipped: SkipReport, hidden: Sequence[IgnoreHit], content: str) -> list[str]:
    """Why nothing was indexed (empty when something was): ignore rules first, else the skip reasons."""
    if files:
        return []
    if hidden:
        return explain_hidden(hidden, 0)
    if not skipped.total:
        return ["no files were found"]
    counts = sorted(skipped.counts.items(), key=lambda kv: -kv[1])
    lines = [f"all {skipped.total} files and folders found were skipped:"]
    for why, n in counts[:5]:
        lines.append(f"  {why}: {n}{_examples(skipped.examples.get(why, []))}")
    if "unsupported-type" in skipped.counts and content != "all":
        lines.append(f"  only '{content}' files are indexed; --content all (or content='all') takes every kind")
    return lines
