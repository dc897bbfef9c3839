"""JSON and JSONC (comments, trailing commas) read with byte spans, edited one member at a time.

Agent configs are JSON (``~/.claude.json``, Cursor, Gemini) or JSONC (OpenCode, VS Code). Re-serialising
the whole file would drop comments and reformat everything the person wrote, so this module parses the
text into values that remember where they sit, and an edit splices the text of one member: every other
character of the file stays as it was.

Rolled by hand (JSON plus ``//`` and ``/* */`` comments and trailing commas is small and fully specified):
the PyPI round-trip libraries either re-serialise a model (json-five, with spans only in private
attributes) or target JSON5; neither gives the one thing needed here, the text span of one member.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from codepith.errors import CodepithError


class JsoncError(CodepithError):
    """The text is not JSON/JSONC, or not the shape an edit needs; the message says where."""


class Member(NamedTuple):  # named tuples, not dataclasses: a large ~/.claude.json has 100k+ of them
    key: str
    key_start: int
    value: Node
    comma: int | None  # offset of the comma that follows the value, if any


class Node(NamedTuple):
    start: int
    end: int  # one past the value's last character
    value: Any
    members: tuple[Member, ...] = ()  # objects only, in file order


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_GAP = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.S)
_LITERALS = {"true": True, "false": False, "null": None}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, at: int | None = None) -> JsoncError:
        at = self.pos if at is None else at
        line = self.text.count("\n", 0, at) + 1
        col = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsoncError(f"{message} at line {line} column {col}")

    def skip(self) -> None:
        """Whitespace and comments (a byte-order mark at the very start counts as whitespace)."""
        if self.pos == 0 and self.text.startswith("\ufeff"):
            self.pos = 1
        self.pos = _GAP.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if self.text.startswith("/*", self.pos):
            raise self.fail("unterminated comment")

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        c = self.text[self.pos]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.array()
        if c == '"':
            start = self.pos
            text = self.string()
            return Node(start, self.pos, text)
        m = _NUMBER.match(self.text, self.pos)
        if m and m.end() > self.pos:
            try:
                number = json.loads(m.group())
            except ValueError:  # an integer past Python's digit limit (4300): not one a config needs
                raise self.fail(f"a number of {m.end() - m.start()} characters is too long to read") from None
            self.pos = m.end()
            return Node(m.start(), m.end(), number)
        for word, val in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return Node(self.pos - len(word), self.pos, val)
        raise self.fail(f"unexpected {c!r}")

    def string(self) -> str:
        start = self.pos
        i = start + 1
        text = self.text
        while True:
            j = text.find('"', i)
            if j < 0:
                raise self.fail("unterminated string", start)
            k = j - 1
            while k > start and text[k] == "\\":
                k -= 1
            if (j - k - 1) % 2 == 0:  # an even run of backslashes: the quote ends the string
                break
            i = j + 1
        self.pos = j + 1
        raw = text[start + 1 : j]
        if "\\" not in raw and raw.isprintable():
            return raw
        try:
            out = json.loads(text[start : j + 1])
        except ValueError:
            raise self.fail("bad string", start) from None
        assert isinstance(out, str)
        return out

    def obj(self) -> Node:
        start = self.pos
        self.pos += 1
        members: list[Member] = []
        values: dict[str, Any] = {}
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated object", start)
            if self.text[self.pos] == "}":
                self.pos += 1
                return Node(start, self.pos, values, tuple(members))
            if self.text[self.pos] != '"':
                raise self.fail("expected a quoted key")
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            node = self.value()
            self.skip()
            comma = None
            if self.text.startswith(",", self.pos):
                comma = self.pos
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
            members.append(Member(key, key_start, node, comma))
            values[key] = node.value

    def array(self) -> Node:
        start = self.pos
        self.pos += 1
        items: list[Any] = []
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail("unterminated array", start)
            if self.text[self.pos] == "]":
                self.pos += 1
                return Node(start, self.pos, items)
            items.append(self.value().value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")


def parse(text: str) -> Node:
    """The document's root value with spans; whitespace/comments only counts as an empty document (None)."""
    p = _Parser(text)
    p.skip()
    if p.pos >= len(text):
        return Node(p.pos, p.pos, None)
    root = p.value()
    p.skip()
    if p.pos < len(text):
        raise p.fail("unexpected text after the value")
    return root


