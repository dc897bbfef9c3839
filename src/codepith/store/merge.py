"""Merging segments when they pile up: many small ones (each incremental refresh writes one) or ones
whose chunks are mostly dead (their files were edited or deleted since).

A merge copies the live chunks' stored bytes (compressed chunk text, vectors, postings) into one new
segment without re-reading or re-embedding any source file, and repoints the files' rows in the same
transaction that retires the old segments.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from typing import TYPE_CHECKING

import numpy as np

from codepith.store import segment as seg
from codepith.store.layout import CacheError, ManifestError
from codepith.store.manifest import expect_rows

if TYPE_CHECKING:
    from codepith.store.manifest import Writer

SMALL = 8192  # live chunks under which a segment counts as small
MAX_SMALL = 8  # small segments tolerated before they are merged
DEAD = 0.5  # share of dead chunks that makes a segment worth rewriting


def merge_if_needed(w: Writer) -> bool:
    rows = w.store._query("SELECT name, chunks FROM segments")
    live = dict(w.store._query("SELECT segment, SUM(n) FROM files WHERE segment IS NOT NULL GROUP BY segment"))
    empty = [name for name, _n in rows if not live.get(name)]
    if empty:

        def drop(con: sqlite3.Connection) -> None:
            cur = con.executemany("DELETE FROM segments WHERE name = ?", [(e,) for e in empty])
            expect_rows(cur, len(empty), "segments", w.folder)

        w._tx(drop)
    sizes = {name: n for name, n in rows if live.get(name)}
    small = [s for s in sizes if live[s] < SMALL]
    dead = [s for s in sizes if live[s] < (1 - DEAD) * sizes[s]]
    pick = sorted(set(dead) | (set(small) if len(small) >= MAX_SMALL else set()), key=lambda s: live[s])
    if not pick:
        return bool(empty)
    groups: list[list[str]] = [[]]
    total = 0
    for s in pick:
        if total + live[s] > seg.MAX_CHUNKS and groups[-1]:
            groups.append([])
            total = 0
        groups[-1].append(s)
        total += live[s]
    for group in groups:
        if len(group) > 1 or group[0] in dead:
            merge(w, group)
    return True


def merge(w: Writer, names: list[str]) -> None:
    """Rewrite the live chunks of these segments as one segment."""
    folder = w.folder
    segments = {
        name: seg.Segment(folder / name, n, lean=False)  # read whole, in order: the pages around each read help
        for name, n in w.store._query(
            f"SELECT name, chunks FROM segments WHERE name IN ({','.join('?' * len(names))})", names
        )
    }
    files = w.store._query(
        f"SELECT rel, segment, first, n, blob_off, blob_len FROM files WHERE segment IN ({','.join('?' * len(names))}) "
        "ORDER BY rel",
        names,
    )
    for s in segments.values():  # every chunk number a merge maps must be one of its segment's chunks
        why = seg.chunk_numbers_past({"docs": s.docs, "dchunks": s.dchunks}, s.n)
        if why:
            raise CacheError(f"segment {s.name}: {why}", s.folder)
    for _rel, name, first, count, _off, _len in files:
        if name not in segments or first + count > segments[name].n:
            raise ManifestError("a file's chunks lie outside its segment", folder)
    newid = {name: np.full(s.n, -1, np.int64) for name, s in segments.items()}
    blobs: list[bytes] = []
    vectors: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    marks: list[np.ndarray] = []
    moved = []
    n = off = 0
    for rel, name, first, count, b_off, b_len in files:
        s = segments[name]
        newid[name][first : first + count] = np.arange(n, n + count)
        blob = s.blob(b_off, b_len)
        blobs.append(blob)
        vectors.append(s.floats(first, first + count))
        lengths.append(np.asarray(s.lengths[first : first + count]))
        marks.append(np.asarray(s.marks[first : first + count]))
        moved.append((n, off, rel))
        n += count
        off += len(blob)
    keys, docs, tfs, dkeys, ddocs = [], [], [], [], []
    for name, s in segments.items():
        ids = newid[name]
        rep = np.repeat(np.asarray(s.keys), np.diff(np.asarray(s.offsets)))
        d = ids[np.asarray(s.docs, np.int64)]
        keep = d >= 0
        keys.append(rep[keep])
        docs.append(d[keep])
        tfs.append(np.asarray(s.tfs, np.int64)[keep])
        dd = ids[np.asarray(s.dchunks, np.int64)]
        dkeep = dd >= 0
        dkeys.append(np.asarray(s.dkeys)[dkeep])
        ddocs.append(dd[dkeep])
    name, sums = seg.persist(
        folder,
        vectors=np.concatenate(vectors) if vectors else np.zeros((0, w.store.dims), np.float32),
        lengths=np.concatenate(lengths) if lengths else np.zeros(0, np.float32),
        marks=np.concatenate(marks) if marks else np.zeros(0, np.uint8),
        postings=(np.concatenate(keys).astype(np.uint64), np.concatenate(docs), np.concatenate(tfs)),
        defs=(np.concatenate(dkeys).astype(np.uint64), np.concatenate(ddocs)),
        blobs=blobs,
        compact=w.compact_vectors or any(s.compact for s in segments.values()),
    )

    def apply(con: sqlite3.Connection) -> None:
        con.execute("INSERT INTO segments VALUES (?, ?, ?)", (name, n, json.dumps(sums)))
        cur = con.executemany(
            "UPDATE files SET segment = ?, first = ?, blob_off = ? WHERE rel = ?",
            [(name, first, b_off, rel) for first, b_off, rel in moved],
        )
        expect_rows(cur, len(moved), "files merged", folder)
        cur = con.executemany("DELETE FROM segments WHERE name = ?", [(x,) for x in names])
        expect_rows(cur, len(names), "segments merged", folder)

    try:
        w._tx(apply)
    except BaseException:
        shutil.rmtree(folder / name, ignore_errors=True)
        raise
