"""What in a query points at particular lines: identifiers, traceback frames and paths weigh more than words.

An issue text is mostly prose; the lines a fix changes are named by its code: the function in a
traceback frame, an identifier in backticks, ``Flask.make_response``, ``sessions.py``. A packet
spends its budget on the lines that carry the most of this evidence, so each query token gets a
weight, and a traceback's ``File "x.py", line N`` anchors line N of that file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from codepith.index.tokens import query_terms, tokenize

WORD = 1.0  # a plain query word
IDENTIFIER = 3.0  # snake_case, camelCase, dotted.names, call(s): code the reporter quoted
QUOTED = 3.0  # words inside `backticks` or a ``` block
FRAME = 5.0  # the function of a traceback frame
PATH = 2.0  # a file or module named in the text
ANCHOR = 8.0  # added to the line a traceback frame points at
LONG_QUERY_TERMS = 12  # a query with more distinct terms than this is prose: common words weigh less

_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_][\w.<>]*))?')
_EXTENSIONS = "py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala"
_PATH = re.compile(rf"(?<![\w/.])((?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?::(\d+))?\b")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*\b"  # dotted.name
    r"|\b[a-z]+_\w+\b|\b_\w+\b"  # snake_case, _private
    r"|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b"  # camelCase, PascalCase with two humps
    r"|\b[A-Za-z_]\w*(?=\()"  # call(
)
_BACKTICKS = re.compile(r"```.*?```|`[^`\n]+`", re.S)


@dataclass(frozen=True)
class Evidence:
    """Per query token, how much a line holding it is worth; and the (path, line) a traceback names."""

    weights: Mapping[str, float]
    anchors: tuple[tuple[str, int], ...] = ()
    long: bool = False  # issue-sized: rare words across the hits weigh more than common ones
    _paths: tuple[str, ...] = field(default=(), repr=False)

    def anchored_lines(self, path: str) -> set[int]:
        """Lines of ``path`` a traceback frame points at (matched on the last two path parts)."""
        tail = "/".join(path.split("/")[-2:])
        return {line for where, line in self.anchors if where.endswith(tail) or tail.endswith(where)}


def _tokens(text: str) -> list[str]:
    return list(tokenize(text))


def gather(query: str) -> Evidence:
    """The evidence in ``query``; a short query gets plain weights (every term counts the same)."""
    weights: dict[str, float] = {t: WORD for t in query_terms(query)}

    def lift(tokens: Iterable[str], weight: float) -> None:
        for token in tokens:
            if token in weights:  # only tokens the query really searches for (stop words stay out)
                weights[token] = max(weights[token], weight)

    for quoted in _BACKTICKS.findall(query):
        lift(_tokens(quoted.strip("`")), QUOTED)
    for name in _IDENTIFIER.findall(query):
        whole = name.split(".")
        lift(_tokens(name), WORD * 1.5)
        lift((part.lower() for part in whole), IDENTIFIER)
    anchors: list[tuple[str, int]] = []
    for path, line, func in _FRAME.findall(query):
        anchors.append((path.replace("\\", "/"), int(line)))
        if func:
            lift((func.split(".")[-1].lower(),), FRAME)
    for path, line in _PATH.findall(query):
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        lift((stem.lower(),), PATH)
        if line:
            anchors.append((path, int(line)))
    return Evidence(weights, tuple(anchors), long=len(weights) > LONG_QUERY_TERMS)


def line_rarity(evidence: Evidence, texts: Iterable[str]) -> dict[str, float]:
    """For an issue-sized query, each term's weight times its rarity across the hits' lines (a word
    on every other line says little about which line matters); for a short query, the weights."""
    if not evidence.long:
        return dict(evidence.weights)
    lines = 0
    df: dict[str, int] = {}
    for text in texts:
        lines += 1
        for token in set(tokenize(text)):
            if token in evidence.weights:
                df[token] = df.get(token, 0) + 1
    return {t: w * math.log(1 + lines / (1 + df.get(t, 0))) for t, w in evidence.weights.items()}