def find(root: Node, path: tuple[str, ...]) -> Node | None:
    """The node at ``path`` (object keys), or None where a key is missing; the last duplicate key wins."""
    node = root
    for key in path:
        if not isinstance(node.value, dict):
            return None
        hits = [m for m in node.members if m.key == key]
        if not hits:
            return None
        node = hits[-1].value
    return node


def get(text: str, path: tuple[str, ...]) -> Any:
    node = find(parse(text), path)
    return None if node is None else node.value


# -- edits ---------------------------------------------------------------------------------------------


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str:
    """The file's indentation step, guessed from its first indented key (two spaces when it has none)."""
    m = re.search(r"\n([ \t]+)\"", text)
    if not m:
        return "  "
    ws = m.group(1)
    return "\t" if ws.startswith("\t") else ws


def _line_indent(text: str, at: int) -> str | None:
    """The whitespace before ``at`` on its line, or None when something else precedes it there."""
    line_start = text.rfind("\n", 0, at) + 1
    before = text[line_start:at]
    return before if before.strip(" \t\ufeff") == "" else None


def _dump(value: Any, indent: str | None, unit: str, nl: str) -> str:
    if indent is None:  # a one-line file stays one line
        return json.dumps(value, ensure_ascii=False)
    body = json.dumps(value, indent=unit if unit != "\t" else "\t", ensure_ascii=False)
    return body.replace("\n", nl + indent)


def _end_of_line(text: str, at: int) -> int:
    """Past the spaces and comments that follow ``at`` on the same line (not past the newline)."""
    p = _Parser(text)
    p.pos = at
    n = len(text)
    while p.pos < n:
        c = text[p.pos]
        if c in " \t":
            p.pos += 1
        elif text.startswith("//", p.pos):
            end = text.find("\n", p.pos)
            return n if end < 0 else (end - 1 if end > 0 and text[end - 1] == "\r" else end)
        elif text.startswith("/*", p.pos):
            end = text.find("*/", p.pos + 2)
            if end < 0 or "\n" in text[p.pos : end]:
                return p.pos
            p.pos = end + 2
        else:
            break
    return p.pos


def set_member(text: str, path: tuple[str, ...], value: Any) -> tuple[str, tuple[str, ...] | None]:
    """``text`` with the member at ``path`` set to ``value``; only that member's text changes.

    Missing objects on the way are created. Returns the new text and the path of the outermost object
    this created (None when all existed; ``()`` when it made the document itself), so that removal can
    take it away again.
    """
    root = parse(text)
    nl = _newline(text)
    unit = _indent_unit(text)
    if root.value is None:  # no document yet: a fresh one, after the comments the file may hold
        doc: Any = value
        for key in reversed(path):
            doc = {key: doc}
        body = _dump(doc, "", unit, nl) + nl
        if text.strip(" \t\r\n\ufeff") == "":
            return body, ()
        return text + ("" if text.endswith("\n") else nl) + body, ()
    node = root
    for depth, key in enumerate(path):
        if not isinstance(node.value, dict):
            raise JsoncError(f"'{'.'.join(path[:depth]) or 'the top level'}' is not an object")
        hits = [m for m in node.members if m.key == key]
        if hits and depth < len(path) - 1:
            node = hits[-1].value
            continue
        rest: Any = value
        for k in reversed(path[depth + 1 :]):
            rest = {k: rest}
        created = path[: depth + 1] if depth < len(path) - 1 else None
        if hits:  # the last key exists: replace its value in place
            member = hits[-1]
            indent = _line_indent(text, member.key_start)
            multiline = "\n" in text[root.start : root.end]
            new = _dump(rest, indent if multiline else None, unit, nl)
            return text[: member.value.start] + new + text[member.value.end :], created
        return _insert(text, node, key, rest, unit, nl), created
    raise AssertionError("unreachable")


