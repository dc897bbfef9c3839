"""Issue 10: codepith's segment store against real engines, on the same chunks, terms and vectors.

For one codepith-indexed folder this takes every chunk's BM25 term bag (the 64-bit term keys and counts in
the segments' postings) and its stored vector (``codes * scale``) from codepith's own index, then loads the
same data into each system and measures build seconds, bytes on disk, peak RSS added (build; and open +
queries, in a fresh process), query latency and agreement with codepith's exact top 100:

- ``codepith``: codepith's store, rebuilt from that data with ``store.segment.persist`` and queried with
  codepith's own ``Corpus.bm25.scores`` / ``Corpus.dense`` (the reference scores);
- ``tantivy``: a text field of pre-tokenized terms (one base-36 token per distinct term key, repeated by
  its count), whitespace tokenizer, frequencies without positions, BM25 (k1 1.2, b 0.75 as codepith);
- ``qdrant-sparse``: qdrant-edge sparse vectors with the IDF modifier, document values the BM25 tf part;
- ``usearch``: HNSW, cosine, int8 or float16 as codepith stores the corpus;
- ``qdrant-dense``: qdrant-edge dense vectors, cosine, float16, HNSW (indexing forced on);
- ``usearch-ef512`` / ``qdrant-dense-ef512``: the same two graphs searched with a beam of 512.

Each system's build and its queries run in a subprocess of their own, so RSS is per system: the peak
above the process's RSS before the step, which for a build counts the prepared (memory-mapped) input
it reads. Latency: one call per query, after an untimed warm-up pass, over ``REPEAT`` timed passes,
including the top-100 selection (codepith) or fetching the 100 chunk ids (tantivy).
Needs ``pip install tantivy usearch qdrant-edge-py`` (a separate venv: see benchmarks/README.md).

    python benchmarks/engines.py /work/corpora/tokio --queries tokio --out results/engines-tokio.json
    CODEPITH_CACHE_DIR=/work/scale-final/cache python benchmarks/engines.py /work/scale-final/tree \\
        --queries all [--limit 200000] --out results/engines-kernel.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ANNOTATIONS = Path("/work/shared/bench/annotations")
SYSTEMS = ("codepith", "tantivy", "qdrant-sparse", "usearch", "usearch-ef512", "qdrant-dense", "qdrant-dense-ef512")
EF = 512  # the -ef512 systems: the same graph searched with a wider beam (no build of their own)
TOP = 100
REPEAT = 3  # timed passes over the queries (after one untimed warm-up pass)
K1, B = 1.2, 0.75


# -- measuring -----------------------------------------------------------------------------------------
def _status(field: str) -> int:
    """A /proc/self/status memory figure in bytes."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    """Start VmHWM afresh (Linux: writing 5 to clear_refs resets the peak RSS to the current RSS)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk (sparse and preallocated files count what they hold, not their length)."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


def top_set(scores: np.ndarray, k: int = TOP) -> np.ndarray:
    """Ids of the k best positive scores (fewer when fewer are positive)."""
    k = min(k, int(np.count_nonzero(scores > 0)))
    if k == 0:
        return np.empty(0, np.int64)
    return np.argpartition(-scores, k - 1)[:k].astype(np.int64)


class Reference:
    """One query's exact top 100 by codepith's scores, kept small: its size, and every chunk scoring at
    least its 100th score (so a different pick among equal scores is not counted as a miss)."""

    def __init__(self, scores: np.ndarray) -> None:
        ids = top_set(scores)
        self.ids = set(ids.tolist())
        self.size = len(ids)
        floor = float(scores[ids].min()) if self.size else 0.0
        self.good = set(np.flatnonzero(scores >= floor - 1e-6 * max(abs(floor), 1.0)).tolist()) if self.size else set()

    def overlap(self, got: Sequence[int]) -> float:
        """Share of the exact top 100 an engine's top 100 holds (tie-aware)."""
        if not self.size:
            return 1.0
        return sum(1 for i in got[: self.size] if i in self.good) / self.size


