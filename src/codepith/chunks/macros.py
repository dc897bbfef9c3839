"""Macros a C-family grammar cannot read, blanked before a second parse.

tree-sitter parses C and C++ without the preprocessor, so a library's own keyword-like macros derail it:
``FMT_BEGIN_NAMESPACE`` on a line of its own makes ``namespace detail { ... }`` a function named
"namespace" that holds the rest of the file; ``FMT_CONSTEXPR typed_node(...)`` or ``class JSON_API value``
breaks the declaration it qualifies. Such a macro is an upper-case word with an underscore that stands
alone on a line after a statement, or stands before another word. Blanked with spaces (so every byte
and line keeps its place), the file parses as the code it expands to; the chunker keeps whichever parse
has fewer broken bytes, so a file the masking makes worse keeps its first parse.
"""

from __future__ import annotations

import re

from tree_sitter import Node

MASKED_LANGUAGES = frozenset({"c", "cpp", "objc", "cuda"})

_WORD = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]"  # FMT_API, QT_BEGIN_NAMESPACE, JSON_HEDLEY_CONST
# alone on its line (an empty argument list and a trailing line comment allowed)
_LONE = re.compile(rb"(?m)^[ \t]*(" + _WORD + rb")[ \t]*(?:\([ \t]*\))?[ \t]*(?://[^\n]*)?\r?$")
# before another word on its line, not a member (a.B, a->B, ns::B) nor a preprocessor name (#define B x)
_LEADING = re.compile(rb"\b(" + _WORD + rb")(?=[ \t]+[A-Za-z_~])")  # \b, not a look-behind: twice as fast
_MEMBER_OR_DIRECTIVE = frozenset(b":.>#")  # the byte before such a word (a template's `>` is let through)
# What may stand before a qualifier macro on its line: nothing, a declaration's specifiers, a class key,
# a template head, or another such macro. After `typedef`, `sizeof`, `(` or `,` an upper-case word is a type.
_QUALIFIES = re.compile(
    rb"(?:^|(?:\b(?:class|struct|union|inline|static|extern|virtual|constexpr|explicit|friend|export)|[^-]>|"
    + _WORD
    + rb")[ \t]*)$"
)
# the word after it declares a variable of that type (`YYSIZE_T len;`, `LARGE_INTEGER t = ...`)
_DECLARES = re.compile(rb"[ \t]+[A-Za-z_]\w*[ \t]*[;=,\[)]")
# what the line before a lone macro ends with when the macro stands between statements, not in one
_STATEMENT_END = (b";", b"}", b"{", b"*/", b":", b")")


def _line_of(src: bytes, at: int) -> tuple[bytes, bytes]:
    """The text of the line ``at`` is on before ``at``, and the line above it."""
    start = src.rfind(b"\n", 0, at) + 1
    above = src.rfind(b"\n", 0, max(0, start - 1)) + 1
    return src[start:at], src[above : max(above, start - 1)]


def _after_statement(src: bytes, at: int) -> bool:
    """Whether the last non-blank line before ``at`` ends a statement, a comment or a directive (the
    whole of a directive continued over several lines), so a macro alone at ``at`` is not inside one."""
    head = src[:at].rstrip()
    start = head.rfind(b"\n") + 1
    prev = head[start:].strip()
    while start > 0 and head[: start - 1].rstrip(b"\r").endswith(b"\\"):  # a continued directive's line
        start = head.rfind(b"\n", 0, start - 1) + 1
        prev = head[start:].strip()
    return not prev or prev.endswith(_STATEMENT_END) or prev.startswith((b"#", b"//", b"/*", b"*"))


def _in_comment_or_string(before: bytes) -> bool:
    """Whether a word after ``before`` on its line is in a comment or a string, as far as that line
    tells (a comment's own lines start with ``*`` by custom): blanking it there would only cost a parse."""
    return before.lstrip().startswith(b"*") or b"/*" in before or b"//" in before or before.count(b'"') % 2 == 1


def _in_directive(before: bytes, above: bytes) -> bool:
    return before.lstrip().startswith(b"#") or above.rstrip().endswith(b"\\")


def mask_macros(src: bytes) -> bytes:
    """``src`` with its keyword-like macros blanked; ``src`` itself when there is none."""
    spans: list[tuple[int, int]] = []
    for m in _LONE.finditer(src):
        _, above = _line_of(src, m.start(1))
        if not above.rstrip().endswith(b"\\") and _after_statement(src, m.start()):  # not a directive's line
            spans.append((m.start(1), m.end(1)))
    for m in _LEADING.finditer(src):
        if m.start() and src[m.start() - 1] in _MEMBER_OR_DIRECTIVE:
            continue
        before, above = _line_of(src, m.start(1))
        if _in_directive(before, above) or _in_comment_or_string(before):
            continue
        if not _QUALIFIES.search(before.lstrip()) or _DECLARES.match(src, m.end(1)):
            continue
        spans.append((m.start(1), m.end(1)))
    if not spans:
        return src
    out = bytearray(src)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    return bytes(out)


def error_bytes(root: Node) -> int:
    """How much of a parse is broken: the bytes under ERROR nodes, and one for each missing token."""
    broken = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            broken += node.end_byte - node.start_byte
        elif node.is_missing:
            broken += 1
        elif node.has_error:
            stack.extend(node.children)
    return broken