def _insert(text: str, obj: Node, key: str, value: Any, unit: str, nl: str) -> str:
    multiline = "\n" in text[obj.start : obj.end] or (not obj.members and "\n" in text)
    key_text = json.dumps(key, ensure_ascii=False)
    if obj.members:
        last = obj.members[-1]
        indent = _line_indent(text, last.key_start)
        if indent is None or "\n" not in text[obj.start : obj.end]:  # members share a line: stay on it
            pos = last.comma + 1 if last.comma is not None else last.value.end
            entry = f" {key_text}: {_dump(value, None, unit, nl)}"
            if last.comma is not None:
                return text[:pos] + entry + "," + text[pos:]
            return text[:pos] + "," + entry + text[pos:]
        entry = f"{nl}{indent}{key_text}: {_dump(value, indent, unit, nl)}"
        if last.comma is not None:  # trailing-comma style: keep it
            at = _end_of_line(text, last.comma + 1)
            return text[:at] + entry + "," + text[at:]
        at = _end_of_line(text, last.value.end)
        return text[: last.value.end] + "," + text[last.value.end : at] + entry + text[at:]
    # an empty object: its closing brace goes on a line of its own at the object's indentation
    inner = text[obj.start + 1 : obj.end - 1]
    if not multiline or inner.strip():
        spacer = " " if not multiline else ""
        entry = f"{spacer}{key_text}: {_dump(value, None, unit, nl)}{spacer}"
        return text[: obj.start + 1] + entry + text[obj.start + 1 :]
    base = _line_indent(text, obj.start)
    if base is None:
        base = ""
        line_start = text.rfind("\n", 0, obj.start) + 1
        m = re.match(r"[ \t]*", text[line_start:])
        base = m.group() if m else ""
    indent = base + unit
    entry = f"{nl}{indent}{key_text}: {_dump(value, indent, unit, nl)}{nl}{base}"
    return text[: obj.start + 1] + entry + text[obj.end - 1 :]


def remove_member(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the member at ``path`` (the last duplicate); unchanged when it is absent."""
    root = parse(text)
    parent = find(root, path[:-1])
    if parent is None or not isinstance(parent.value, dict):
        return text
    hits = [i for i, m in enumerate(parent.members) if m.key == path[-1]]
    if not hits:
        return text
    i = hits[-1]
    members = parent.members
    m = members[i]
    indent = _line_indent(text, m.key_start)
    # where the member's text begins: the newline before it when it has its own line
    start = m.key_start
    if indent is not None:
        start = text.rfind("\n", 0, m.key_start)
        if start > 0 and text[start - 1] == "\r":
            start -= 1
        start = max(start, parent.start + 1)
    end = m.value.end
    if len(members) == 1:
        close = parent.end - 1
        rest = text[(m.comma + 1 if m.comma is not None else end) : close]
        if rest.strip() == "" and text[parent.start + 1 : start].strip() == "":  # nothing else: back to {}
            return text[: parent.start + 1] + text[close:]
        return text[:start] + text[m.comma + 1 if m.comma is not None else end :]
    if i == len(members) - 1:
        prev = members[i - 1]
        assert prev.comma is not None
        if indent is None:  # shares a line with the previous member: the space before it goes too
            while start > prev.comma + 1 and text[start - 1] in " \t":
                start -= 1
        tail = m.comma + 1 if m.comma is not None else end
        if m.comma is not None:  # trailing-comma style: the previous member keeps its comma
            return text[:start] + text[tail:]
        return text[: prev.comma] + text[prev.comma + 1 : start] + text[tail:]
    assert m.comma is not None
    if indent is None:  # shares a line with the previous member: take the space before it as well
        j = start
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        return text[:j] + text[m.comma + 1 :]
    return text[:start] + text[m.comma + 1 :]


def remove_root(text: str) -> str:
    """``text`` without its top-level value and the newline after it: the comments around it stay."""
    root = parse(text)
    if root.value is None:
        return text
    end = root.end
    for nl in ("\r\n", "\n"):
        if text.startswith(nl, end):
            end += len(nl)
            break
    return text[: root.start] + text[end:]


def inside_empty(text: str, path: tuple[str, ...]) -> str | None:
    """What lies between the braces of the empty object at ``path`` (whitespace, comments); None when
    there is no such object or it has members."""
    node = find(parse(text), path)
    if node is None or node.value != {}:
        return None
    return text[node.start + 1 : node.end - 1]


def refill(text: str, path: tuple[str, ...], inner: str) -> str:
    """``text`` with ``inner`` between the braces of the object at ``path``, when that object is empty
    and holds only whitespace (as a removal leaves it); otherwise unchanged."""
    node = find(parse(text), path)
    if node is None or node.value != {} or text[node.start + 1 : node.end - 1].strip():
        return text
    return text[: node.start + 1] + inner + text[node.end - 1 :]


def is_empty_object(text: str, path: tuple[str, ...]) -> bool:
    node = find(parse(text), path)
    return node is not None and node.value == {}
