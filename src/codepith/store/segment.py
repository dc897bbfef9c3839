"""One immutable segment: a batch of files' chunks, postings and vectors, written once and then mapped.

Two files in ``seg-<id>/``:
- ``arrays.bin``: every array, each at a 64-byte boundary after a JSON header that gives its dtype,
  shape and offset, so a reader maps the file once and views each array in place (``pack``/``unpack``):
  - ``vectors`` / ``vscale``: (chunks, dims) embeddings, float16 (half the disk, see benchmarks/README.md),
    or in a large repository's segments int8 codes (see ``quantize``); and one float32 scale per chunk
    (1 for float16), so that ``codes * scale`` is the vector either way;
  - ``lengths``: float32 BM25 length of each chunk (sum of its term counts);
  - ``marks``: uint8 bits per chunk that ranking asks of its candidates (``chunks/marks.py``), stored so
    that a search need not decompress a candidate's file to learn them;
  - ``keys`` / ``offsets`` / ``docs`` / ``tfs``: postings by term, CSR: the sorted 64-bit hashes of the
    terms present, where each term's run starts, and the chunk (local id) and count of each;
  - ``dkeys`` / ``dchunks``: names, the same way: hashed lower-cased definition or bound value -> chunk;
  - in a compact segment, ``hdims`` / ``head``: the half of the dimensions along which its codes vary most,
    and those columns of the codes again, contiguous: a large store's first pass reads only them
    (``View.dense``);
- ``chunks.bin``: per file, a zlib-compressed JSON list of its chunks (lines, text, language, symbols, kind,
  the values it binds).
One file for the arrays, not one ``.npy`` each (as before format 9): eight fsyncs and eight maps fewer per
segment, a quarter of a small repository's build, and 0.1 s of a cold search on the kernel's 62 segments.
A hand-made container, because ``.npz`` compresses or, stored, cannot be mapped array by array.
Terms are keyed by hash rather than by a shared vocabulary, so segments are independent of each other
(no global table to load or lock) and corpora of several repositories combine without remapping.
Local chunk ids are uint16, so a segment holds at most ``MAX_CHUNKS`` chunks.
"""

from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import shutil
import uuid
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.store.layout import CacheError, CacheIOError
from codepith.store.pages import MapPages

MAX_CHUNKS = 65535
VECTOR_DTYPE = np.float16
# A term that begins with this belongs to a side field (the words of the names a chunk defines): it has
# postings like any term but no share in the chunk's BM25 length, so queries that never ask for the field
# score exactly as if it were not there.
SIDE_MARK = "="
ARRAYS = ("vectors", "vscale", "lengths", "marks", "keys", "offsets", "docs", "tfs", "dkeys", "dchunks")
FILES = ("arrays.bin", "chunks.bin")
HEAD_SAMPLE = 8  # the head's dimensions are judged on every 8th row (the kernel: 5 ms a segment, not 40)
_MAGIC = b"CODEPITH-SEGMENT-ARRAYS-1\n"
_ALIGN = 64


