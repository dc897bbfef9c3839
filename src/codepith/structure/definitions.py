"""Definitions of one source file from its syntax tree: kind, name, signature, line range and nesting.

The same per-language tables the chunker uses (``chunks.syntax.SPECS``) decide what a definition is, so
a chunk's symbols, a breadcrumb and an outline always agree on what counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node, Tree

from codepith.chunks.grammars import get_parser
from codepith.chunks.syntax import FUNCTION_KINDS, SPECS, LangSpec, classify

MAX_SIGNATURE_CHARS = 160  # a longer signature is cut and ends in "..."
MAX_SIGNATURE_LINES = 4  # lines of a multi-line signature that are read before it is cut
MAX_DEPTH = 16  # definitions nested deeper are not listed (generated code, pathological inputs)
OPEN_LEVELS = 3  # plain (non-definition) nodes opened below a definition or the root, looking for more

_SPACE = re.compile(r"\s+")
_OPEN = re.compile(r"([(\[<]) ")  # "f( a" -> "f(a" after joining lines
_CLOSE = re.compile(r",? ([)\]>])")  # "a, )" -> "a)"
CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "object", "protocol", "extension", "enum"})


@dataclass(frozen=True)
class Definition:
    """One definition: ``line`` is where its signature begins (after decorators and doc comments)."""

    kind: str
    name: str
    signature: str  # the head up to its body, on one line, whitespace collapsed
    line: int  # 1-based line of the signature
    start_line: int  # 1-based, the whole node (decorators included)
    end_line: int  # 1-based, inclusive
    depth: int  # 0 = top level; a method of a class is 1
    parent: int = -1  # index of the enclosing definition in the file's list, -1 at top level


def parse(text: str, language: str) -> Tree | None:
    """A syntax tree of ``text``, or None when the language has no definition table or no grammar."""
    if language not in SPECS:
        return None
    parser = get_parser(language)
    if parser is None:
        return None
    try:
        return parser.parse(text.encode("utf-8", "replace"))
    except Exception:  # a grammar crash costs a file its structure, nothing else
        return None


def _signature_node(node: Node, spec: LangSpec) -> Node:
    """The node the signature starts at: a wrapper (decorators, ``export``) is skipped down to what it wraps."""
    seen = 0
    while node.type in spec.wrappers and seen < 8:
        inner = next((c for c in reversed(node.named_children) if classify(c, spec) is not None), None)
        if inner is None:
            break
        node, seen = inner, seen + 1
    return node


def _signature(node: Node, body_holder: Node, source: bytes) -> str:
    """The definition's head: from its first byte to the start of its body, on one line."""
    body = body_holder.child_by_field_name("body")
    if body is None and body_holder is not node:
        body = next((c for c in body_holder.named_children if c.type.endswith(("block", "body"))), None)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    raw = source[node.start_byte : end].decode("utf-8", "replace")
    lines = raw.split("\n")
    if body is None:
        lines = lines[:1]
    text = _SPACE.sub(" ", " ".join(lines[:MAX_SIGNATURE_LINES])).strip().rstrip("{").rstrip()
    text = _CLOSE.sub(r"\1", _OPEN.sub(r"\1", text))
    if len(lines) > MAX_SIGNATURE_LINES or len(text) > MAX_SIGNATURE_CHARS:
        text = text[: MAX_SIGNATURE_CHARS - 3].rstrip() + "..."
    return text


def _lines(node: Node) -> tuple[int, int]:
    start = node.start_point[0]
    end_row, end_col = node.end_point
    if end_col == 0 and end_row > start:
        end_row -= 1
    return start + 1, end_row + 1


def _make(
    node: Node,
    found: tuple[str, str, Node],
    spec: LangSpec,
    source: bytes,
    depth: int,
    parent: int,
    parent_kind: str = "",
) -> Definition:
    kind, name, holder = found
    if kind == "function" and parent_kind in CONTAINERS:
        kind = "method"
    head = _signature_node(node, spec)
    start, end = _lines(node)
    return Definition(
        kind=kind,
        name=name,
        signature=_signature(head, holder, source),
        line=head.start_point[0] + 1,
        start_line=start,
        end_line=end,
        depth=depth,
        parent=parent,
    )


