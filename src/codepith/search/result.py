"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass

from codepith.chunks.chunk import Chunk


@dataclass(frozen=True)
class SearchResult:
    chunk: Chunk
    score: float
    lexical_rank: int | None = None  # 0-based rank in the lexical list; None when BM25 did not retrieve it
    dense_rank: int | None = None  # 0-based rank in the dense list; None when not retrieved densely
    path_match: bool = False  # query words matched the file's path

    @property
    def file_path(self) -> str:
        return self.chunk.file_path
