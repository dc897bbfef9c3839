"""One immutable segment: a batch of files' chunks, postings and vectors, written once and then mapped.

Files in ``seg-<id>/`` (numpy ``.npy``, so a reader maps them with ``np.load(mmap_mode="r")``):
- ``vectors.npy`` / ``vscale.npy``: (chunks, dims) embeddings, float16 (half the disk, see
  benchmarks/README.md), or in a large repository's segments int8 codes (see ``quantize``); and one
  float32 scale per chunk (1 for float16), so that ``codes * scale`` is the vector either way;
- ``lengths.npy``: float32 BM25 length of each chunk (sum of its term counts);
- ``keys.npy`` / ``offsets.npy`` / ``docs.npy`` / ``tfs.npy``: postings by term, CSR: the sorted 64-bit
  hashes of the terms present, where each term's run starts, and the chunk (local id) and count of each;
- ``dkeys.npy`` / ``dchunks.npy``: definitions, the same way: hashed lower-cased symbol -> chunk;
- ``chunks.bin``: per file, a zlib-compressed JSON list of its chunks (lines, text, symbols, kind).
Terms are keyed by hash rather than by a shared vocabulary, so segments are independent of each other
(no global table to load or lock) and corpora of several repositories combine without remapping.
Local chunk ids are uint16, so a segment holds at most ``MAX_CHUNKS`` chunks.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.store.layout import CacheError

MAX_CHUNKS = 65535
VECTOR_DTYPE = np.float16
# A term that begins with this belongs to a side field (the words of the names a chunk defines): it has
# postings like any term but no share in the chunk's BM25 length, so queries that never ask for the field
# score exactly as if it were not there.
SIDE_MARK = "="
ARRAYS = ("vectors", "vscale", "lengths", "keys", "offsets", "docs", "tfs", "dkeys", "dchunks")
FILES = (*(f"{a}.npy" for a in ARRAYS), "chunks.bin")


def term_key(term: str) -> int:
    """The 64-bit key a term (or a lower-cased symbol) is stored under."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class _Keys(dict[str, int]):
    """term -> key, hashing each distinct term once per segment."""

    def __missing__(self, term: str) -> int:
        key = self[term] = term_key(term)
        return key


@dataclass(frozen=True)
class NewFile:
    """One file's analysed content, ready to be written into a segment."""

    rel: str
    chunks: Sequence[Chunk]
    terms: Sequence[tuple[Sequence[str], Sequence[int]]]  # per chunk: (terms, counts)
    vectors: np.ndarray  # (len(chunks), dims) float32


@dataclass(frozen=True)
class Placed:
    """Where a written file's chunks sit in its segment."""

    rel: str
    first: int
    n: int
    blob_off: int
    blob_len: int


def encode_chunks(chunks: Sequence[Chunk]) -> bytes:
    rows = [[c.start_line, c.end_line, c.content, c.language, list(c.symbols), c.kind] for c in chunks]
    return zlib.compress(json.dumps(rows, ensure_ascii=True, separators=(",", ":")).encode("ascii"), 6)


