"""Parsed source files, kept in a small cache so a packet's few hits and an outline parse each file once.

Computed lazily from the file on disk (not stored with the index): a packet shows a handful of hits, a
parse of one file takes milliseconds, and the cache key (path, size, mtime) keeps it true to the disk.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Tree

from codepith.structure.definitions import Definition, definitions, enclosing, line_starts, parse

CACHE_FILES = 64  # parsed files kept (source and tree: a breadcrumb needs the tree)
CACHE_DEFINITIONS = 4096  # files whose definitions alone are kept: a large map lists a thousand or more files
MAX_PARSE_BYTES = 2_000_000  # bigger files get no structure (the index skips them anyway)


@dataclass
class ParsedFile:
    language: str
    source: bytes
    tree: Tree
    _defs: tuple[Definition, ...] | None = field(default=None, repr=False)
    _starts: list[int] | None = field(default=None, repr=False)

    def definitions(self) -> tuple[Definition, ...]:
        if self._defs is None:
            self._defs = definitions(self.tree, self.language, self.source)
        return self._defs

    def enclosing(self, line: int) -> tuple[Definition, ...]:
        if self._starts is None:
            self._starts = line_starts(self.source)
        return enclosing(self.tree, self.language, self.source, line, self._starts)


_cache: OrderedDict[tuple[str, str, int, int], ParsedFile | None] = OrderedDict()
_lock = threading.Lock()


def parsed_file(path: Path, language: str, expect: tuple[int, int] | None = None) -> ParsedFile | None:
    """The parse of ``path`` as ``language``, or None (no grammar, unreadable, too big, or its size and
    mtime are not ``expect``: the caller vouches only for the bytes it knows)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if expect is not None and (st.st_size, st.st_mtime_ns) != expect:
        return None
    key = (str(path), language, st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    result: ParsedFile | None = None
    if st.st_size <= MAX_PARSE_BYTES:
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        if data is not None:
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            text = data.decode("utf-8", "replace")
            tree = parse(text, language)
            if tree is not None:
                result = ParsedFile(language, text.encode("utf-8", "replace"), tree)
    with _lock:
        _cache[key] = result
        while len(_cache) > CACHE_FILES:
            _cache.popitem(last=False)
    return result


_defs_cache: OrderedDict[tuple[str, str, int, int], tuple[Definition, ...]] = OrderedDict()


def parsed_definitions(
    path: Path, language: str, expect: tuple[int, int] | None = None
) -> tuple[Definition, ...] | None:
    """``parsed_file(...).definitions()``, kept for more files than their trees are: a 100,000-character map
    of the kernel parses 1,500 files (5 s), and the next such map parsed them all again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (str(path), language, st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _defs_cache:
            _defs_cache.move_to_end(key)
            return _defs_cache[key]
    parsed = parsed_file(path, language, expect)
    if parsed is None:
        return None
    defs = parsed.definitions()
    with _lock:
        _defs_cache[key] = defs
        while len(_defs_cache) > CACHE_DEFINITIONS:
            _defs_cache.popitem(last=False)
    return defs
