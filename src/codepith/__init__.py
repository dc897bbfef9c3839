"""codepith: fast, offline hybrid code search for AI coding agents."""

from codepith._version import __version__
from codepith.api import Index, IndexStatus
from codepith.chunks.chunk import Chunk
from codepith.errors import CodepithError
from codepith.search.result import SearchResult

__all__ = ["Chunk", "CodepithError", "Index", "IndexStatus", "SearchResult", "__version__"]
