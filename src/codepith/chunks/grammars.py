"""Tree-sitter parsers from the bundled ``semble-grammars`` wheel, loaded lazily and cached.

Loading a grammar costs ~0.3 s the first time, so each language is loaded once per process, and only
when a file of that language is chunked. Parsers are not thread-safe, so each thread keeps its own.
"""

from __future__ import annotations

import threading

from tree_sitter import Parser

_local = threading.local()
_failed: set[str] = set()


def get_parser(language: str) -> Parser | None:
    """A parser for ``language`` (a semble_grammars name), or None if no usable grammar exists."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = {}
        _local.parsers = cache
    parser = cache.get(language)
    if parser is not None or language in _failed:
        return parser
    try:
        import semble_grammars

        parser = Parser(semble_grammars.get_language(language))
    except Exception:  # unknown language, missing platform archive, broken library: fall back to lines
        _failed.add(language)
        return None
    cache[language] = parser
    return parser
