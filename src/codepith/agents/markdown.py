"""A managed block in a markdown file (AGENTS.md, CLAUDE.md): written, replaced and removed between two
HTML-comment markers, so the rest of the file (the person's own instructions) is never touched."""

from __future__ import annotations

from codepith.errors import CodepithError

BEGIN = "<!-- codepith:begin (managed by `codepith install`; `codepith uninstall` removes it) -->"
END = "<!-- codepith:end -->"
_BEGIN_PREFIX = "<!-- codepith:begin"


class BlockError(CodepithError):
    """The markers are unbalanced: which text is codepith's cannot be told."""


def wrap(body: str) -> str:
    return f"{BEGIN}\n{body.strip()}\n{END}"


def _span(text: str) -> tuple[int, int] | None:
    start = text.find(_BEGIN_PREFIX)
    end = text.find(END)
    if start < 0 and end < 0:
        return None
    if start < 0 or end < start or text.find(_BEGIN_PREFIX, start + 1) >= 0 or text.find(END, end + 1) >= 0:
        raise BlockError("codepith's markers are unbalanced or repeated; fix or remove them by hand")
    return start, end + len(END)


def current(text: str) -> str | None:
    """The managed block as it stands in ``text`` (markers included), or None."""
    span = _span(text)
    return None if span is None else text[span[0] : span[1]]


def set_block(text: str, block: str) -> str:
    """``text`` with the managed block replaced, or appended after a blank line when absent."""
    nl = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", nl)
    span = _span(text)
    if span is not None:
        return text[: span[0]] + block + text[span[1] :]
    if text.strip() == "":
        return block + nl
    sep = nl if text.endswith("\n") else nl + nl
    return text + sep + block + nl


def remove_block(text: str) -> str:
    """``text`` without the managed block and the blank line that ``set_block`` put before it."""
    span = _span(text)
    if span is None:
        return text
    nl = "\r\n" if "\r\n" in text else "\n"
    before, after = text[: span[0]], text[span[1] :]
    if after.startswith(nl):
        after = after[len(nl) :]
    if after == "" and before.endswith(nl + nl):
        before = before[: -len(nl)]
    return before + after