# -- preparing the shared data (parent process) ----------------------------------------------------------
def prepare(root: str, texts: Sequence[str], limit: int | None, work: Path) -> dict[str, Any]:
    """Write the first ``limit`` chunks' term bags (CSR over a vocabulary), vectors and the queries."""
    import codepith
    from codepith.search.query import parse_query
    from codepith.store.segment import term_key

    t0 = time.perf_counter()
    index = codepith.Index.from_path(root)
    corpus = index.corpus
    opened = time.perf_counter() - t0
    n = corpus.n if limit is None else min(limit, corpus.n)
    keys_l, docs_l, tfs_l, vec_l = [], [], [], []
    compact = False
    for part, pbase in zip(corpus.parts, corpus.phys_base, strict=False):
        for s, b in zip(part.view.segments, part.view.base[:-1], strict=False):
            logical = corpus.logical_of[pbase + int(b) + np.arange(s.n)]
            keep = (logical >= 0) & (logical < n)
            if not keep.any():
                continue
            compact = compact or s.compact
            counts = np.diff(np.asarray(s.offsets))
            pk = np.repeat(np.asarray(s.keys), counts)
            pd = logical[np.asarray(s.docs).astype(np.int64)]
            ok = (pd >= 0) & (pd < n)
            keys_l.append(pk[ok])
            docs_l.append(pd[ok])
            tfs_l.append(np.asarray(s.tfs)[ok].astype(np.int64))
            rows = np.flatnonzero(keep)
            vec_l.append((logical[rows], s.floats()[rows]))
    keys = np.concatenate(keys_l)
    docs = np.concatenate(docs_l)
    tfs = np.concatenate(tfs_l)
    vocab, term = np.unique(keys, return_inverse=True)
    order = np.lexsort((term, docs))
    docs, term, tfs = docs[order], term[order], tfs[order]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(docs, minlength=n), out=indptr[1:])
    vectors = np.zeros((n, corpus.dims), np.float32)
    for ids, rows in vec_l:
        vectors[ids] = rows
    q_terms: list[list[int]] = []
    for q in texts:
        term_ids: list[int] = []
        for t in parse_query(q).terms:
            i = int(np.searchsorted(vocab, np.uint64(term_key(t))))
            term_ids.append(i if i < len(vocab) and vocab[i] == np.uint64(term_key(t)) else -1)
        q_terms.append(term_ids)
    qvecs = np.stack([index.model.encode([q])[0] for q in texts]).astype(np.float32)
    work.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {
        "indptr": indptr,
        "term": term.astype(np.int64),
        "tfs": tfs,
        "vocab": vocab.astype(np.uint64),
        "vectors": vectors,
        "qvecs": qvecs,
    }
    for name, arr in arrays.items():
        np.save(work / f"{name}.npy", arr)
    meta = {"root": root, "n": n, "corpus_n": corpus.n, "dims": corpus.dims, "compact": compact}
    meta |= {"postings": len(term), "vocab": len(vocab), "queries": list(texts), "q_terms": q_terms}
    (work / "meta.json").write_text(json.dumps(meta))
    # the original index's exact scores, to check the rebuilt codepith store gives the same
    if limit is None or limit >= corpus.n:
        bm = [top_set(corpus.bm25.scores(parse_query(q).terms)).tolist() for q in texts]
        dn = [top_set(corpus.dense(qv) + 2.0).tolist() for qv in qvecs]
        (work / "original.json").write_text(json.dumps({"bm25": bm, "dense": dn}))
    index.close()
    return {"open_s": round(opened, 2), "prepare_s": round(time.perf_counter() - t0, 2)} | {
        k: meta[k] for k in ("n", "corpus_n", "dims", "compact", "postings", "vocab")
    }


