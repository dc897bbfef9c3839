"""One committed generation of an index, mapped read-only: what search reads.

Chunks are numbered in a logical order (files sorted by path, chunks in file order) that does not depend
on which segment holds them, so an incrementally refreshed index numbers its chunks as a full rebuild
would. ``perm`` maps that order onto the physical one (segments concatenated); a segment's chunks whose
files were since replaced (dead chunks) appear in no logical position.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.store import segment as seg
from codepith.store.layout import CacheError
from codepith.store.manifest import Store

term_key = seg.term_key
STREAM_FROM = 200_000  # vectors: a store this large streams until its float32 copies are made (see dense)
STREAMED = 2  # ... which starts after this many queries (a CLI search asks twice: search and confidence)
BLOCK = 8192  # rows of float16 converted at a time when streaming
CODE_BLOCK = 1024  # rows of int8 codes: 1 MB of float32, cache-sized, and small enough for a one-thread BLAS call
SCAN_THREADS = 2  # int8 stores are scanned by this many threads, one share of the segments each


class View:
    def __init__(self, store: Store) -> None:
        for attempt in range(3):  # a merge may retire a segment between reading the manifest and mapping it
            with store.snapshot() as (meta, segs, files):
                self.generation = int(meta.get("generation", "0"))
                self.complete = meta.get("complete") == "1"
                self.walk_skipped = json.loads(meta.get("walk_skipped", "null") or "null")
                self.refreshed_at = float(meta.get("refreshed_at", "0") or 0)
            try:
                self.segments = [store.opened.segment(store.folder / name, n) for name, n, _sums in segs]
                break
            except CacheError:
                if attempt == 2:
                    raise
        self.dims = store.dims
        index = {s.name: i for i, s in enumerate(self.segments)}
        base = np.zeros(len(self.segments) + 1, np.int64)
        base[1:] = np.cumsum([s.n for s in self.segments])
        self.n_physical = int(base[-1])
        files.sort(key=lambda r: r[0])
        self.files: list[str] = [r[0] for r in files]
        self.file_chars = [int(r[4]) for r in files]
        self._blob = [(index.get(r[1], -1), int(r[5]), int(r[6])) for r in files]
        if any(b[0] < 0 for b in self._blob):
            raise CacheError("a file refers to a segment the manifest does not hold")
        counts = np.fromiter((r[3] for r in files), np.int64, len(files))
        starts = np.fromiter((base[index[r[1]]] + r[2] for r in files), np.int64, len(files))
        self.file_start = np.zeros(len(files) + 1, np.int64)
        self.file_start[1:] = np.cumsum(counts)
        self.n = int(self.file_start[-1])
        # physical position of each logical chunk
        self.perm = np.repeat(starts - self.file_start[:-1], counts) + np.arange(self.n, dtype=np.int64)
        if np.any(self.perm >= self.n_physical):
            raise CacheError("a file's chunks lie outside its segment")
        self.identity = self.n == self.n_physical and bool(np.all(self.perm == np.arange(self.n)))
        self.file_of_chunk = np.repeat(np.arange(len(files), dtype=np.int32), counts)
        self.base = base
        self._vectors = store.vectors
        self._opened = store.opened
        store.opened.retain(s.name for s in self.segments)

    def __len__(self) -> int:
        return self.n

    # -- per chunk -----------------------------------------------------------------------------------
    def file_chunks(self, f: int) -> list[Chunk]:
        """The chunks of the f-th file (decompressed once per process: ``OpenSegments``)."""
        s, off, length = self._blob[f]
        got = self._opened.chunks(self.segments[s], self.files[f], off, length)
        if len(got) != self.file_start[f + 1] - self.file_start[f]:
            raise CacheError(f"chunk count of {self.files[f]} does not match the manifest")
        return got

    def chunk(self, i: int) -> Chunk:
        f = int(self.file_of_chunk[i])
        return self.file_chunks(f)[i - int(self.file_start[f])]

    def _locate(self, phys: int) -> tuple[seg.Segment, int]:
        s = int(np.searchsorted(self.base, phys, side="right")) - 1
        return self.segments[s], phys - int(self.base[s])

    def vector(self, i: int) -> np.ndarray:
        s, local = self._locate(int(self.perm[i]))
        return s.floats(local, local + 1)[0]

    # -- whole-corpus arrays (physical order; callers apply ``perm``) ---------------------------------
    def lengths(self) -> np.ndarray:
        return _joined([s.lengths for s in self.segments], np.float32)

    def marks(self) -> np.ndarray:
        return _joined([s.marks for s in self.segments], np.uint8)

    def dense(self, qv: np.ndarray) -> np.ndarray:
        """Similarity of every physical chunk to a query vector, a segment at a time.

        A large store of int8 codes (the kernel: 1.33M vectors) is always streamed: its codes are turned
        into float32 a cache-sized block at a time, on ``SCAN_THREADS`` threads. It reads a quarter of the
        bytes a float32 copy holds, so it is also the faster scan where memory is the limit (measured on
        the kernel: 36-40 ms against 72-81 ms for one BLAS product over the copies), and no process ever
        holds the 1.36 GB copy. float16 does not convert fast enough for that (0.4-0.7 s for the kernel's
        count), so a large float16 store streams only until its copies are made: after ``STREAMED``
        queries, in the background, so a one-shot search never pays for the copy. Small stores copy at
        once. int8 codes are scaled after the product: a pass over n scores, not n x dims values."""
        qv = np.ascontiguousarray(qv, dtype=np.float32)
        cache = self._vectors
        large = self.n_physical >= STREAM_FROM
        if large and all(s.compact for s in self.segments):
            return self._scan_codes(qv)
        if not large:
            cache.fill(self.segments)
        elif any(cache.get(s.name) is None for s in self.segments):
            cache.asked += 1
            if cache.asked > STREAMED:
                cache.fill_later(self.segments)
        parts = []
        buf: np.ndarray | None = None
        for s in self.segments:
            m = cache.get(s.name)
            if m is not None:
                out = m @ qv
            else:
                buf = np.empty((BLOCK, self.dims), np.float32) if buf is None else buf
                out = _streamed(s, qv, buf)
            parts.append(out * s.vscale if s.compact else out)
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def _scan_codes(self, qv: np.ndarray) -> np.ndarray:
        """``dense`` over int8 segments: each thread streams every ``SCAN_THREADS``-th segment (numpy's
        casts and BLAS release the GIL); the scores are the same whichever thread computes a segment."""
        segments = self.segments
        parts: list[np.ndarray | None] = [None] * len(segments)
        errors: list[BaseException] = []

        def scan(todo: Sequence[int]) -> None:
            try:
                buf = np.empty((CODE_BLOCK, self.dims), np.float32)
                for i in todo:
                    parts[i] = _streamed(segments[i], qv, buf) * segments[i].vscale
            except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
                errors.append(exc)

        threads = max(1, min(SCAN_THREADS, len(segments)))
        started = []
        for k in range(1, threads):
            t = threading.Thread(target=scan, args=(range(k, len(segments), threads),), daemon=True)
            try:
                t.start()
            except RuntimeError:  # no thread to be had (a process at its limit): its share is done below
                continue
            started.append(t)
        scan(range(0, len(segments), threads))
        for t in started:
            t.join()
        missing = [i for i, p in enumerate(parts) if p is None]  # the shares of threads that did not start
        if missing and not errors:
            scan(missing)
        if errors:
            raise errors[0]
        done = [p for p in parts if p is not None]
        return np.concatenate(done) if done else np.zeros(0, np.float32)

    def postings(self, keys: np.ndarray) -> list[list[tuple[int, np.ndarray, np.ndarray]]]:
        """(physical base, local ids, counts) of each key in each segment that holds it, with one binary
        search per segment for all the keys."""
        out: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(len(keys))]
        for s, b in zip(self.segments, self.base[:-1].tolist(), strict=False):
            for i, got in enumerate(s.postings(keys)):
                if got is not None and len(got[0]):
                    out[i].append((b, got[0], got[1]))
        return out

    def defining(self, name_lower: str) -> list[int]:
        """Physical ids of the chunks that define a (lower-cased) name."""
        key = term_key(name_lower)
        out: list[int] = []
        for s, b in zip(self.segments, self.base[:-1], strict=False):
            got = s.defining(key)
            if len(got):
                out.extend((int(b) + got.astype(np.int64)).tolist())
        return out


def _streamed(s: seg.Segment, qv: np.ndarray, buf: np.ndarray) -> np.ndarray:
    out = np.empty(s.n, np.float32)
    for b in range(0, s.n, len(buf)):
        k = min(len(buf), s.n - b)
        np.copyto(buf[:k], s.vectors[b : b + k], casting="unsafe")
        np.dot(buf[:k], qv, out=out[b : b + k])
    return out


def all_chunks(view: View) -> Sequence[Chunk]:
    return [c for f in range(len(view.files)) for c in view.file_chunks(f)]


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """One per-chunk array of every segment, in physical order."""
    return np.concatenate(parts) if parts else np.zeros(0, dtype)