def definitions(tree: Tree, language: str, source: bytes) -> tuple[Definition, ...]:
    """The file's definitions in source order (a parent before its members): top-level ones, members
    of classes and other containers, and those inside plain blocks (``if TYPE_CHECKING:``, ``#ifdef``).

    Function bodies are not walked (a closure is part of its function, and bodies hold most of a
    file's nodes), nor are expressions more than OPEN_LEVELS levels below a definition or the root.
    """
    spec = SPECS.get(language)
    if spec is None:
        return ()
    out: list[Definition] = []
    # explicit stack: (node, depth, parent index, levels of plain nodes still opened); reversed = in order
    stack: list[tuple[Node, int, int, int]] = [(c, 0, -1, OPEN_LEVELS) for c in reversed(tree.root_node.children)]
    while stack:
        node, depth, parent, free = stack.pop()
        found = classify(node, spec) if node.is_named else None
        children: list[Node] = node.children
        if found is not None:
            out.append(_make(node, found, spec, source, depth, parent, out[parent].kind if parent >= 0 else ""))
            if out[-1].kind in FUNCTION_KINDS or depth >= MAX_DEPTH:
                continue
            parent, depth, free = len(out) - 1, depth + 1, OPEN_LEVELS
            children = found[2].children
        elif free <= 0:
            continue
        else:
            free -= 1
        stack.extend((c, depth, parent, free) for c in reversed(children) if c.child_count)
    return tuple(out)


def line_starts(source: bytes) -> list[int]:
    """Byte offset where each line begins (index 0 = line 1)."""
    starts = [0]
    at = source.find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = source.find(b"\n", at + 1)
    return starts


def _path_to(tree: Tree, point: tuple[int, int]) -> list[Node]:
    """The nodes from the root down to the smallest one that holds ``point``, as a cursor walks them."""
    cursor = tree.walk()
    path = [cursor.node]
    while cursor.goto_first_child_for_point(point) is not None:
        node = cursor.node
        if node is None or node.start_point > point:  # the first child after the point: none holds it
            break
        path.append(node)
    return [n for n in path if n is not None]


def enclosing(
    tree: Tree, language: str, source: bytes, line: int, starts: list[int] | None = None
) -> tuple[Definition, ...]:
    """The definitions that begin above ``line`` (1-based) and contain it, outermost first.

    Follows the path from the root down to the node at that line, so it costs the depth of the tree, not
    its size. (Not ``node.parent`` up from there: tree-sitter finds a parent by walking down from the root,
    so climbing a 40,000-deep nest took 17 s, one climb for each level.)
    """
    spec = SPECS.get(language)
    if spec is None or line < 1:
        return ()
    row = line - 1
    starts = starts if starts is not None else line_starts(source)
    if row >= len(starts):
        return ()
    end = starts[row + 1] - 1 if row + 1 < len(starts) else len(source)
    text = source[starts[row] : end]
    column = len(text) - len(text.lstrip())
    path = _path_to(tree, (row, column))
    chain: list[tuple[Node, tuple[str, str, Node]]] = []
    child: Node | None = None  # the node below ``node`` on the path
    for node in reversed(path):
        found = classify(node, spec) if node.is_named else None
        if found is not None:
            if chain and node.type in spec.wrappers and chain[-1][0] == child:
                chain[-1] = (node, found)  # a decorated definition: the wrapper is the definition
            elif not chain or chain[-1][1][2] != found[2]:
                chain.append((node, found))
        child = node
    out: list[Definition] = []
    for node, found in reversed(chain):
        parent_kind = out[-1].kind if out else ""
        definition = _make(node, found, spec, source, len(out), len(out) - 1, parent_kind)
        if definition.start_line < line <= definition.end_line:
            out.append(definition)
    return tuple(out)