def term_key(term: str) -> int:
    """The 64-bit key a term (or a lower-cased symbol) is stored under."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


_KEYS: dict[str, int] = {}  # term -> key, so each distinct term is hashed once per process
_KEYS_LIMIT = 1_000_000


def _keys(terms: Sequence[str], distinct: set[str]) -> np.ndarray:
    """uint64 keys of ``terms`` (``distinct``: their set), each distinct term hashed once per process."""
    if len(_KEYS) + len(distinct) > _KEYS_LIMIT:
        _KEYS.clear()
    for term in distinct.difference(_KEYS):
        _KEYS[term] = term_key(term)
    return np.fromiter(map(_KEYS.__getitem__, terms), np.uint64, count=len(terms))


@dataclass(frozen=True)
class NewFile:
    """One file's content in the segment's own form. It is made per file (``encode_file``, in a worker
    process when there are many files) so that writing a segment only concatenates arrays, and so that
    a worker sends back a few buffers instead of thousands of small objects."""

    rel: str
    n: int  # chunks
    blob: bytes  # the chunks, as ``chunks.bin`` stores them
    keys: np.ndarray  # uint64: the key of each (chunk, term) posting, chunk by chunk
    tfs: np.ndarray  # int64: its count
    per_chunk: np.ndarray  # int64 (n,): postings of each chunk
    lengths: np.ndarray  # float32 (n,): BM25 length (side-field terms excluded)
    marks: np.ndarray  # uint8 (n,): ``chunks.marks`` bits
    dkeys: np.ndarray  # uint64: the key of each symbol a chunk defines (lower-cased)
    ddocs: np.ndarray  # int64: the chunk (within the file) defining it
    vectors: np.ndarray  # float32 (n, dims)


def encode_file(
    rel: str,
    chunks: Sequence[Chunk],
    terms: Sequence[tuple[Sequence[str], Sequence[int], int]],
    vectors: np.ndarray,
    marks: Sequence[int],
) -> NewFile:
    """A file's chunks, their (terms, counts, BM25 length) and their vectors in the form ``write``
    concatenates. The length is the bag's own (its side-field terms have no share in it): finding them
    here by their mark, posting by posting, was a third of this function's time in a build.

    Works on the file's postings at once (each distinct term hashed once): a posting-at-a-time loop was a
    seventh of a small repository's build."""
    n = len(chunks)
    if len(terms) != n:
        raise ValueError(f"{rel}: {n} chunks but {len(terms)} term bags")
    words = list(chain.from_iterable(w for w, _, _ in terms))
    per_chunk = np.fromiter((len(w) for w, _, _ in terms), np.int64, count=n)
    tfs = np.fromiter(chain.from_iterable(c for _, c, _ in terms), np.int64, count=len(words))
    if len(tfs) != len(words):
        raise ValueError(f"{rel}: term bags whose counts do not match their terms")
    if len(marks) != n:
        raise ValueError(f"{rel}: {n} chunks but {len(marks)} marks")
    keys = _keys(words, set(words))
    lengths = np.fromiter((length for _, _, length in terms), np.float32, count=n)
    symbols = [sym.lower() for c in chunks for sym in c.names]  # one entry per name, as the table had
    ddocs = np.repeat(np.arange(n, dtype=np.int64), [len(c.names) for c in chunks])
    return NewFile(
        rel,
        n,
        encode_chunks(chunks),
        keys,
        tfs,
        per_chunk,
        lengths,
        np.asarray(marks, np.uint8),
        _keys(symbols, set(symbols)),
        ddocs,
        np.asarray(vectors, np.float32),
    )


@dataclass(frozen=True)
class Placed:
    """Where a written file's chunks sit in its segment."""

    rel: str
    first: int
    n: int
    blob_off: int
    blob_len: int


def encode_chunks(chunks: Sequence[Chunk]) -> bytes:
    """Level 1: over the chunks of flask, tokio and gin it compressed 2.5x faster than level 6 (0.047
    against 0.119 s, about 2% of their builds' CPU) for 16% more bytes (1.33 against 1.15 MB); the
    kernel's chunks.bin is a fifth of its index."""
    rows = [[c.start_line, c.end_line, c.content, c.language, list(c.symbols), c.kind, list(c.binds)] for c in chunks]
    return zlib.compress(json.dumps(rows, ensure_ascii=True, separators=(",", ":")).encode("ascii"), 1)


def decode_chunks(rel: str, blob: bytes) -> list[Chunk]:
    try:
        rows = json.loads(zlib.decompress(blob))
        return [
            Chunk(rel, int(s), int(e), str(t), str(lang), tuple(sym), str(kind), tuple(binds))
            for s, e, t, lang, sym, kind, binds in rows
        ]
    except (zlib.error, ValueError, TypeError) as exc:
        raise CacheError(f"corrupt chunk data for {rel} ({type(exc).__name__})") from None


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _hasher() -> hashlib.blake2b:
    """The digest a segment's sums record: the writer (``persist``, ``pack``) and ``verify`` must agree."""
    return hashlib.blake2b(digest_size=16)