class Data:
    """The prepared data, loaded in a system's own process."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.meta = json.loads((work / "meta.json").read_text())
        self.n: int = self.meta["n"]
        self.dims: int = self.meta["dims"]
        self.compact: bool = self.meta["compact"]
        self.q_terms: list[list[int]] = self.meta["q_terms"]

    def arr(self, name: str) -> np.ndarray:
        return np.load(self.work / f"{name}.npy", mmap_mode="r")

    def lengths(self) -> np.ndarray:
        tfs, indptr = self.arr("tfs"), self.arr("indptr")
        return np.add.reduceat(np.append(tfs, 0), indptr[:-1]) * (np.diff(indptr) > 0)

    def bags(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        indptr, term, tfs = self.arr("indptr"), np.asarray(self.arr("term")), np.asarray(self.arr("tfs"))
        for d in range(self.n):
            lo, hi = int(indptr[d]), int(indptr[d + 1])
            yield d, term[lo:hi], tfs[lo:hi]


def _token(i: int) -> str:
    return np.base_repr(i, 36).lower()


# -- the systems: build(data, folder) and open(data, folder) -> (bm25 or None, dense or None) --------------
Search = Callable[[int], list[int]]  # query number -> chunk ids, best first


def build_codepith(data: Data, folder: Path) -> None:
    from codepith.store import segment as seg

    indptr, term, tfs, vectors = data.arr("indptr"), data.arr("term"), data.arr("tfs"), data.arr("vectors")
    keys = np.asarray(data.arr("vocab"))[np.asarray(term)]
    lengths = data.lengths().astype(np.float32)
    segs = []
    for lo in range(0, data.n, seg.MAX_CHUNKS):
        hi = min(lo + seg.MAX_CHUNKS, data.n)
        a, b = int(indptr[lo]), int(indptr[hi])
        docs = np.repeat(np.arange(hi - lo, dtype=np.int64), np.diff(indptr[lo : hi + 1]))
        name, _ = seg.persist(
            folder,
            vectors=np.asarray(vectors[lo:hi]),
            lengths=lengths[lo:hi],
            marks=np.zeros(hi - lo, np.uint8),
            postings=(keys[a:b], docs, np.asarray(tfs[a:b])),
            defs=(np.zeros(0, np.uint64), np.zeros(0, np.int64)),
            blobs=[b""],
            compact=data.compact,
        )
        segs.append((name, hi - lo))
    (folder / "segments.json").write_text(json.dumps(segs))


class _Store:
    """What ``View`` reads from a manifest, for segments written by ``build_codepith`` (one pseudo-file each)."""

    def __init__(self, folder: Path, dims: int) -> None:
        from codepith.store.vectors import VectorCache

        self.folder, self.dims, self.vectors = folder, dims, VectorCache()
        self.segs = json.loads((folder / "segments.json").read_text())

    @contextmanager
    def snapshot(self) -> Iterator[tuple[dict[str, str], list[tuple[str, int, str]], list[tuple[Any, ...]]]]:
        files = [(f"{i:06d}", name, 0, n, 0, 0, 0) for i, (name, n) in enumerate(self.segs)]
        yield {"generation": "1", "complete": "1"}, [(name, n, "{}") for name, n in self.segs], files


def open_codepith(data: Data, folder: Path) -> tuple[Search, Search]:
    from codepith.index.corpus import Corpus, CorpusPart
    from codepith.store.view import View

    corpus = Corpus([CorpusPart(View(_Store(folder, data.dims)), "")], data.dims)  # type: ignore[arg-type]
    qvecs = np.asarray(data.arr("qvecs"))
    terms = query_terms(data)

    def bm25(q: int) -> list[int]:
        return _ranked(corpus.bm25.scores(terms[q]))

    def dense(q: int) -> list[int]:
        return _ranked(corpus.dense(qvecs[q]) + 2.0)

    return bm25, dense


def _ranked(scores: np.ndarray) -> list[int]:
    ids = top_set(scores)
    return ids[np.argsort(-scores[ids], kind="stable")].tolist()


def query_terms(data: Data) -> list[list[str]]:
    """Each query's BM25 terms, as codepith parses them (codepith hashes them itself)."""
    from codepith.search.query import parse_query

    return [list(parse_query(q).terms) for q in data.meta["queries"]]


