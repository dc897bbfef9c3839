"""File names as every header and read hint shows them: one line, and safe to paste back.

A file name may hold anything but ``/`` and NUL: a newline would split a ``FILE`` header in two (and
let a file forge a result line), a leading ``-`` turns a pasted ``codepith read`` into an option.
"""

from __future__ import annotations

import re
import shlex

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show_name(name: str, limit: int | None = None) -> str:
    """``name`` for a header: control characters (newline, tab, escape, C1, line separators) escaped;
    with ``limit``, a longer name cut to that many characters and "..." (an error echoing a 6 KB path)."""
    if limit is not None and len(name) > limit:
        name = name[:limit] + "..."
    return _CONTROL.sub(lambda m: _escape(m.group()), name)


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
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
