"""One searchable corpus from one or more repositories' committed index generations.

Reads go through store Views (memory-mapped segments), so opening a corpus costs a few small arrays
(per-chunk file and length), not the chunks: chunk text is decompressed only for the chunks a search
shows or re-ranks. Several repositories become one corpus by prefixing their paths; chunk numbers run
over the repositories in order, each in path order, as a rebuild from scratch would number them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from typing import TypeVar, cast, overload

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.index.lexical import K1, B
from codepith.store.segment import SIDE_MARK, term_key
from codepith.store.view import View

T = TypeVar("T")


@dataclass(frozen=True)
class CorpusPart:
    view: View
    prefix: str  # "" for a single repository, else "<repo-name>/"


class Chunks(Sequence[Chunk]):
    """The corpus's chunks by number, read on demand."""

    def __init__(self, corpus: Corpus) -> None:
        self._c = corpus

    def __len__(self) -> int:
        return self._c.n

    @overload
    def __getitem__(self, i: int) -> Chunk: ...
    @overload
    def __getitem__(self, i: slice) -> list[Chunk]: ...
    def __getitem__(self, i: int | slice) -> Chunk | list[Chunk]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._c.n))]
        if i < 0:
            i += self._c.n
        if not 0 <= i < self._c.n:
            raise IndexError(i)
        return self._c.chunk(i)

    def __iter__(self) -> Iterator[Chunk]:
        for _p, part in enumerate(self._c.parts):
            for f in range(len(part.view.files)):
                for c in part.view.file_chunks(f):
                    yield replace(c, file_path=part.prefix + c.file_path) if part.prefix else c


