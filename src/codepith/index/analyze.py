"""What the index keeps of one file's text: its chunks and each chunk's bag of BM25 tokens.

Depends on nothing but its arguments, so it runs the same in this process or in a worker process.
"""

from __future__ import annotations

from dataclasses import dataclass

from codepith.chunks.chunk import Chunk
from codepith.chunks.chunker import chunk_file_checked
from codepith.chunks.lines import line_chunks
from codepith.index.lexical import TermCounts
from codepith.index.tokens import token_counts, tokenize
from codepith.store.segment import SIDE_MARK

NAMES_IN_FIELD = 3  # a chunk's first defined names (a class and its first members) fill its name field


def path_tokens(rel_path: str) -> list[str]:
    """Path words every chunk of a file carries into BM25: the stem twice, the last three folders once."""
    parts = rel_path.split("/")
    stem = parts[-1].split(".", 1)[0]
    return tokenize(f"{stem} {stem} {' '.join(parts[-4:-1])}")


@dataclass(frozen=True)
class FileAnalysis:
    """One file's chunks and their term bags, plus why it fell back to line windows (None if it did not)."""

    chunks: list[Chunk]
    terms: list[TermCounts]
    fallback: str | None = None


def term_bags(rel_path: str, chunks: list[Chunk]) -> list[TermCounts]:
    extra = path_tokens(rel_path)
    terms = []
    for c in chunks:
        counts = token_counts(c.content)
        for tok in extra:
            counts[tok] = counts.get(tok, 0) + 1
        length = sum(counts.values())
        for tok in tokenize(" ".join(c.names[:NAMES_IN_FIELD])):
            key = SIDE_MARK + tok
            counts[key] = counts.get(key, 0) + 1
        terms.append(TermCounts(tuple(counts), tuple(counts.values()), length))
    return terms


def index_text(rel_path: str, text: str, language: str) -> FileAnalysis:
    chunks, fallback = chunk_file_checked(rel_path, text, language)
    return FileAnalysis(chunks, term_bags(rel_path, chunks), fallback)


def line_windows(rel_path: str, text: str, language: str, reason: str) -> FileAnalysis:
    """The last resort for a file whose chunking failed elsewhere (a worker crashed or hung on it)."""
    chunks = line_chunks(rel_path, text, language)
    return FileAnalysis(chunks, term_bags(rel_path, chunks), reason)