def decode_chunks(rel: str, blob: bytes) -> list[Chunk]:
    try:
        rows = json.loads(zlib.decompress(blob))
        return [
            Chunk(rel, int(s), int(e), str(t), str(lang), tuple(sym), str(kind)) for s, e, t, lang, sym, kind in rows
        ]
    except (zlib.error, ValueError, TypeError) as exc:
        raise CacheError(f"corrupt chunk data for {rel} ({type(exc).__name__})") from None


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _digest_file(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _csr(keys: np.ndarray, docs: np.ndarray, tfs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Postings sorted by (key, doc), with each key's start."""
    order = np.lexsort((docs, keys))
    keys, docs, tfs = keys[order], docs[order], tfs[order]
    uniq, starts = np.unique(keys, return_index=True)
    offsets = np.append(starts, len(keys)).astype(np.int64)
    return uniq.astype(np.uint64), offsets, docs, tfs


def write(
    folder: Path, files: Sequence[NewFile], dims: int, *, compact: bool = False
) -> tuple[str, int, dict[str, list[object]], list[Placed]]:
    """Write a segment of these files under ``folder`` and fsync it.

    Returns (name, chunks, {file: [bytes, digest]}, placements); nothing refers to it until the
    manifest commits it, so a crash here leaves only an unreferenced folder that the next builder removes.
    """
    placed: list[Placed] = []
    blobs: list[bytes] = []
    keys = _Keys()
    p_keys: list[int] = []
    p_tfs: list[int] = []
    per_chunk: list[int] = []
    d_keys: list[int] = []
    d_docs: list[int] = []
    lengths: list[int] = []
    vectors: list[np.ndarray] = []
    n = 0
    off = 0
    for f in files:
        blob = encode_chunks(f.chunks)
        blobs.append(blob)
        placed.append(Placed(f.rel, n, len(f.chunks), off, len(blob)))
        off += len(blob)
        for c, (terms, counts) in zip(f.chunks, f.terms, strict=True):
            p_keys.extend(map(keys.__getitem__, terms))
            p_tfs.extend(counts)
            per_chunk.append(len(terms))
            lengths.append(sum(n for t, n in zip(terms, counts, strict=True) if not t.startswith(SIDE_MARK)))
            for sym in c.symbols:  # one entry per symbol, as the in-memory table had
                d_keys.append(keys[sym.lower()])
                d_docs.append(n)
            n += 1
        if len(f.chunks):
            vectors.append(np.asarray(f.vectors, dtype=np.float32))
    p_docs = np.repeat(np.arange(n, dtype=np.int64), np.asarray(per_chunk, dtype=np.int64))
    if n > MAX_CHUNKS:
        raise ValueError(f"a segment holds at most {MAX_CHUNKS} chunks, got {n}")
    name, sums = persist(
        folder,
        vectors=np.concatenate(vectors) if vectors else np.zeros((0, dims), np.float32),
        lengths=np.asarray(lengths, dtype=np.float32),
        postings=(np.asarray(p_keys, np.uint64), p_docs, np.asarray(p_tfs, np.int64)),
        defs=(np.asarray(d_keys, np.uint64), np.asarray(d_docs, np.int64)),
        blobs=blobs,
        compact=compact,
    )
    return name, n, sums, placed


def half_vectors(vectors: np.ndarray) -> np.ndarray:
    """float16 with subnormals flushed to zero. numpy turns a subnormal float16 into float32 on a slow
    path, and the 0.1% of components below 6e-5 made a first search's conversion of the kernel's 1.33M
    vectors 5x slower (2.6 s against 0.5 s); zeroing them moves a unit vector's cosine by about 1e-5."""
    half = np.asarray(vectors, dtype=np.float32).astype(VECTOR_DTYPE)
    half[np.abs(half) < np.finfo(VECTOR_DTYPE).smallest_normal] = 0
    return half


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and a float32 scale per row (symmetric, round to nearest): ``codes * scale`` is the vector.

    Used for large repositories only. A search's first step turns the stored vectors into the float32
    BLAS needs, once per process: for the kernel's 1.33M vectors numpy takes 0.1 s from int8 and 0.35-2.5 s
    from float16 on this machine, which alone broke a 2 s cold CLI search. The price is precision: a
    unit vector's cosine moves by up to ~6e-3 (97-100 of the kernel's dense top 100 stay the same), and on
    the dev suite 149 of 540 hit lists would change, which is why small repositories keep float16."""
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1) if len(v) else np.zeros(0, np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(v / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale


def persist(
    folder: Path,
    *,
    vectors: np.ndarray,
    lengths: np.ndarray,
    postings: tuple[np.ndarray, np.ndarray, np.ndarray],
    defs: tuple[np.ndarray, np.ndarray],
    blobs: Sequence[bytes],
    compact: bool = False,
) -> tuple[str, dict[str, list[object]]]:
    """Write the arrays under a temporary name, fsync, rename: a segment exists whole or not at all.
    ``compact``: vectors as int8 codes (``quantize``), else float16."""
    name = f"seg-{uuid.uuid4().hex[:16]}"
    tmp = folder / f".tmp-{name}"
    tmp.mkdir(parents=True)
    try:
        with open(tmp / "chunks.bin", "wb") as fh:
            for blob in blobs:
                fh.write(blob)
        p_keys, p_docs, p_tfs = postings
        tf_dtype = np.uint16 if not len(p_tfs) or int(p_tfs.max()) <= 65535 else np.uint32
        keys, offsets, docs, tfs = _csr(p_keys, p_docs.astype(np.uint16), p_tfs.astype(tf_dtype))
        d_keys, d_docs = defs
        dorder = np.lexsort((d_docs, d_keys))
        if compact:
            codes, scale = quantize(vectors)
        else:
            codes, scale = half_vectors(vectors), np.ones(len(vectors), np.float32)
        arrays: dict[str, np.ndarray] = {
            "vectors": codes,
            "vscale": scale,
            "lengths": lengths.astype(np.float32),
            "keys": keys,
            "offsets": offsets,
            "docs": docs,
            "tfs": tfs,
            "dkeys": d_keys[dorder].astype(np.uint64),
            "dchunks": d_docs[dorder].astype(np.uint16),
        }
        for key, arr in arrays.items():
            np.save(tmp / f"{key}.npy", arr, allow_pickle=False)
        sums: dict[str, list[object]] = {}
        for fname in FILES:
            path = tmp / fname
            _fsync_file(path)
            sums[fname] = [path.stat().st_size, _digest_file(path)]
        os.replace(tmp, folder / name)
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return name, sums
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def verify(folder: Path, sums: dict[str, list[object]], *, full: bool) -> str | None:
    """Why the segment does not match what the manifest recorded (None when it does)."""
    for fname in FILES:
        path = folder / fname
        want = sums.get(fname)
        if want is None:
            return f"{fname}: not recorded"
        try:
            size = path.stat().st_size
        except OSError:
            return f"{fname}: missing"
        if size != want[0]:
            return f"{fname}: {size} bytes, expected {want[0]}"
        if full and _digest_file(path) != want[1]:
            return f"{fname}: checksum mismatch"
    return None


class Segment:
    """A segment mapped read-only; arrays are memory maps, so opening costs a few header reads."""

    def __init__(self, folder: Path, n: int) -> None:
        self.name = folder.name
        self.n = n
        try:
            # Plain ndarray views of the maps: the same pages, without np.memmap's per-slice Python hooks,
            # which cost more than the lookups themselves in a search's few hundred postings reads.
            arr = {a: np.asarray(np.load(folder / f"{a}.npy", mmap_mode="r", allow_pickle=False)) for a in ARRAYS}
            with open(folder / "chunks.bin", "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                self._blob: mmap.mmap | bytes = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except (OSError, ValueError) as exc:
            raise CacheError(f"segment {folder.name} unreadable ({exc})") from None
        self.vectors: np.ndarray = arr["vectors"]  # float16, or int8 codes in a compact segment
        self.vscale: np.ndarray = arr["vscale"]
        self.compact = self.vectors.dtype == np.int8
        self.lengths: np.ndarray = arr["lengths"]
        self.keys: np.ndarray = arr["keys"]
        self.offsets: np.ndarray = arr["offsets"]
        self.docs: np.ndarray = arr["docs"]
        self.tfs: np.ndarray = arr["tfs"]
        self.dkeys: np.ndarray = arr["dkeys"]
        self.dchunks: np.ndarray = arr["dchunks"]
        if (
            self.vectors.shape[0] != n
            or self.vscale.shape[0] != n
            or self.lengths.shape[0] != n
            or len(self.offsets) != len(self.keys) + 1
            or len(self.docs) != len(self.tfs)
            or (len(self.offsets) and int(self.offsets[-1]) != len(self.docs))
            or len(self.dkeys) != len(self.dchunks)
        ):
            raise CacheError(f"segment {folder.name} is inconsistent")

    def floats(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Rows lo:hi as float32 vectors."""
        rows = np.asarray(self.vectors[lo:hi], np.float32)
        return rows * self.vscale[lo:hi, None] if self.compact else rows

    def postings(self, keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """(local chunk ids, term counts) of each key, or None where the segment lacks it: one binary
        search for all of a query's terms."""
        n = len(self.keys)
        pos = self.keys.searchsorted(keys)
        out: list[tuple[np.ndarray, np.ndarray] | None] = []
        for i, k in zip(pos.tolist(), keys.tolist(), strict=True):
            if i >= n or int(self.keys[i]) != k:
                out.append(None)
            else:
                lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
                out.append((self.docs[lo:hi], self.tfs[lo:hi]))
        return out

    def defining(self, key: int) -> np.ndarray:
        k = np.uint64(key)
        lo = int(np.searchsorted(self.dkeys, k, side="left"))
        hi = int(np.searchsorted(self.dkeys, k, side="right"))
        return self.dchunks[lo:hi]

    def blob(self, off: int, length: int) -> bytes:
        data = self._blob[off : off + length]
        if len(data) != length:
            raise CacheError(f"segment {self.name}: chunk data truncated")
        return bytes(data)