class SegmentBM25:
    """Okapi BM25 (k1 and b from ``index/lexical.py``) over the segments' postings: document frequencies
    and the average length count only the live chunks of the generation."""

    def __init__(self, corpus: Corpus) -> None:
        self._c = corpus
        self.n_docs = corpus.n
        lengths = np.concatenate([p.view.lengths() for p in corpus.parts]) if corpus.parts else np.zeros(0, np.float32)
        live = corpus.logical(lengths)
        avg = float(live.mean()) if self.n_docs else 1.0
        self._norm = (K1 * (1.0 - B + B * lengths / max(avg, 1e-9))).astype(np.float32)

    def _hits(self, term: str) -> tuple[int, np.ndarray, np.ndarray]:
        return self._hits_many([term])[0]

    def _hits_many(self, terms: Sequence[str]) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Each term's live document frequency and postings: the physical chunk numbers (ascending: the
        segments in order, each one's postings sorted) and counts of every segment, joined. Scoring the
        kernel's 62 segments' pieces one by one was a numpy call per term and segment, ~10 ms a search."""
        keys = np.fromiter((term_key(t) for t in terms), dtype=np.uint64, count=len(terms))
        found: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in terms]
        for part, base in zip(self._c.parts, self._c.phys_base, strict=False):
            for i, got in enumerate(part.view.postings(keys)):
                found[i].extend((docs.astype(np.int64) + (base + b), tfs) for b, docs, tfs in got)
        out: list[tuple[int, np.ndarray, np.ndarray]] = []
        for hits in found:
            if not hits:
                out.append((0, _NO_IDS, _NO_COUNTS))
                continue
            idx = hits[0][0] if len(hits) == 1 else np.concatenate([h[0] for h in hits])
            tfs = hits[0][1] if len(hits) == 1 else np.concatenate([h[1] for h in hits])
            df = len(idx) if self._c.identity else int(np.count_nonzero(self._c.logical_of[idx] >= 0))
            out.append((df, idx, tfs))
        return out

    def doc_freq(self, term: str) -> int:
        return self._hits(term)[0]

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The live chunks that hold ``term`` (corpus numbers, ascending) and its counts in each (issue
        evidence intersects these)."""
        _, idx, tfs = self._hits(term)
        tfs = tfs.astype(np.float32)
        if not self._c.identity:
            idx = self._c.logical_of[idx]
            keep = idx >= 0
            idx, tfs = idx[keep], tfs[keep]
        order = np.argsort(idx, kind="stable")
        return idx[order], tfs[order]

    def idf(self, term: str, df: int | None = None) -> float:
        if df is None:
            df = self.doc_freq(term)
        return float(np.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5)))

    def scores(
        self,
        terms: Sequence[str],
        weights: Sequence[float] | None = None,
        *,
        side: float = 0.0,
        sides: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Dense score vector over all chunks (zeros where no term occurs).

        ``side`` > 0 scores as BM25F with the side field (terms marked ``SIDE_MARK``: the words of a
        chunk's defined names) at that weight: a chunk's count of a term is its body count plus ``side``
        times its name count, saturated together, so a name that repeats a word of the body adds less
        than a name alone. ``sides`` gives each term its own weight instead. A term whose weight is 0 never
        reads the field, and scores exactly as if the field did not exist."""
        out = np.zeros(self._c.n_physical, dtype=np.float32)
        per = list(sides) if sides is not None else [side] * len(terms)
        any_side = any(v > 0 for v in per)
        looked = self._hits_many([*terms, *(SIDE_MARK + t for t in terms)] if any_side else terms)
        for i, term in enumerate(terms):
            df, idx, tfs = looked[i]
            named = looked[len(terms) + i] if per[i] > 0 else (0, _NO_IDS, _NO_COUNTS)
            if not df and not named[0]:
                continue
            w = self.idf(term, df or named[0]) * (1.0 if weights is None else weights[i])
            if len(idx):
                tf = tfs.astype(np.float32)
                out[idx] += w * tf * (K1 + 1.0) / (tf + self._norm[idx])
            if named[0]:
                self._add_side(out, w, idx, tfs, named[1], named[2], per[i])
        return self._c.logical(out)

    def _add_side(
        self,
        out: np.ndarray,
        w: float,
        b_idx: np.ndarray,
        b_tf: np.ndarray,
        idx: np.ndarray,
        tfs: np.ndarray,
        side: float,
    ) -> None:
        """Raise each named chunk's term score from its body count to body + side x name count; a named
        chunk's body count is found by binary search in the term's body postings. (A few small arrays per
        term: kept to a handful of numpy calls, whose overhead is most of the cost.)"""
        if len(b_idx) > 1 and not (b_idx[1:] > b_idx[:-1]).all():  # segments out of chunk order
            order = b_idx.argsort(kind="stable")
            b_idx, b_tf = b_idx[order], b_tf[order]
        if len(b_idx):
            pos = b_idx.searchsorted(idx)
            pos[pos >= len(b_idx)] = len(b_idx) - 1
            base = np.where(b_idx[pos] == idx, b_tf[pos], 0).astype(np.float32)
        else:
            base = np.zeros(len(idx), dtype=np.float32)
        norm = self._norm[idx]
        both = base + np.float32(side) * tfs
        out[idx] += w * (K1 + 1.0) * (both / (both + norm) - base / (base + norm))


_NO_IDS = np.zeros(0, np.int64)
_NO_COUNTS = np.zeros(0, np.uint16)
MAX_RUNS = 256  # a logical order of more runs of the physical one is gathered by ``perm`` instead


def _runs(perm: np.ndarray) -> list[tuple[int, int]] | None:
    """(physical start, length) of each run of consecutive physical numbers in ``perm``, or None past
    ``MAX_RUNS`` of them."""
    breaks = np.flatnonzero(np.diff(perm) != 1) + 1
    if len(breaks) >= MAX_RUNS:
        return None
    starts = [0, *breaks.tolist()]
    ends = [*breaks.tolist(), len(perm)]
    return [(int(perm[a]), b - a) for a, b in zip(starts, ends, strict=True)] if len(perm) else []


class Definitions:
    """Lower-cased symbol -> numbers of the chunks that define it, ascending."""

    def __init__(self, corpus: Corpus) -> None:
        self._c = corpus
        self._memo: dict[str, list[int]] = {}

    def get(self, name_lower: str, default: list[int] | None = None) -> list[int]:
        got = self._memo.get(name_lower)
        if got is None:
            phys = [
                base + i
                for part, base in zip(self._c.parts, self._c.phys_base, strict=False)
                for i in part.view.defining(name_lower)
            ]
            if self._c.identity:
                got = sorted(phys)
            else:
                got = sorted(int(x) for x in self._c.logical_of[np.asarray(phys, np.int64)] if x >= 0) if phys else []
            if len(self._memo) > 4096:
                self._memo.clear()
            self._memo[name_lower] = got
        return got if got or default is None else default


class Corpus:
    def __init__(self, parts: Sequence[CorpusPart], dims: int, previous: Corpus | None = None) -> None:
        """``previous``: the corpus this one replaces; its tables over the file paths alone are kept when
        the paths are the same (an edit in place), since they cost a kernel-sized tree 0.1-0.3 s each."""
        self.parts = list(parts)
        self.dims = dims
        self.phys_base = [0]
        log_base = [0]
        for p in self.parts:
            self.phys_base.append(self.phys_base[-1] + p.view.n_physical)
            log_base.append(log_base[-1] + p.view.n)
        self.n = log_base[-1]
        self.n_physical = self.phys_base[-1]
        self.identity = all(p.view.identity for p in self.parts)
        # One repository without a prefix (the usual case) shares its view's arrays and lists, never
        # changed after they are made: copying them cost the kernel's every reopen 50-70 ms, more when the
        # process was growing (a fresh page costs this VM 1-6 ms a megabyte).
        self._single = len(self.parts) == 1 and not self.parts[0].prefix
        if self._single:
            v = self.parts[0].view
            self.perm = v.perm
            self.files = v.files
            self.file_chars = v.file_chars
            self.file_of_chunk = v.file_of_chunk
            self._file_start: list[int] = v.file_start.tolist()
            self._part_of_file: list[tuple[int, int]] = []  # (part, file within it); with one part, (0, f)
        else:
            self.perm = (
                np.concatenate([p.view.perm + b for p, b in zip(self.parts, self.phys_base, strict=False)])
                if self.parts
                else np.zeros(0, np.int64)
            )
            self.files = []
            self.file_chars = []
            file_of: list[np.ndarray] = []
            self._file_start = []
            self._part_of_file = []
            for p_i, part in enumerate(self.parts):
                v = part.view
                file_of.append(v.file_of_chunk + len(self.files))
                self._file_start.extend((v.file_start[:-1] + log_base[p_i]).tolist())
                self._part_of_file.extend(zip(repeat(p_i), range(len(v.files))))
                self.files.extend([part.prefix + rel for rel in v.files] if part.prefix else v.files)
                self.file_chars.extend(v.file_chars)
            self._file_start.append(self.n)
            self.file_of_chunk = np.concatenate(file_of) if file_of else np.zeros(0, np.int32)
        self.logical_of = np.full(self.n_physical, -1, np.int64)
        self.logical_of[self.perm] = np.arange(self.n, dtype=np.int64)
        self._runs = None if self.identity else _runs(self.perm)
        self._by_file_map: dict[str, int] | None = None  # path -> file number, made on first use
        self.chunks = Chunks(self)
        self.bm25 = SegmentBM25(self)
        self.definitions = Definitions(self)
        self._marks: np.ndarray | None = None
        self._last_dense: tuple[bytes, np.ndarray] | None = None  # (query vector, its scores): ``dense``
        self._derived: dict[str, object] = {}
        self._of_paths: set[str] = set()  # derived tables that depend on the file paths only
        if previous is not None and previous._of_paths and previous.files == self.files:
            self._of_paths = set(previous._of_paths)
            self._derived = {k: previous._derived[k] for k in self._of_paths}
        self._chunk_memo: dict[int, Chunk] = {}

    def logical(self, arr: np.ndarray) -> np.ndarray:
        """``arr``, one row per physical chunk, in logical order. After an edit the order is the physical
        one but for a few runs (the file's chunks now sit in a new segment, its old ones are dead), and
        copying those runs took 0.2 ms on the kernel where gathering 1.33M values by ``perm`` took 2."""
        if self.identity:
            return arr
        if self._runs is None:
            return arr[self.perm]
        return np.concatenate([arr[p : p + n] for p, n in self._runs]) if self._runs else arr[:0]

    def chunk(self, i: int) -> Chunk:
        got = self._chunk_memo.get(i)
        if got is None:
            if len(self._chunk_memo) > 50_000:
                self._chunk_memo.clear()
            got = self._chunk_memo[i] = self._read_chunk(i)
        return got

    def _where(self, f: int) -> tuple[int, int]:
        """The part that holds corpus file ``f``, and the file's number within it."""
        return (0, f) if self._single else self._part_of_file[f]

    @property
    def _by_file(self) -> dict[str, int]:
        if self._by_file_map is None:  # 10-20 ms on the kernel: not every reopen needs it
            self._by_file_map = dict(zip(self.files, range(len(self.files)), strict=True))
        return self._by_file_map

    def _read_chunk(self, i: int) -> Chunk:
        f = int(self.file_of_chunk[i])
        p_i, local = self._where(f)
        part = self.parts[p_i]
        c = part.view.file_chunks(local)[i - self._file_start[f]]
        return replace(c, file_path=part.prefix + c.file_path) if part.prefix else c

    def _part_of_chunk(self, i: int) -> tuple[View, int]:
        f = int(self.file_of_chunk[i])
        p_i, local = self._where(f)
        view = self.parts[p_i].view
        return view, i - self._file_start[f] + int(view.file_start[local])

    def vector(self, i: int) -> np.ndarray:
        view, local = self._part_of_chunk(i)
        return view.vector(local)

    def dense(self, qv: np.ndarray) -> np.ndarray:
        """Similarity of every chunk to a query vector (read-only). The last vector's scores are kept: a
        search and its confidence often ask for the same one (a sentence's words are all known ones), and
        on the kernel each scan is 0.04-0.08 s."""
        key = np.asarray(qv, np.float32).tobytes()
        if self._last_dense is not None and self._last_dense[0] == key:
            return self._last_dense[1]
        parts = [p.view.dense(qv) for p in self.parts]
        out = self.logical(np.concatenate(parts) if parts else np.zeros(0, np.float32))
        out.flags.writeable = False
        self._last_dense = (key, out)
        return out

    @property
    def vectors(self) -> np.ndarray:
        """Every chunk's vector as one float32 matrix (materialised: for tests and small corpora)."""
        mats = [s.floats() for p in self.parts for s in p.view.segments]
        if not self.n or not mats:
            return np.zeros((0, self.dims), np.float32)
        out = np.concatenate(mats)
        return self.logical(out)

    @property
    def marks(self) -> np.ndarray:
        """Each chunk's ``chunks.marks`` bits (uint8, logical order), judged at build time: a query asks
        them of its few hundred candidates without decoding their files. Gathered on first use (1.3 MB
        for the Linux kernel's 1.3M chunks)."""
        if self._marks is None:
            parts = [p.view.marks() for p in self.parts]
            phys = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
            self._marks = self.logical(phys)
        return self._marks

    def derived(self, name: str, compute: Callable[[Corpus], T], *, of_paths: bool = False) -> T:
        """A corpus-wide fact (a lookup table over its files), computed on first use and kept with this
        corpus: a new generation is a new corpus, so nothing here can go stale. ``of_paths``: the fact
        depends on ``files`` alone, so the next generation keeps it while the paths stay the same."""
        if name not in self._derived:
            self._derived[name] = compute(self)
            if of_paths:
                self._of_paths.add(name)
        return cast(T, self._derived[name])

    def __len__(self) -> int:
        return self.n

    def chunk_indices(self, file_path: str) -> list[int]:
        f = self._by_file.get(file_path)
        return [] if f is None else list(range(self._file_start[f], self._file_start[f + 1]))

    def chunk_at(self, file_path: str, line: int) -> int | None:
        """The smallest chunk of that file whose span holds the line (None when none does)."""
        best: int | None = None
        best_span = 0
        for i in self.chunk_indices(file_path):
            c = self.chunks[i]
            if c.start_line <= line <= c.end_line and (best is None or c.end_line - c.start_line < best_span):
                best, best_span = i, c.end_line - c.start_line
        return best