def build_tantivy(data: Data, folder: Path) -> None:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("t", stored=False, tokenizer_name="whitespace", index_option="freq")
    sb.add_unsigned_field("id", stored=True, indexed=False)
    schema = sb.build()
    index = tantivy.Index(schema, path=str(folder))
    writer = index.writer(heap_size=512_000_000, num_threads=2)
    tokens = [_token(i) for i in range(int(data.meta["vocab"]))]
    for d, terms, counts in data.bags():
        text = " ".join(" ".join([tokens[t]] * int(c)) for t, c in zip(terms.tolist(), counts.tolist(), strict=True))
        doc = tantivy.Document()
        doc.add_text("t", text)
        doc.add_unsigned("id", d)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


def open_tantivy(data: Data, folder: Path) -> tuple[Search, None]:
    import tantivy

    index = tantivy.Index.open(str(folder))
    index.reload()
    searcher = index.searcher()
    schema = index.schema
    queries = [
        tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "t", _token(t))) for t in terms if t >= 0]
        )
        for terms in data.q_terms
    ]

    def bm25(q: int) -> list[int]:
        hits = searcher.search(queries[q], TOP).hits
        return [int(searcher.doc(addr)["id"][0]) for _score, addr in hits]

    return bm25, None


def _qdrant_config(data: Data, dense: bool) -> Any:
    import qdrant_edge as qe

    opt = qe.EdgeOptimizersConfig(indexing_threshold=1)
    if dense:
        params = qe.EdgeVectorParams(
            size=data.dims, distance=qe.Distance.Cosine, datatype=qe.VectorStorageDatatype.Float16
        )
        hnsw = qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=1)
        return qe.EdgeConfig(vectors={"d": params}, hnsw_config=hnsw, optimizers=opt, wal_enabled=False)
    sparse = {"s": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
    return qe.EdgeConfig(sparse_vectors=sparse, optimizers=opt, wal_enabled=False)


def _build_qdrant(data: Data, folder: Path, dense: bool) -> None:
    import qdrant_edge as qe

    shard = qe.EdgeShard.create(str(folder), _qdrant_config(data, dense))
    vectors = data.arr("vectors")
    lengths = data.lengths()
    avg = float(lengths.mean()) if data.n else 1.0
    batch: list[Any] = []
    for d, terms, counts in data.bags():
        if dense:
            vec: Any = {"d": np.asarray(vectors[d], np.float32).tolist()}
        else:
            tf = counts.astype(np.float32)
            vals = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * float(lengths[d]) / avg))
            vec = {"s": qe.SparseVector(terms.tolist(), vals.tolist())}
        batch.append(qe.Point(d, vec))
        if len(batch) == 2000:
            shard.update(qe.UpdateOperation.upsert_points(batch))
            batch = []
    if batch:
        shard.update(qe.UpdateOperation.upsert_points(batch))
    shard.optimize()
    shard.flush()
    shard.close()


def build_qdrant_sparse(data: Data, folder: Path) -> None:
    _build_qdrant(data, folder, dense=False)


def build_qdrant_dense(data: Data, folder: Path) -> None:
    _build_qdrant(data, folder, dense=True)


def open_qdrant_sparse(data: Data, folder: Path) -> tuple[Search, None]:
    import qdrant_edge as qe

    shard = qe.EdgeShard.load(str(folder))
    queries = []
    for terms in data.q_terms:
        known = sorted({t for t in terms if t >= 0})
        weight = [float(terms.count(t)) for t in known]
        queries.append(qe.QueryRequest(limit=TOP, query=qe.Query.Nearest(qe.SparseVector(known, weight), using="s")))

    def bm25(q: int) -> list[int]:
        if not queries[q].query or not data.q_terms[q]:
            return []
        return [int(p.id) for p in shard.query(queries[q])]

    return bm25, None


