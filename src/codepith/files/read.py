"""Read a chosen file as text, refusing binaries and minified bundles that would only pollute an index."""

from __future__ import annotations

import codecs
from pathlib import Path

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


def read_text(path: Path) -> tuple[str | None, str | None]:
    """(text, None) for an indexable file, else (None, reason): "binary", "unreadable", "secret" or
    "minified" (a secret is found by content, see secrets.py).

    Bytes are decoded as UTF-8 with replacement characters so one bad byte never loses a file; a UTF-8
    BOM is dropped, and UTF-16/UTF-32 files with a BOM are decoded as such instead of being taken for binaries.
    Docs are exempt from the minified check (unwrapped prose has long lines too).
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None, "unreadable"
    wide = bom_encoding(data)
    if wide in ("utf-16", "utf-32"):
        text = data.decode(wide, errors="replace")
    elif b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary"
    else:
        text = data.decode("utf-8-sig", errors="replace")
    if "\x00" in text[:BINARY_SNIFF_BYTES]:
        return None, "binary"
    if find_secret(text) is not None:
        return None, SECRET
    found = classify(str(path).replace("\\", "/"))
    if (found is None or found[1] != DOCS) and looks_minified(text):
        return None, "minified"
    return text, None
