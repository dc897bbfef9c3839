"""Read a chosen file as text, refusing binaries and minified bundles that would only pollute an index."""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path
from typing import NamedTuple

from .secrets import REASON as SECRET
from .secrets import find_secret
from .types import DOCS, classify

BINARY_SNIFF_BYTES = 8192
# A file this long whose lines average this many characters is a bundle or generated blob, not source.
MINIFIED_MIN_CHARS = 4096
MINIFIED_AVG_LINE = 300


def looks_minified(text: str) -> bool:
    """Very long average lines over a sizeable file: what minifiers and bundlers emit."""
    if len(text) < MINIFIED_MIN_CHARS:
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > MINIFIED_AVG_LINE


def bom_encoding(head: bytes) -> str | None:
    """The codec a byte-order mark names ("utf-32", "utf-16", "utf-8-sig"), or None without one.

    UTF-32 is tested first: its little-endian mark begins with UTF-16's.
    """
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    return None


class Source(NamedTuple):
    """What ``read_source`` found: ``text`` (None when not indexable) and ``reason`` as ``read_text``'s;
    ``moved``: the path did not lead to the regular file inside ``within`` that a walk listed when it
    was opened (gone, a folder, a FIFO, a link out of the root, a loop): the tree changed meanwhile, so
    "unreadable" is a passing state that the next look must judge again, not a fact about the file."""

    text: str | None
    reason: str | None
    moved: bool = False


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
_MOVED_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOENT", "ENOTDIR", "EISDIR", "ELOOP", "ENXIO") if hasattr(errno, name)
)


def _opened_path(fd: int, path: Path) -> str:
    """The real path of the file ``fd`` holds: /proc names the opened file itself (no race with a rename
    or a link swapped in after the open); elsewhere, the path's realpath now."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def _read_bytes(path: Path, within: str | None, limit: int | None) -> bytes | Source:
    """The file's bytes, or why not. Opened without blocking (a FIFO swapped in after the walk listed a
    file would block a plain open forever) and read only when it is a regular file inside ``within``;
    at most ``limit`` bytes (a file that grew past the size limit since it was listed is not read whole)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return Source(None, "unreadable", exc.errno in _MOVED_ERRNOS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Source(None, "unreadable", True)
        if within is not None:
            real, top = _opened_path(fd, path), within.rstrip(os.sep) + os.sep
            if real != within and not real.startswith(top):
                return Source(None, "unreadable", True)  # a link out of the root swapped in since the walk
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
        if limit is not None and len(data) > limit:
            return Source(None, "too-large", True)
        return data
    except OSError as exc:
        return Source(None, "unreadable", exc.errno in _MOVED_ERRNOS)
    finally:
        os.close(fd)


def read_text(path: Path) -> tuple[str | None, str | None]:
    """(text, None) for an indexable file, else (None, reason): "binary", "unreadable", "secret" or
    "minified" (a secret is found by content, see secrets.py).

    Bytes are decoded as UTF-8 with replacement characters so one bad byte never loses a file; a UTF-8
    BOM is dropped, and UTF-16/UTF-32 files with a BOM are decoded as such instead of being taken for binaries.
    Docs are exempt from the minified check (unwrapped prose has long lines too).
    """
    text, reason, _ = read_source(path)
    return text, reason


def read_source(path: Path, within: str | None = None, limit: int | None = None) -> Source:
    """``read_text``, saying too whether an unreadable path had changed since it was listed (``Source``).
    ``within``: the real path of the root the file was listed under; a file opened outside it is not read.
    ``limit``: the size limit the listing applied; a file past it now is "too-large" (and ``moved``)."""
    data = _read_bytes(path, within, limit)
    if isinstance(data, Source):
        return data
    wide = bom_encoding(data)
    if wide in ("utf-16", "utf-32"):
        text = data.decode(wide, errors="replace")
    elif b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return Source(None, "binary")
    else:
        text = data.decode("utf-8-sig", errors="replace")
    if "\x00" in text[:BINARY_SNIFF_BYTES]:
        return Source(None, "binary")
    if find_secret(text) is not None:
        return Source(None, SECRET)
    found = classify(str(path).replace("\\", "/"))
    if (found is None or found[1] != DOCS) and looks_minified(text):
        return Source(None, "minified")
    return Source(text, None)