def _digest_file(path: Path) -> str:
    h = _hasher()
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
    n = 0
    off = 0
    for f in files:
        placed.append(Placed(f.rel, n, f.n, off, len(f.blob)))
        off += len(f.blob)
        n += f.n
    if n > MAX_CHUNKS:
        raise ValueError(f"a segment holds at most {MAX_CHUNKS} chunks, got {n}")

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    per_chunk = cat([f.per_chunk for f in files], np.int64)
    p_docs = np.repeat(np.arange(n, dtype=np.int64), per_chunk)
    d_docs = cat([f.ddocs + p.first for f, p in zip(files, placed, strict=True)], np.int64)
    vectors = [f.vectors for f in files if f.n]
    name, sums = persist(
        folder,
        vectors=np.concatenate(vectors) if vectors else np.zeros((0, dims), np.float32),
        lengths=cat([f.lengths for f in files], np.float32),
        marks=cat([f.marks for f in files], np.uint8),
        postings=(cat([f.keys for f in files], np.uint64), p_docs, cat([f.tfs for f in files], np.int64)),
        defs=(cat([f.dkeys for f in files], np.uint64), d_docs),
        blobs=[f.blob for f in files],
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


def head_dims(codes: np.ndarray) -> np.ndarray:
    """The half of the columns along which ``codes`` vary most, ascending: where a dot product with a
    query takes most of its value (for the bundled model, whose dimensions come out of a PCA, nearly
    the first half; judged per segment so any model's codes get theirs)."""
    width = codes.shape[1] // 2
    if not len(codes) or not width:
        return np.zeros(0, np.uint16)
    spread = codes[::HEAD_SAMPLE].astype(np.float32).var(axis=0)
    return np.sort(np.argsort(-spread, kind="stable")[:width]).astype(np.uint16)


def persist(
    folder: Path,
    *,
    vectors: np.ndarray,
    lengths: np.ndarray,
    marks: np.ndarray,
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
        chunks_digest = _hasher()
        with open(tmp / "chunks.bin", "wb") as fh:
            for blob in blobs:
                fh.write(blob)
                chunks_digest.update(blob)
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
            "marks": marks.astype(np.uint8),
            "keys": keys,
            "offsets": offsets,
            "docs": docs,
            "tfs": tfs,
            "dkeys": d_keys[dorder].astype(np.uint64),
            "dchunks": d_docs[dorder].astype(np.uint16),
        }
        if compact:
            hdims = head_dims(codes)
            arrays["hdims"] = hdims
            arrays["head"] = codes[:, hdims.astype(np.intp)]  # a copy; pack writes it contiguous
        # each file's digest is taken as it is written, not by reading it back
        digests = {"arrays.bin": pack(tmp / "arrays.bin", arrays), "chunks.bin": chunks_digest.hexdigest()}
        for fname in FILES:
            _fsync_file(tmp / fname)
        sums: dict[str, list[object]] = {f: [(tmp / f).stat().st_size, digests[f]] for f in FILES}
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


def pack(path: Path, arrays: dict[str, np.ndarray]) -> str:
    """Write ``arrays`` to one file: magic, header length (8 bytes), JSON header, then each array's bytes
    (C order) at a 64-byte boundary. Returns the file's digest (``_digest_file``'s), taken as it is written."""
    parts = {k: np.ascontiguousarray(a) for k, a in arrays.items()}

    def header_for(offsets: dict[str, int]) -> bytes:
        return json.dumps({k: [a.dtype.str, list(a.shape), offsets[k]] for k, a in parts.items()}).encode()

    # The header's length sets the offsets, which set its length: reserve room for the widest offsets and
    # pad the header with spaces to it (JSON ignores them), so one pass fits whatever the sizes
    reserved = len(header_for(dict.fromkeys(parts, 10**15)))
    at = _aligned(len(_MAGIC) + 8 + reserved)
    offsets: dict[str, int] = {}
    for k, a in parts.items():
        offsets[k] = at
        at = _aligned(at + a.nbytes)
    header = header_for(offsets).ljust(reserved)
    digest = _hasher()
    with open(path, "wb") as fh:
        for data in _packed(_MAGIC + len(header).to_bytes(8, "little") + header, parts, offsets):
            fh.write(data)
            digest.update(data)
    return digest.hexdigest()


def _packed(head: bytes, parts: dict[str, np.ndarray], offsets: dict[str, int]) -> Iterator[bytes | memoryview]:
    """The bytes of a ``pack`` file in order: the head, then each array after its padding."""
    yield head
    at = len(head)
    for k, a in parts.items():
        yield b"\0" * (offsets[k] - at)
        yield a.reshape(-1).view(np.uint8).data
        at = offsets[k] + a.nbytes


# Arrays a segment reads whole on opening (or in every scan) and that are a few bytes a chunk: read into memory
# with one pread each, not through the map. A fault in a map reads the file around it (8 MB here: the
# disk's read_ahead_kb), so the header, these arrays and one offset, touched through the map, read nearly
# every byte of every segment: 882 MB of the kernel's index on a cold page cache before its first search.
READ_WHOLE = ("vscale", "lengths", "marks", "hdims")


def _layout(fd: int, size: int) -> dict[str, tuple[np.dtype, tuple[int, ...], int, int]]:
    """name -> (dtype, shape, file offset, element count) from a ``pack`` file's header, read with pread."""
    start = len(_MAGIC) + 8
    if size < start:
        raise ValueError("truncated")
    head = os.pread(fd, start, 0)
    if head[: len(_MAGIC)] != _MAGIC:
        raise ValueError("not a segment's arrays")
    length = int.from_bytes(head[len(_MAGIC) : start], "little")
    if start + length > size:
        raise ValueError("truncated header")
    out = {}
    for k, (dtype, shape, offset) in json.loads(os.pread(fd, length, start)).items():
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if offset + count * dt.itemsize > size:
            raise ValueError(f"{k}: truncated")
        out[k] = (dt, tuple(shape), int(offset), count)
    return out


@dataclass(frozen=True)
class Packed:
    """A ``pack`` file opened: its arrays (views of one map, or read into memory), and the last element of
    the (integer) arrays asked for, read with pread."""

    arrays: dict[str, np.ndarray]
    last: dict[str, int]
    mapping: mmap.mmap | None = None  # the map the mapped arrays view
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # array -> (file offset, bytes)


def open_packed(path: Path, *, read: Collection[str] = (), last: Collection[str] = ()) -> Packed:
    """Open a ``pack`` file: arrays named in ``read`` are read into memory (still read-only), the others
    mapped; the header, and the last element of each array named in ``last`` (one that has any), are read
    with pread, not through the map (see ``READ_WHOLE``)."""
    with open(path, "rb") as fh:
        fd = fh.fileno()
        layout = _layout(fd, os.fstat(fd).st_size)
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        out: dict[str, np.ndarray] = {}
        ends: dict[str, int] = {}
        spans = {k: (offset, count * dt.itemsize) for k, (dt, _shape, offset, count) in layout.items()}
        for k in read:  # all in flight at once, exactly these bytes (a read's own read-ahead reads more)
            if k in spans:
                _will_read(fd, *spans[k])
        for k, (dt, shape, offset, count) in layout.items():
            if k in read:
                raw = os.pread(fd, count * dt.itemsize, offset)
                if len(raw) != count * dt.itemsize:
                    raise ValueError(f"{k}: truncated")
                out[k] = np.frombuffer(raw, dtype=dt, count=count).reshape(shape)
            else:
                out[k] = np.frombuffer(mm, dtype=dt, count=count, offset=offset).reshape(shape)
            if k in last and count:
                raw = os.pread(fd, dt.itemsize, offset + (count - 1) * dt.itemsize)
                if len(raw) != dt.itemsize:
                    raise ValueError(f"{k}: truncated")
                ends[k] = int(np.frombuffer(raw, dtype=dt)[0])
    return Packed(out, ends, mm, spans)


def _will_read(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to read a file's range now, without waiting for it (where it can be asked)."""
    if length > 0 and hasattr(os, "posix_fadvise"):
        try:
            os.posix_fadvise(fd, offset, length, os.POSIX_FADV_WILLNEED)
        except OSError:
            pass  # advice only


def unpack(path: Path, *, read: Collection[str] = ()) -> dict[str, np.ndarray]:
    """The arrays of a ``pack`` file (``open_packed``)."""
    return open_packed(path, read=read).arrays


def _aligned(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def verify(folder: Path, sums: dict[str, list[object]], *, full: bool, chunks: int | None = None) -> str | None:
    """Why the segment does not match what the manifest recorded (None when it does). ``full``: every byte
    read against its checksum, and (given the segment's count of ``chunks``) every chunk number its
    postings and names hold checked to be one of its chunks."""
    if not isinstance(sums, dict):
        return "its sums are not recorded"
    for fname in FILES:
        path = folder / fname
        want = sums.get(fname)
        if want is None:
            return f"{fname}: not recorded"
        try:
            size = path.stat().st_size
        except OSError as exc:
            if not gone(exc):
                raise
            return f"{fname}: missing"
        if size != want[0]:
            return f"{fname}: {size} bytes, expected {want[0]}"
        if full and _digest_file(path) != want[1]:
            return f"{fname}: checksum mismatch"
    if full and chunks is not None:
        try:
            arrays = unpack(folder / "arrays.bin")
        except (ValueError, TypeError, KeyError) as exc:
            return f"arrays.bin: unreadable ({exc})"
        except OSError as exc:
            if not gone(exc):
                raise
            return f"arrays.bin: unreadable ({exc})"
        return chunk_numbers_past(arrays, chunks)
    return None


_GONE = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)


def gone(exc: OSError) -> bool:
    """Whether a segment's file is not there as a file (missing, or a folder in its place): damage, its
    files redone. Any other failure (no permission, too many open files, an I/O error) says nothing of
    the segment, which is kept."""
    return exc.errno in _GONE


def chunk_numbers_past(arrays: dict[str, np.ndarray], n: int) -> str | None:
    """Why the chunk numbers of a segment of ``n`` chunks (its postings' and its names') are not all among
    its chunks, or None."""
    for name in ("docs", "dchunks"):
        got = arrays.get(name)
        if got is None:
            return f"no {name} array"
        if len(got) and int(got.max()) >= n:
            return f"{name} name chunk {int(got.max())} of a segment of {n}"
    return None


# A search's reads of a large store's segments (``Segment(lean=True)``, the int8 ones), by what they touch:
# the head (whole, every query) and the picked rows of the codes, asked for before they are read
# (``prefetch``, ``prefetch_rows``), every segment at once; the postings and names (a binary search, then a
# slice per term): the map reads only the pages touched (``MADV_RANDOM``), the keys and names asked for
# whole and a term's long slices before they are read (``slices``). See ``store/pages.py``.
# Reads that want whole arrays (a merge, the float32 copies of a small store) open segments as they were.
_LEAN = ("keys", "offsets", "docs", "tfs", "dkeys", "dchunks")


class Segment:
    """A segment mapped read-only; arrays are memory maps, so opening costs a few header reads.

    ``lean``: a search's segment; when its codes are int8 (a large store), pages are read as it asks
    (see ``_LEAN``)."""

    def __init__(self, folder: Path, n: int, *, lean: bool = True) -> None:
        self.folder = folder
        self.name = folder.name
        self.n = n
        self._checked: set[int] = set()  # terms whose postings were read and checked (``slices``)
        try:
            # Plain ndarray views of one map: the same pages, without np.memmap's per-slice Python hooks,
            # which cost more than the lookups themselves in a search's few hundred postings reads.
            packed = open_packed(folder / "arrays.bin", read=READ_WHOLE, last=("offsets",))
            arr = packed.arrays
            missing = [a for a in ARRAYS if a not in arr]
            if missing:
                raise ValueError(f"no {missing[0]} array")
            ends = packed.last.get("offsets")
            with open(folder / "chunks.bin", "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                self._blob: mmap.mmap | bytes = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as exc:
            if not gone(exc):  # the folder's fault, not the segment's: it is kept, and one line says why
                raise CacheIOError(f"could not read the index in {folder.parent}: {exc.strerror or exc}") from None
            raise CacheError(f"segment {folder.name} unreadable ({exc})", folder) from None
        except (ValueError, TypeError, KeyError) as exc:
            raise CacheError(f"segment {folder.name} unreadable ({exc})", folder) from None
        self.vectors: np.ndarray = arr["vectors"]  # float16, or int8 codes in a compact segment
        self.vscale: np.ndarray = arr["vscale"]
        self.compact = self.vectors.dtype == np.int8
        self.lengths: np.ndarray = arr["lengths"]
        self.marks: np.ndarray = arr["marks"]
        self.keys: np.ndarray = arr["keys"]
        self.offsets: np.ndarray = arr["offsets"]
        self.docs: np.ndarray = arr["docs"]
        self.tfs: np.ndarray = arr["tfs"]
        self.dkeys: np.ndarray = arr["dkeys"]
        self.dchunks: np.ndarray = arr["dchunks"]
        self._spans = packed.spans
        self._pages = MapPages(packed.mapping) if packed.mapping is not None else None
        self.lean = (
            lean
            and self.compact
            and self._pages is not None
            and self._pages.advise(getattr(mmap, "MADV_RANDOM", None), (self._spans.get(k, (0, 0)) for k in _LEAN))
        )
        self.hdims: np.ndarray | None = arr.get("hdims")  # compact segments written since the head exists
        self.head: np.ndarray | None = arr.get("head")
        if (self.head is None) != (self.hdims is None) or (
            self.head is not None
            and self.hdims is not None
            and (
                self.head.shape != (n, len(self.hdims))
                or (len(self.hdims) and int(self.hdims.max()) >= self.vectors.shape[1])
            )
        ):
            raise CacheError(f"segment {folder.name} has an inconsistent head", folder)
        if (
            self.vectors.shape[0] != n
            or self.vscale.shape[0] != n
            or self.lengths.shape[0] != n
            or self.marks.shape[0] != n
            or len(self.offsets) != len(self.keys) + 1
            or len(self.docs) != len(self.tfs)
            or (ends is not None and ends != len(self.docs))
            or len(self.dkeys) != len(self.dchunks)
        ):
            raise CacheError(f"segment {folder.name} is inconsistent", folder)

    def prefetch(self, name: str) -> None:
        """Ask for a whole array now, in a lean segment (a search about to read all of it)."""
        if self.lean and self._pages is not None:
            self._pages.ask(*self._spans.get(name, (0, 0)))

    def prefetch_rows(self, name: str, rows: np.ndarray) -> None:
        """Ask for these rows of a 2-D array now, in a lean segment (the second pass's picked codes)."""
        if self.lean and self._pages is not None and len(rows):
            row = getattr(self, name).strides[0]
            self._pages.ask_rows(self._spans[name], np.asarray(rows, np.int64) * row, row)

    def floats(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Rows lo:hi as float32 vectors."""
        rows = np.asarray(self.vectors[lo:hi], np.float32)
        return rows * self.vscale[lo:hi, None] if self.compact else rows

    def postings(self, keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """(local chunk ids, term counts) of each key, or None where the segment lacks it: one binary
        search for all of a query's terms."""
        return self.slices(self.find(keys))

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Where each key sits in ``keys``, or -1 where the segment lacks it."""
        n = len(self.keys)
        pos = self.keys.searchsorted(keys)
        found = np.where(pos < n, pos, 0)
        hit = (pos < n) & (self.keys[found] == keys) if n else np.zeros(len(keys), bool)
        return np.where(hit, pos, -1)

    def slices(self, at: np.ndarray) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """``postings`` of the keys ``find`` placed; in a lean segment every long slice is asked for
        before any is read."""
        runs = [None if i < 0 else (int(self.offsets[i]), int(self.offsets[i + 1])) for i in at.tolist()]
        if self.lean and self._pages is not None:
            found = [run for run in runs if run is not None]
            for name in ("docs", "tfs"):
                self._pages.ask_long_runs(self._spans[name][0], getattr(self, name).itemsize, found)
        out = [None if run is None else (self.docs[run[0] : run[1]], self.tfs[run[0] : run[1]]) for run in runs]
        checked = self._checked
        for i, got in zip(at.tolist(), out, strict=True):
            if got is not None and i not in checked:
                self._check_ids(got[0], "postings")  # a segment never changes: once per term is enough
                checked.add(i)
        return out

    def defining(self, key: int) -> np.ndarray:
        k = np.uint64(key)
        lo = int(np.searchsorted(self.dkeys, k, side="left"))
        hi = int(np.searchsorted(self.dkeys, k, side="right"))
        return self._check_ids(self.dchunks[lo:hi], "names")

    def _check_ids(self, ids: np.ndarray, what: str) -> np.ndarray:
        """``ids``, once each is one of this segment's chunks: damaged postings (a bit flipped on disk) name
        chunks past the end, which failed a search with an IndexError, or scored chunks that are not there.
        Checked as read, not on opening: a large store's search reads a few pages of its postings."""
        if len(ids) and int(ids.max()) >= self.n:
            raise CacheError(f"segment {self.name}: its {what} name chunk {int(ids.max())} of {self.n}", self.folder)
        return ids

    def blob(self, off: int, length: int) -> bytes:
        data = self._blob[off : off + length]
        if len(data) != length:
            raise CacheError(f"segment {self.name}: chunk data truncated")
        return bytes(data)
