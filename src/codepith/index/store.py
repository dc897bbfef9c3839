"""The on-disk index cache: the one place that reads and writes cached indexes.

Layout: ``<cache>/indexes/<key>/index.bin`` plus ``source.json`` (what it indexes, for `codepith cache`).
``index.bin`` is a magic line, a format version, a checksum and a pickled payload of plain values; the
checksum is verified before unpickling, so a truncated or corrupt file is detected and rebuilt, and the
payload is only ever read from the user's own cache folder. Writes go to a temporary file then rename.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.files.source import IgnoreHit, SkipReport
from codepith.index.lexical import Postings, Vocabulary
from codepith.index.repo import FileRecord, RepoData

FORMAT_VERSION = 2
MAGIC = b"CODEPITH-INDEX\n"


def cache_root() -> Path:
    """``CODEPITH_CACHE_DIR`` if set, else the platform's user cache folder."""
    env = os.environ.get("CODEPITH_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("codepith"))


def index_key(root: str, content: str, model_digest: str) -> str:
    raw = json.dumps([root, content, model_digest, FORMAT_VERSION]).encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()[:20]


def index_dir(root: str, content: str, model_digest: str, cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "indexes" / index_key(root, content, model_digest)


class CacheError(Exception):
    """A cached index that cannot be used (corrupt, truncated, foreign version); callers rebuild."""


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _to_payload(data: RepoData) -> dict[str, Any]:
    files = []
    vectors = []
    for rel in sorted(data.files):
        rec = data.files[rel]
        files.append(
            (
                rec.rel_path,
                rec.size,
                rec.mtime_ns,
                rec.digest,
                rec.skip,
                rec.chars,
                rec.language,
                rec.racy,
                [(c.start_line, c.end_line, c.content, c.language, c.symbols, c.kind) for c in rec.chunks],
                (rec.postings.ids, rec.postings.tfs, rec.postings.per_chunk),
            )
        )
        vectors.append(rec.vectors.astype(np.float32, copy=False))
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, data.dims), dtype=np.float32)
    return {
        "format": FORMAT_VERSION,
        "root": data.root,
        "content": data.content,
        "model_name": data.model_name,
        "model_digest": data.model_digest,
        "dims": data.dims,
        "refreshed_at": data.refreshed_at,
        "walk_skipped": (dict(data.walk_skipped.counts), {k: list(v) for k, v in data.walk_skipped.examples.items()}),
        "vocab": list(data.vocab.terms),
        # what the next process needs to check freshness without walking (see build.quick_check)
        "fresh": (data.watch, data.watch_key, data.skipped_paths, data.linked, data.pruned),
        "files": files,
        "vectors": matrix.tobytes(),
        "n_vectors": int(matrix.shape[0]),
        # a key of its own rather than a field of each file, so older caches still load
        "fallbacks": {rel: rec.fallback for rel, rec in data.files.items() if rec.fallback},
        "walk_hidden": [(h.source, h.line, h.rule, h.count, list(h.examples)) for h in data.walk_hidden],
    }


def _from_payload(p: dict[str, Any]) -> RepoData:
    if p.get("format") != FORMAT_VERSION:
        raise CacheError(f"cache format {p.get('format')!r}, expected {FORMAT_VERSION}")
    dims = int(p["dims"])
    matrix = np.frombuffer(p["vectors"], dtype=np.float32).reshape(int(p["n_vectors"]), dims)
    skipped = SkipReport()
    skipped.counts, skipped.examples = p["walk_skipped"]
    data = RepoData(
        root=p["root"],
        content=p["content"],
        model_name=p["model_name"],
        model_digest=p["model_digest"],
        dims=dims,
        vocab=Vocabulary(p["vocab"]),
        walk_skipped=skipped,
        refreshed_at=p["refreshed_at"],
    )
    fresh = p.get("fresh")
    if fresh is not None:
        data.watch, data.watch_key, data.skipped_paths, data.linked, data.pruned = fresh
    row = 0
    n_terms = len(data.vocab)
    for rel, size, mtime_ns, digest, skip, chars, language, racy, chunks, (ids, tfs, per_chunk) in p["files"]:
        if len(per_chunk) != len(chunks) or (len(ids) and int(ids.max()) >= n_terms):
            raise CacheError(f"inconsistent term data for {rel}")
        n = len(chunks)
        data.files[rel] = FileRecord(
            rel_path=rel,
            size=size,
            mtime_ns=mtime_ns,
            digest=digest,
            chunks=[Chunk(rel, s, e, text, lang, tuple(sym), kind) for s, e, text, lang, sym, kind in chunks],
            postings=Postings(ids, tfs, per_chunk),
            vectors=matrix[row : row + n],
            skip=skip,
            chars=chars,
            language=language,
            racy=racy,
        )
        row += n
    data.walk_hidden = tuple(IgnoreHit(s, n, r, c, tuple(e)) for s, n, r, c, e in p.get("walk_hidden", []))
    for rel, reason in p.get("fallbacks", {}).items():
        if rel in data.files:
            data.files[rel].fallback = reason
    if row != matrix.shape[0]:
        raise CacheError("vector count does not match chunk count")
    return data


