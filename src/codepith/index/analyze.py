"""What the index keeps of one file's text: its chunks and each chunk's bag of BM25 tokens.

Depends on nothing but its arguments, so it runs the same in this process or in a worker process.
"""

from __future__ import annotations

from codepith.chunks.chunk import Chunk
from codepith.chunks.chunker import chunk_file
from codepith.index.lexical import TermCounts
from codepith.index.tokens import token_counts, tokenize


def path_tokens(rel_path: str) -> list[str]:
    """Path words every chunk of a file carries into BM25: the stem twice, the last three folders once."""
    parts = rel_path.split("/")
    stem = parts[-1].split(".", 1)[0]
    return tokenize(f"{stem} {stem} {' '.join(parts[-4:-1])}")


def index_text(rel_path: str, text: str, language: str) -> tuple[list[Chunk], list[TermCounts]]:
    chunks = chunk_file(rel_path, text, language)
    extra = path_tokens(rel_path)
    terms = []
    for c in chunks:
        counts = token_counts(c.content)
        for tok in extra:
            counts[tok] = counts.get(tok, 0) + 1
        terms.append(TermCounts(tuple(counts), tuple(counts.values())))
    return chunks, terms
