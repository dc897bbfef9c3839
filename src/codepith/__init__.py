"""codepith: fast, offline hybrid code search for AI coding agents.

The public names load lazily, so ``import codepith`` (and the MCP server's start-up) stays cheap until
an index is actually needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codepith._version import __version__

if TYPE_CHECKING:
    from codepith.api import Index, IndexStatus
    from codepith.chunks.chunk import Chunk
    from codepith.errors import CodepithError
    from codepith.search.result import SearchResult

__all__ = ["Chunk", "CodepithError", "Index", "IndexStatus", "SearchResult", "__version__"]

_WHERE = {
    "Index": "codepith.api",
    "IndexStatus": "codepith.api",
    "Chunk": "codepith.chunks.chunk",
    "CodepithError": "codepith.errors",
    "SearchResult": "codepith.search.result",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'codepith' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
