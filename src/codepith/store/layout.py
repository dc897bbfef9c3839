"""Where cached indexes live and how `codepith cache` / `codepith clear` list and remove them.

Layout: ``<cache>/indexes/<key>/`` holds ``manifest.sqlite`` (meta, segments, file table),
``source.json`` (what it indexes, for listings that must not open SQLite), ``build.lock`` and
``seg-*/`` folders (immutable segments).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from codepith.errors import CodepithError
from codepith.files import build_output

# 4: the file table's fallback column; freshness state in meta.
# 5: files whose parse has an ERROR root chunked by syntax when most of it is sound; float16
#    vectors without subnormals; a scale per vector (int8 codes in large repositories).
# 6: a split class's bare header line joins its first member before its doc comment joins them.
# 7: a side field of the words of each chunk's defined names (terms marked "=", outside BM25 lengths).
# 8: the piece holding a split definition's first line names the definition, as the comment pieces above do.
# 9: a segment's arrays in one file (arrays.bin), not one .npy each.
# 10: 'alias', 'bias', 'canvas', 'atlas', 'cosmos' are their own stems (their plurals' stem), not 'alia'...
# 11: module-level values a chunk binds (`g = LocalProxy(...)`) among its definitions (only ever on main).
# 12: ... in a field of their own (Chunk.binds): a chunk row has seven fields.
# 13: Kotlin, Swift and PHP module-level values bound too.
# 14: per-chunk marks (wiring, declaration, generated) judged at build time, in arrays.bin.
# 15: Objective-C chunked by syntax; a `.h` header parsed as Objective-C or C++ when it holds their syntax.
# 16: C++'s `class EXPORT_MACRO Name {...}` (read by tree-sitter-cpp as a function) chunked as a class.
# 17: punctuation marks left out of every embedding (model.loader.silent_ids): the vectors changed.
# 18: R, OCaml, Erlang and Solidity chunked by syntax (definitions, their names, members split).
# 19: a C/C++/Objective-C keyword is no definition's name (`__visible struct {...} x;` was a function
#     `struct`), and a file of more than 50,000 chunks is cut in widened line windows (it failed the build).
# 20: a long comment above a split definition cut in windows of 30 lines, not 60 (chunks.syntax.COMMENT_LINES).
FORMAT_VERSION = 20


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


CACHEDIR_TAG = build_output.CACHEDIR_TAG


def tag_cache_folder(folder: Path) -> None:
    """Mark a folder codepith fills alone (``indexes/``, ``repos/``) with a cache directory tag, so that a
    walk skips it as build output: codepith's own, when the cache lies inside a tree it indexes (its
    segments, ``source.json`` files and clones were listed, and in ``--content all`` indexed, each of its
    commits a change the next look applied: a new generation on every search of a watched index), and
    backup tools'. Never the cache root itself, which may hold what is not codepith's. Best effort: a
    folder that cannot take the file is used as it is."""
    build_output.tag_folder(folder)


class CacheError(Exception):
    """A cached index that cannot be used (corrupt, truncated, foreign version); callers rebuild.
    ``segment``: the segment folder that could not be read, when known, so that a repair redoes its
    files even though its bytes match their checksums (written by a build that encoded them otherwise)."""

    def __init__(self, message: str, segment: Path | None = None, *, index: Path | None = None) -> None:
        super().__init__(message)
        self.segment = segment
        # the index folder it was found in, when known (a segment's is the folder holding it)
        self.index = index if index is not None else (segment.parent if segment is not None else None)


class ManifestError(CacheError):
    """The manifest itself is damaged: SQLite finds it malformed or not a database, a value it holds cannot
    be read, or a commit found rows it had to change missing. Nothing in it can be trusted, so the index
    in ``index`` is emptied and built again (a lock or a permission error is a CacheIOError, never this)."""

    def __init__(self, message: str, index: Path) -> None:
        super().__init__(message, index=index)


class CacheIOError(CodepithError):
    """The cache folder failed, not the index in it: a full disk, a quota, a disk gone read-only or
    failing. Unlike CacheError nothing is rebuilt or removed (a full disk once made a sound index look
    unreadable, and it was deleted). A store commits whole or not at all, so callers keep the last
    commit and try again later, or index elsewhere when there is no commit to keep."""


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
    format: int | None = None  # the index format it was written in (None: unknown)
    finished: bool = True  # False: no generation completed yet (a first build stopped, or still running)

    @property
    def orphan(self) -> bool:
        return not Path(self.root).is_dir()

    @property
    def outdated(self) -> bool:
        """Written in another index format: this version never reads it (it builds its own beside it),
        so after an upgrade it is only disk space."""
        return self.format is not None and self.format != FORMAT_VERSION

    @property
    def stale(self) -> bool:
        """Nothing this version will read again: its source is gone, or it is in another format."""
        return self.orphan or self.outdated


def folder_bytes(folder: Path) -> int:
    """Bytes of the files below ``folder`` (links counted as themselves)."""
    total = 0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
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
                    folder_bytes(folder),
                    float(src["updated"]),
                    int(src["format"]) if isinstance(src.get("format"), int) else None,
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            out.append(_unfinished(folder))
    return out


def _unfinished(folder: Path) -> CachedIndex:
    """An index with no source.json: one whose first build has not completed (it was killed, which
    resume picks up, or it runs now). What it indexes is in its manifest; without one it is debris."""
    import sqlite3

    meta: dict[str, str] = {}
    manifest = folder / "manifest.sqlite"
    if manifest.is_file():
        try:
            con = sqlite3.connect(f"{manifest.as_uri()}?mode=ro", uri=True, timeout=1.0)
            try:
                meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            finally:
                con.close()
        except sqlite3.Error:
            meta = {}
    fmt = meta.get("format", "")
    return CachedIndex(
        folder,
        meta.get("root", "?"),
        meta.get("content", "?"),
        "?",
        0,
        0,
        folder_bytes(folder),
        0.0,
        int(fmt) if fmt.isdigit() else None,
        finished=False,
    )


def remove(entry: CachedIndex) -> str | None:
    """Delete one cached index: None when it is gone, else why it (or part of it) is still there."""
    return remove_folder(entry.folder)


def remove_folder(folder: Path) -> str | None:
    """Delete a folder of the cache (an index, a clone): None when it is gone, else why (part of) it stayed."""
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return "still there" if os.path.lexists(folder) else None