def open_qdrant_dense(data: Data, folder: Path, ef: int | None = None) -> tuple[None, Search]:
    import qdrant_edge as qe

    shard = qe.EdgeShard.load(str(folder))
    qvecs = np.asarray(data.arr("qvecs"))
    params = qe.SearchParams(hnsw_ef=ef) if ef else None
    queries = [qe.QueryRequest(limit=TOP, query=qe.Query.Nearest(v.tolist(), using="d"), params=params) for v in qvecs]

    def dense(q: int) -> list[int]:
        return [int(p.id) for p in shard.query(queries[q])]

    return None, dense


def build_usearch(data: Data, folder: Path) -> None:
    from usearch.index import Index

    folder.mkdir(parents=True, exist_ok=True)
    index = Index(ndim=data.dims, metric="cos", dtype="i8" if data.compact else "f16", connectivity=16)
    vectors = data.arr("vectors")
    for lo in range(0, data.n, 100_000):
        hi = min(lo + 100_000, data.n)
        index.add(np.arange(lo, hi, dtype=np.uint64), np.asarray(vectors[lo:hi], np.float32), threads=2)
    index.save(str(folder / "index.usearch"))


def open_usearch(data: Data, folder: Path, ef: int | None = None) -> tuple[None, Search]:
    from usearch.index import Index

    index = Index.restore(str(folder / "index.usearch"))
    assert index is not None
    if ef:
        index.expansion_search = ef
    qvecs = np.asarray(data.arr("qvecs"))

    def dense(q: int) -> list[int]:
        return [int(k) for k in index.search(qvecs[q], TOP).keys]

    return None, dense


BUILD: dict[str, Callable[[Data, Path], None]] = {
    "codepith": build_codepith,
    "tantivy": build_tantivy,
    "qdrant-sparse": build_qdrant_sparse,
    "usearch": build_usearch,
    "qdrant-dense": build_qdrant_dense,
}
OPEN: dict[str, Callable[[Data, Path], tuple[Search | None, Search | None]]] = {
    "codepith": open_codepith,
    "tantivy": open_tantivy,
    "qdrant-sparse": open_qdrant_sparse,
    "usearch": open_usearch,
    "qdrant-dense": open_qdrant_dense,
    "usearch-ef512": lambda data, folder: open_usearch(data, folder, EF),
    "qdrant-dense-ef512": lambda data, folder: open_qdrant_dense(data, folder, EF),
}
SHARES = {"usearch-ef512": "usearch", "qdrant-dense-ef512": "qdrant-dense"}  # searches that system's build


# -- one system, in its own process -----------------------------------------------------------------------
def child_build(system: str, work: Path) -> dict[str, Any]:
    data = Data(work)
    folder = work / "systems" / system
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    _reset_peak()
    base = _status("VmRSS")
    t0 = time.perf_counter()
    BUILD[system](data, folder)
    built = time.perf_counter() - t0
    out = {"build_s": round(built, 2), "build_rss": _status("VmHWM") - base, "disk": disk_bytes(folder)}
    if system == "codepith":  # the vectors' share of the store (the rest: postings and lengths)
        out["disk_vectors"] = sum(disk_bytes(p) for p in folder.glob("seg-*/v*.npy"))
    return out


