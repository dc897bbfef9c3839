"""One searchable corpus from one or more repositories' records: chunk list, vector matrix, BM25.

Derived entirely from the sorted file records, so it is rebuilt (cheaply) whenever a refresh changed
anything, and several repositories become one corpus by prefixing their paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.index.lexical import BM25, Vocabulary
from codepith.index.repo import RepoData


@dataclass(frozen=True)
class CorpusPart:
    data: RepoData
    prefix: str  # "" for a single repository, else "<repo-name>/"


class Corpus:
    def __init__(self, parts: Sequence[CorpusPart], dims: int) -> None:
        chunks: list[Chunk] = []
        ids: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        per_chunk: list[np.ndarray] = []
        # One repository: its own vocabulary. Several: the first's, extended, and the others' ids mapped in.
        vocab = parts[0].data.vocab if len(parts) == 1 else Vocabulary(parts[0].data.vocab.terms if parts else ())
        maps = [
            None
            if (len(parts) == 1 or i == 0)
            else np.asarray([vocab.add(t) for t in p.data.vocab.terms] or [0], np.int32)
            for i, p in enumerate(parts)
        ]
        vectors: list[np.ndarray] = []
        file_of_chunk: list[int] = []
        self.files: list[str] = []
        self.file_chars: list[int] = []
        for p_i, part in enumerate(parts):
            for rel in sorted(part.data.files):
                rec = part.data.files[rel]
                if rec.skip or not rec.chunks:
                    continue
                f_i = len(self.files)
                self.files.append(part.prefix + rel)
                self.file_chars.append(rec.chars)
                for c in rec.chunks:
                    chunks.append(replace(c, file_path=part.prefix + rel) if part.prefix else c)
                    file_of_chunk.append(f_i)
                mapping = maps[p_i]
                ids.append(rec.postings.ids if mapping is None else mapping[rec.postings.ids])
                tfs.append(rec.postings.tfs)
                per_chunk.append(rec.postings.per_chunk)
                vectors.append(rec.vectors)
        self.parts = list(parts)
        self.chunks = chunks
        self.file_of_chunk = np.asarray(file_of_chunk, dtype=np.int32)
        self.vectors = np.concatenate(vectors) if vectors else np.zeros((0, dims), dtype=np.float32)
        self.bm25 = BM25(
            np.concatenate(ids) if ids else np.zeros(0, np.int32),
            np.concatenate(tfs) if tfs else np.zeros(0, np.float32),
            np.concatenate(per_chunk) if per_chunk else np.zeros(0, np.int32),
            vocab,
        )
        self._flags: dict[str, dict[int, bool]] = {}
        self._by_file: dict[str, list[int]] = {}
        self.definitions: dict[str, list[int]] = {}  # lower-cased symbol -> chunks that define it
        for i, c in enumerate(chunks):
            self._by_file.setdefault(c.file_path, []).append(i)
            for sym in c.symbols:
                self.definitions.setdefault(sym.lower(), []).append(i)

    def flag(self, idx: int, name: str, test: Callable[[str], bool]) -> bool:
        """A per-chunk fact derived from its content, computed on first use and kept with the corpus."""
        memo = self._flags.setdefault(name, {})
        got = memo.get(idx)
        if got is None:
            got = memo[idx] = test(self.chunks[idx].content)
        return got

    def __len__(self) -> int:
        return len(self.chunks)

    def chunk_indices(self, file_path: str) -> list[int]:
        return self._by_file.get(file_path, [])

    def chunk_at(self, file_path: str, line: int) -> int | None:
        """The smallest chunk of that file whose span holds the line (None when none does)."""
        best: int | None = None
        for i in self._by_file.get(file_path, []):
            c = self.chunks[i]
            if c.start_line <= line <= c.end_line:
                if best is None or (c.end_line - c.start_line) < (
                    self.chunks[best].end_line - self.chunks[best].start_line
                ):
                    best = i
        return best
