"""File names as every header and read hint shows them: one line, and safe to paste back.

A file name may hold anything but ``/`` and NUL: a newline would split a ``FILE`` header in two (and
let a file forge a result line), a leading ``-`` turns a pasted ``codepith read`` into an option.
"""

from __future__ import annotations

import re
import shlex

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BYTE = re.compile(r"[\udc80-\udcff]")  # an undecodable byte of a name (surrogateescape)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Every spelling ``read_name`` takes back. A name holding one of them literally (``lit\\xe9.py``) has its
# backslashes doubled, or it would be shown as another name (the one with the byte 0xE9) is.
_SPELLED = re.compile(r"\\(?:([\\nrt])|x([0-9a-f]{2})|u([0-9a-f]{4}))")
_UNNAMED = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def _escape(ch: str) -> str:
    """A control character's spelling: ``\\xNN`` below 0x80 only, since ``\\x80``-``\\xff`` spell the
    undecodable bytes (``show_bytes``); C1 controls and line separators are ``\\uNNNN``."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def _needs_escaping(name: str) -> bool:
    return bool(_CONTROL.search(name) or _BYTE.search(name) or _SPELLED.search(name))


def show_name(name: str, limit: int | None = None) -> str:
    """``name`` for a header: control characters (newline, tab, escape, C1, line separators) escaped;
    with ``limit``, a longer name cut to that many characters and "..." (an error echoing a 6 KB path).

    The spelling is one to one (``read_name`` undoes it, after ``show_bytes`` on the wire): a name that
    needs any escaping, or holds a spelling that would be undone, has its backslashes doubled too.
    Any other name is shown as it is."""
    if limit is not None and len(name) > limit:
        name = name[:limit] + "..."
    if not _needs_escaping(name):
        return name
    return _CONTROL.sub(lambda m: _escape(m.group()), name.replace("\\", "\\\\"))


EXAMPLE_CHARS = 200


def show_example(name: str, limit: int = EXAMPLE_CHARS) -> str:
    """``name`` as an example in a report (skipped files, line windows): ``show_name``, and a name longer
    than ``limit`` kept by its head and its tail around "..." (a path 250 folders deep was printed
    whole, 5,000 characters in one line, three times a reason; its file name is at the end)."""
    if len(name) <= limit:
        return show_name(name)
    half = max(1, (limit - 3) // 2)
    return show_name(name[:half]) + "..." + show_name(name[-half:])


def wire_name(name: str) -> str:
    """``name`` as a JSON value carries it (JSON escapes control characters itself): undecodable bytes
    as ``\\xNN``, and backslashes doubled when anything in it would be taken back by ``read_name``."""
    if not (_BYTE.search(name) or _SPELLED.search(name)):
        return name
    return show_bytes(name.replace("\\", "\\\\"))


def read_name(shown: str) -> str:
    """The name a shown spelling stands for (``show_name`` then ``show_bytes``, or ``wire_name``):
    ``\\\\`` a backslash, ``\\xNN`` a control character below 0x80 or else the undecodable byte NN,
    ``\\uNNNN`` and ``\\n`` ``\\r`` ``\\t`` their characters; anything else as it is."""
    return _SPELLED.sub(_unspell, shown)


def _unspell(m: re.Match[str]) -> str:
    named, byte, code = m.groups()
    if named:
        return _UNNAMED[named]
    if byte:
        value = int(byte, 16)
        return chr(0xDC00 + value) if value >= 0x80 else chr(value)
    return chr(int(code, 16))


def shell_path(path: str) -> str:
    """``path`` as one shell word for a pasteable command: a leading ``-`` gets ``./`` (never an option),
    control characters use bash's ``$'...'`` quoting (still one line), anything else ``shlex.quote``."""
    if path.startswith("-"):
        path = "./" + path
    if not _CONTROL.search(path):
        return shlex.quote(path)
    body = _CONTROL.sub(lambda m: _escape(m.group()), path.replace("\\", "\\\\").replace("'", "\\'"))
    return f"$'{body}'"


def show_bytes(text: str) -> str:
    """``text`` with the lone surrogates that stand for undecodable bytes (file names, surrogateescape)
    shown as ``\\xNN``: JSON and UTF-8 cannot carry them, and the MCP tools map that spelling back."""
    if text.isascii():
        return text
    # each surrogate spelt alone: re-encoding and decoding would join a run that happens to be valid UTF-8
    # (``\udce9\udc85\udc85``, which no file system gives, but a caller may) into one character
    return _BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)