def child_query(system: str, work: Path) -> dict[str, Any]:
    data = Data(work)
    folder = work / "systems" / SHARES.get(system, system)
    _reset_peak()
    base = _status("VmRSS")
    t0 = time.perf_counter()
    searches = OPEN[system](data, folder)
    out: dict[str, Any] = {"open_s": round(time.perf_counter() - t0, 3)}
    nq = len(data.q_terms)
    for kind, search in zip(("bm25", "dense"), searches, strict=True):
        if search is None:
            continue
        got = [search(q) for q in range(nq)]  # warm-up pass: first-touch page faults, lazy copies
        times = []
        for _ in range(REPEAT):
            for q in range(nq):
                t = time.perf_counter()
                search(q)
                times.append(time.perf_counter() - t)
        ms = np.asarray(times) * 1000
        out[kind] = {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2)}
        out[kind]["ids"] = got
    out["serve_rss"] = _status("VmHWM") - base
    return out


def run_child(args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- scoring the answers against codepith's exact ones ----------------------------------------------------
def exact_refs(work: Path) -> tuple[list[Reference], list[Reference]]:
    """Codepith's exact BM25 and dense scores over the (possibly cut) corpus, from its own code."""
    data = Data(work)
    from codepith.index.corpus import Corpus, CorpusPart
    from codepith.store.view import View

    corpus = Corpus([CorpusPart(View(_Store(work / "systems" / "codepith", data.dims)), "")], data.dims)  # type: ignore[arg-type]
    terms = query_terms(data)
    qvecs = np.asarray(data.arr("qvecs"))
    bm = [Reference(corpus.bm25.scores(t)) for t in terms]
    dn = [Reference(corpus.dense(v) + 2.0) for v in qvecs]  # shifted positive: top_set keeps negative cosines
    return bm, dn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?")
    ap.add_argument("--queries", default=None, help="annotation name (tokio), or 'all' for every dev-suite query")
    ap.add_argument("--limit", type=int, default=None, help="only the first N chunks in corpus order")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a folder under /tmp)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", nargs=2, metavar=("PHASE", "SYSTEM"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        phase, system = args.child
        result = (child_build if phase == "build" else child_query)(system, args.work)
        print(json.dumps(result))
        return
    if not args.root:
        ap.error("root is required")
    name = args.queries or Path(args.root).name
    files = sorted(ANNOTATIONS.glob("*.json")) if name == "all" else [ANNOTATIONS / f"{name}.json"]
    texts = [q["query"] for f in files for q in json.loads(f.read_text())]
    work = args.work or Path("/tmp") / f"codepith-engines-{Path(args.root).name}"
    report: dict[str, Any] = {"root": args.root, "limit": args.limit, "queries": len(texts), "repeat": REPEAT}
    report["prepared"] = prepare(args.root, texts, args.limit, work)
    print(json.dumps(report["prepared"]), file=sys.stderr)
    systems = [s for s in args.systems.split(",") if s]
    if "codepith" not in systems:
        systems.insert(0, "codepith")  # the exact reference is codepith's store over the same data
    rows: dict[str, Any] = {}
    exact: tuple[list[Reference], list[Reference]] | None = None
    for system in systems:
        row = {} if system in SHARES else run_child(["build", system, "--work", str(work)])
        if "error" not in row:
            row |= run_child(["query", system, "--work", str(work)])
        if system == "codepith" and "error" not in row:
            exact = exact_refs(work)
            orig = work / "original.json"
            if orig.exists():  # the rebuilt store against the index codepith built: same top 100s?
                o = json.loads(orig.read_text())
                same = [
                    set(o[k][q]) == r.ids
                    for k, rs in (("bm25", exact[0]), ("dense", exact[1]))
                    for q, r in enumerate(rs)
                ]
                row["same_as_original"] = f"{sum(same)}/{len(same)}"
        for kind, ref in (("bm25", 0), ("dense", 1)):
            got = row.get(kind)
            if got and exact is not None:
                ov = [exact[ref][q].overlap(ids) for q, ids in enumerate(got.pop("ids"))]
                got["overlap_mean"] = round(float(np.mean(ov)), 4)
                got["overlap_min"] = round(float(np.min(ov)), 4)
        rows[system] = row
        print(system, json.dumps(row), file=sys.stderr)
    report["systems"] = rows
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