@dataclass(frozen=True)
class Snapshot:
    """Everything a save writes, taken at one moment, so it can be written later (or on another
    thread) while the live index keeps changing."""

    folder: Path
    payload: dict[str, Any]
    source: dict[str, Any]


def snapshot(data: RepoData, cache: Path | None = None) -> Snapshot:
    source = {
        "root": data.root,
        "content": data.content,
        "model": data.model_name,
        "model_digest": data.model_digest,
        "files": sum(1 for r in data.files.values() if not r.skip),
        "chunks": data.n_chunks,
        "updated": time.time(),
        "format": FORMAT_VERSION,
    }
    return Snapshot(index_dir(data.root, data.content, data.model_digest, cache), _to_payload(data), source)


def write(snap: Snapshot) -> Path:
    """Write atomically; a reader sees the old index or the new one, never a mix."""
    payload = pickle.dumps(snap.payload, protocol=pickle.HIGHEST_PROTOCOL)
    checksum = hashlib.blake2b(payload, digest_size=16).hexdigest().encode()
    header = MAGIC + str(FORMAT_VERSION).encode() + b"\n" + checksum + b"\n"
    _atomic_write(snap.folder / "index.bin", header + payload)
    _atomic_write(snap.folder / "source.json", json.dumps(snap.source, indent=1).encode("utf-8", "surrogateescape"))
    return snap.folder


def save(data: RepoData, cache: Path | None = None) -> Path:
    return write(snapshot(data, cache))


def load(root: str, content: str, model_digest: str, cache: Path | None = None) -> RepoData | None:
    """The cached index, None when there is none; CacheError when it exists but cannot be used."""
    path = index_dir(root, content, model_digest, cache) / "index.bin"
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheError(f"cannot read {path}: {exc.strerror}") from None
    if not blob.startswith(MAGIC):
        raise CacheError("not a codepith index file")
    rest = blob[len(MAGIC) :]
    try:
        version, checksum, payload = rest.split(b"\n", 2)
    except ValueError:
        raise CacheError("truncated index file") from None
    if version != str(FORMAT_VERSION).encode():
        raise CacheError(f"index format {version.decode(errors='replace')}, expected {FORMAT_VERSION}")
    if hashlib.blake2b(payload, digest_size=16).hexdigest().encode() != checksum:
        raise CacheError("checksum mismatch (truncated or corrupt)")
    try:
        data = _from_payload(pickle.loads(payload))
    except CacheError:
        raise
    except Exception as exc:  # a payload that passed the checksum but is not ours
        raise CacheError(f"unreadable payload ({type(exc).__name__})") from None
    if data.root != root or data.content != content or data.model_digest != model_digest:
        raise CacheError("index was built for another source or model")
    return data


@dataclass(frozen=True)
class CachedIndex:
    folder: Path
    root: str
    content: str
    model: str
    files: int
    chunks: int
    bytes: int
    updated: float

    @property
    def orphan(self) -> bool:
        return not Path(self.root).is_dir()


def _folder_bytes(folder: Path) -> int:
    total = 0
    for p in folder.iterdir():
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def list_cached(cache: Path | None = None) -> list[CachedIndex]:
    base = (cache or cache_root()) / "indexes"
    out: list[CachedIndex] = []
    try:
        folders = sorted(base.iterdir())
    except OSError:  # no cache yet, or a cache path that is a file or unreadable: nothing listed
        return out
    for folder in folders:
        if not folder.is_dir():
            continue
        try:
            src = json.loads((folder / "source.json").read_text("utf-8", "surrogateescape"))
            out.append(
                CachedIndex(
                    folder,
                    src["root"],
                    src["content"],
                    src["model"],
                    int(src["files"]),
                    int(src["chunks"]),
                    _folder_bytes(folder),
                    float(src["updated"]),
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            out.append(CachedIndex(folder, "?", "?", "?", 0, 0, _folder_bytes(folder), 0.0))
    return out


def remove(entry: CachedIndex) -> str | None:
    """Delete one cached index: None when it is gone, else why it (or part of it) is still there."""
    try:
        shutil.rmtree(entry.folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return "still there" if os.path.lexists(entry.folder) else None
