"""One committed generation of an index, mapped read-only: what search reads.

Chunks are numbered in a logical order (files sorted by path, chunks in file order) that does not depend
on which segment holds them, so an incrementally refreshed index numbers its chunks as a full rebuild
would. ``perm`` maps that order onto the physical one (segments concatenated); a segment's chunks whose
files were since replaced (dead chunks) appear in no logical position.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.store import segment as seg
from codepith.store.layout import CacheError, ManifestError
from codepith.store.manifest import Store

term_key = seg.term_key
STREAM_FROM = 200_000  # vectors: a store this large streams until its float32 copies are made (see dense)
STREAMED = 2  # ... which starts after this many queries (a CLI search asks twice: search and confidence)
BLOCK = 8192  # rows of float16 converted at a time when streaming
# Rows of int8 codes converted at a time, at the model's full width: 1 MB of float32, cache-sized, and small
# enough for a one-thread BLAS call (OpenBLAS threads a product of twice as many values: 2048 rows of 256 took a
# kernel scan 70 -> 372 ms, with both scan threads' BLAS threads fighting for two cores). A narrower scan (the
# head) converts as many values in more rows: the head pass of the kernel's 1.33M chunks 57 -> 41 ms (median
# of 25 rounds), half the blocks' Python steps and GIL hand-overs between the scan threads.
CODE_BLOCK = 1024
SCAN_THREADS = 2  # int8 stores are scanned by this many threads, one share of the segments each
FIRST_STAGE_FROM = 100_000  # an int8 store this large is scanned in two passes (see dense) ...
FIRST_STAGE = 10_000  # ... the first keeping this many candidates for the exact second


class View:
    segments: list[seg.Segment]
    _key: tuple[tuple[tuple[str, int], ...], list[tuple[Any, ...]]]

    def __init__(self, store: Store, previous: View | None = None) -> None:
        """The store's latest generation. ``previous``: this store's view of an earlier one; when the new
        generation holds the same segments and the same live file rows (a commit that only renewed
        stamps: a file touched, its content the same), its arrays are taken over (``reused``) instead of
        being built again (0.1-0.15 s for the kernel, and then a new corpus as long)."""
        for attempt in range(3):  # a merge may retire a segment between reading the manifest and mapping it
            with store.snapshot() as (meta, segs, files):
                try:
                    self.generation = int(meta.get("generation", "0"))
                    self.complete = meta.get("complete") == "1"
                    self.walk_skipped = json.loads(meta.get("walk_skipped", "null") or "null")
                    self.refreshed_at = float(meta.get("refreshed_at", "0") or 0)
                except ValueError as exc:  # bytes flipped in a value SQLite does not check
                    raise ManifestError(f"manifest unreadable ({exc})", store.folder) from None
            key = (tuple((name, n) for name, n, _sums in segs), files)
            self.reused = previous is not None and previous._key == key
            if self.reused:
                assert previous is not None
                for name, value in vars(previous).items():
                    if name not in ("generation", "complete", "walk_skipped", "refreshed_at", "reused"):
                        setattr(self, name, value)
                store.opened.retain(s.name for s in self.segments)
                return
            try:
                self.segments = [store.opened.segment(store.folder / name, n) for name, n, _sums in segs]
                break
            except CacheError:
                if attempt == 2:
                    raise
        self._key = key  # the generation's segments and live rows (the rows are the store's own tuples)
        self.dims = store.dims
        index = {s.name: i for i, s in enumerate(self.segments)}
        base = np.zeros(len(self.segments) + 1, np.int64)
        base[1:] = np.cumsum([s.n for s in self.segments])
        self.n_physical = int(base[-1])
        files = sorted(files, key=itemgetter(0))  # a copy: the key keeps the snapshot order
        self.files: list[str] = [r[0] for r in files]
        self.file_chars = [int(r[4]) for r in files]
        # Each file's row (its segment's name, its blob's offset and length) is read when its chunks are:
        # a list of 60,000 (segment, offset, length) tuples cost the kernel's every open 25-30 ms.
        self._rows = files
        self._segment_of = index
        if not {r[1] for r in files} <= index.keys():
            raise ManifestError("a file refers to a segment the manifest does not hold", store.folder)
        counts = np.fromiter((r[3] for r in files), np.int64, len(files))
        first_of = {name: int(base[i]) for name, i in index.items()}  # plain ints: no numpy scalar per row
        starts = np.fromiter((first_of[r[1]] + r[2] for r in files), np.int64, len(files))
        self.file_start = np.zeros(len(files) + 1, np.int64)
        self.file_start[1:] = np.cumsum(counts)
        self.n = int(self.file_start[-1])
        # physical position of each logical chunk
        self.perm = np.repeat(starts - self.file_start[:-1], counts) + np.arange(self.n, dtype=np.int64)
        if np.any(self.perm >= self.n_physical):
            raise ManifestError("a file's chunks lie outside its segment", store.folder)
        self.identity = self.n == self.n_physical and bool(np.all(self.perm == np.arange(self.n)))
        self.file_of_chunk = np.repeat(np.arange(len(files), dtype=np.int32), counts)
        self.base = base
        self._vectors = store.vectors
        self._opened = store.opened
        store.opened.retain(s.name for s in self.segments)

    def __len__(self) -> int:
        return self.n

    def content_key(self) -> str:
        """A digest of what this generation holds (its segments and live file rows, as ``reused`` compares
        them): equal for two generations that differ only in stamps, or in another process."""
        import hashlib

        return hashlib.blake2b(repr(self._key).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

    # -- per chunk -----------------------------------------------------------------------------------
    def file_chunks(self, f: int) -> list[Chunk]:
        """The chunks of the f-th file (decompressed once per process: ``OpenSegments``)."""
        row = self._rows[f]
        got = self._opened.chunks(self.segments[self._segment_of[row[1]]], self.files[f], int(row[5]), int(row[6]))
        if len(got) != self.file_start[f + 1] - self.file_start[f]:
            folder = self.segments[self._segment_of[row[1]]].folder
            raise CacheError(f"chunk count of {self.files[f]} does not match the manifest", folder)
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
        once. int8 codes are scaled after the product: a pass over n scores, not n x dims values.

        From ``FIRST_STAGE_FROM`` chunks an int8 store whose segments keep a head is scanned in two passes
        (``_two_passes``): only its ``FIRST_STAGE`` best estimates are scored, the rest are -inf."""
        qv = np.ascontiguousarray(qv, dtype=np.float32)
        cache = self._vectors
        large = self.n_physical >= STREAM_FROM
        if large and all(s.compact for s in self.segments):
            headed = self.dims >= 2 and all(s.head is not None for s in self.segments)  # else written before heads
            if headed and self.n_physical >= FIRST_STAGE_FROM:
                return self._two_passes(qv)
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
                out = _streamed(s.vectors, qv, buf)
            parts.append(out * s.vscale if s.compact else out)
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def _scan_codes(self, qv: np.ndarray) -> np.ndarray:
        """``dense`` over int8 segments, every code of every segment."""
        return self._threaded(lambda s, buf: _streamed(s.vectors, qv, buf), self.dims)

    def _two_passes(self, qv: np.ndarray) -> np.ndarray:
        """``dense`` over a large int8 store in two passes: each segment's head (the half of its dimensions
        along which its codes vary most, stored contiguous) gives every chunk an estimate, and the
        ``FIRST_STAGE`` best estimates are scored exactly from their whole codes. The other chunks are
        left at -inf: nothing asks a store this large for more than its best hundred. On the kernel's
        1.33M chunks the first pass converts half the bytes: 40-55 ms against 77-92 for the whole scan,
        and over 43 queries the exact top 100 was kept whole (recall@100 1.0 from 8,000 candidates up,
        0.9998 from 5,000: one chunk at rank 84 of one query)."""
        if self.n_physical <= FIRST_STAGE:
            return self._scan_codes(qv)
        for s in self.segments:  # every head asked for at once, before the scan reads the first (see segment._LEAN)
            s.prefetch("head")
        heads = self._threaded(lambda s, buf: _head_scores(s, qv, buf), self.dims // 2)
        out = np.full(self.n_physical, -np.inf, np.float32)
        picked = np.sort(_largest(heads, FIRST_STAGE))
        # each segment's run of the picked, by its bounds (np.unique would import numpy.ma: 40 ms of a cold search)
        bounds = np.searchsorted(picked, self.base).tolist()
        runs = [(i, picked[bounds[i] : bounds[i + 1]]) for i in range(len(self.segments))]
        for i, phys in runs:
            self.segments[i].prefetch_rows("vectors", phys - int(self.base[i]))
        for i, phys in runs:
            if len(phys):
                s = self.segments[i]
                rows = phys - int(self.base[i])
                out[phys] = (np.asarray(s.vectors[rows], np.float32) @ qv) * s.vscale[rows]
        return out

    def _threaded(self, score: Callable[[seg.Segment, np.ndarray], np.ndarray], width: int) -> np.ndarray:
        """``score(segment, buffer) * its scales`` for every segment, each thread taking every
        ``SCAN_THREADS``-th segment (numpy's casts and BLAS release the GIL); the scores are the same
        whichever thread computes a segment."""
        segments = self.segments
        parts: list[np.ndarray | None] = [None] * len(segments)
        errors: list[BaseException] = []

        def scan(todo: Sequence[int]) -> None:
            try:
                buf = np.empty((max(1, CODE_BLOCK * self.dims // max(1, width)), width), np.float32)
                for i in todo:
                    parts[i] = score(segments[i], buf) * segments[i].vscale
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
        for s in self.segments:  # each step for every segment before the next (see segment._LEAN)
            s.prefetch("keys")
        found = [s.find(keys) for s in self.segments]
        for s, b, at in zip(self.segments, self.base[:-1].tolist(), found, strict=False):
            for i, got in enumerate(s.slices(at)):
                if got is not None and len(got[0]):
                    out[i].append((b, got[0], got[1]))
        return out

    def defining(self, name_lower: str) -> list[int]:
        """Physical ids of the chunks that define a (lower-cased) name."""
        key = term_key(name_lower)
        out: list[int] = []
        for s in self.segments:  # a binary search in each: its names asked for whole first (segment._LEAN)
            s.prefetch("dkeys")
        for s, b in zip(self.segments, self.base[:-1], strict=False):
            got = s.defining(key)
            if len(got):
                out.extend((int(b) + got.astype(np.int64)).tolist())
        return out


def _largest(values: np.ndarray, k: int, step: int = 64) -> np.ndarray:
    """Positions of the k largest values, unordered (ties at the k-th either way). A partition of the
    kernel's 1.33M estimates took 9 ms; the values at or above a threshold read off every ``step``-th
    one (about 2k of them) are found in one comparison and partitioned instead."""
    sample = values[::step]
    above = min(len(sample), 2 * k // step + 1)  # the sample's best this many: about 2k values reach it
    if 0 < k < len(values) and above < len(sample):
        threshold = np.partition(sample, len(sample) - above)[len(sample) - above]
        held = np.flatnonzero(values >= threshold)
        if len(held) > k:
            return held[np.argpartition(-values[held], k - 1)[:k]]
    return np.argpartition(-values, min(k, len(values)) - 1)[:k] if len(values) else np.zeros(0, np.intp)


def _head_scores(s: seg.Segment, qv: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """A segment's estimates: its head's columns times the query's same dimensions."""
    if s.head is None or s.hdims is None:
        raise CacheError(f"segment {s.name} has no head", s.folder)
    return _streamed(s.head, qv[s.hdims.astype(np.intp)], buf)


def _streamed(rows: np.ndarray, qv: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """``rows @ qv``, the rows turned into float32 a block of ``buf`` at a time."""
    n = len(rows)
    out = np.empty(n, np.float32)
    for b in range(0, n, len(buf)):
        k = min(len(buf), n - b)
        np.copyto(buf[:k], rows[b : b + k], casting="unsafe")
        np.dot(buf[:k], qv, out=out[b : b + k])
    return out


def all_chunks(view: View) -> Sequence[Chunk]:
    return [c for f in range(len(view.files)) for c in view.file_chunks(f)]


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """One per-chunk array of every segment, in physical order."""
    return np.concatenate(parts) if parts else np.zeros(0, dtype)
