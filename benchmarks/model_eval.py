#!/usr/bin/env python3
"""Dense-only retrieval quality of embedding-model variants on the dev suite (for choosing the model).

For each corpus: walk the benchmark root with codepith's walker, chunk every file with codepith's
chunker, embed ``path + content`` of each chunk (what the index embeds) and each query with the model,
rank chunks by cosine, and score NDCG@10:

* a target (``relevant`` + ``secondary``; a path, or {path, start_line, end_line}) is found at the rank
  of the first top-10 chunk from its file whose lines overlap the target's span (if it has one);
* gains are binary; the ideal DCG counts only targets whose file exists in the corpus;
* mean per repo, then mean over repos (and the same per query category).

No BM25, no fusion, no boosts: this isolates the model. Usage:

    PYTHONPATH=src python benchmarks/model_eval.py /work/models/plain-256-f16 /work/models/code10k-256-int8 \
        [--corpora /work/corpora] [--suite /work/shared/bench] [--repos flask,zod] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from codepith.chunks.chunker import chunk_file
from codepith.files.read import read_text
from codepith.files.walk import walk
from codepith.model.loader import load_model

TOP_K = 10
Target = tuple[str, int | None, int | None]  # (path relative to the indexed root, start, end)
Span = tuple[str, int, int]


def index_root(corpora: Path, spec: dict[str, Any]) -> Path:
    return corpora / spec["name"] / (spec.get("benchmark_root") or "")


def chunk_corpus(root: Path, cache: Path | None) -> tuple[list[Span], list[str]]:
    """(file, start, end) and the embedded text of every chunk under ``root``; cached on disk."""
    if cache is not None and cache.is_file():
        cached: tuple[list[Span], list[str]] = pickle.loads(cache.read_bytes())
        return cached
    spans: list[Span] = []
    texts: list[str] = []
    for sf in walk(root).files:
        text, _ = read_text(sf.path)
        if text is None:
            continue
        for c in chunk_file(sf.rel_path, text, sf.language):
            spans.append((c.file_path, c.start_line, c.end_line))
            texts.append(f"{c.file_path}\n{c.content}")
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps((spans, texts)))
    return spans, texts


def resolve_target(raw: Any, checkout: Path, root: Path) -> Target | None:
    """The target relative to the indexed root, or None when its file is not in the corpus."""
    path, start, end = (
        (raw, None, None) if isinstance(raw, str) else (raw["path"], raw.get("start_line"), raw.get("end_line"))
    )
    if (root / path).is_file():
        return path, start, end
    full = checkout / path
    if full.is_file():
        rel = os.path.relpath(full, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/"), start, end
    return None


def ndcg_at_k(ranked: list[Span], targets: list[Target]) -> float:
    dcg = 0.0
    for path, start, end in targets:
        for rank, (f, s, e) in enumerate(ranked[:TOP_K], start=1):
            if f == path and (start is None or (s <= (end or start) and e >= start)):
                dcg += 1.0 / math.log2(rank + 1)
                break
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(targets), TOP_K) + 1))
    return dcg / ideal if ideal else 0.0


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_camel(texts: list[str]) -> list[str]:
    """``getUserName`` -> ``get User Name``: whole-word pieces instead of '##' continuations."""
    return [_CAMEL.sub(" ", t) for t in texts]


def evaluate(model_spec: str, args: argparse.Namespace, specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    model = load_model(model_spec)
    per_repo: dict[str, float] = {}
    per_cat: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    embed_s = 0.0
    n_chunks = 0
    for ann in sorted((args.suite / "annotations").glob("*.json")):
        name = ann.stem
        if args.repos and name not in args.repos:
            continue
        spec = specs[name]
        checkout = args.corpora / name
        root = index_root(args.corpora, spec)
        if not root.is_dir():
            print(f"  skip {name}: no corpus", file=sys.stderr)
            continue
        spans, texts = chunk_corpus(root, args.cache / f"{name}.pkl" if args.cache else None)
        t0 = time.perf_counter()
        vecs = model.encode(split_camel(texts) if args.split_camel else texts)
        embed_s += time.perf_counter() - t0
        n_chunks += len(texts)
        items = json.loads(ann.read_text())
        queries = [it["query"] for it in items]
        qvecs = model.encode(split_camel(queries) if args.split_camel else queries)
        scores = qvecs @ vecs.T
        repo_scores: list[float] = []
        for it, row in zip(items, scores, strict=True):
            targets = [
                t
                for raw in it.get("relevant", []) + it.get("secondary", [])
                if (t := resolve_target(raw, checkout, root)) is not None
            ]
            if not targets:
                continue
            top = np.argsort(-row, kind="stable")[:TOP_K]
            score = ndcg_at_k([spans[i] for i in top], targets)
            repo_scores.append(score)
            per_cat[it.get("category", "?")][name].append(score)
        per_repo[name] = float(np.mean(repo_scores)) if repo_scores else 0.0
    categories = {cat: float(np.mean([np.mean(v) for v in repos.values()])) for cat, repos in sorted(per_cat.items())}
    folder = Path(model_spec)
    size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) if folder.is_dir() else 0
    return {
        "model": model_spec,
        "name": model.info.name + ("+camel" if args.split_camel else ""),
        "dims": model.info.dims,
        "mb": round(size / 1e6, 1),
        "ndcg10": float(np.mean(list(per_repo.values()))) if per_repo else 0.0,
        "categories": categories,
        "per_repo": per_repo,
        "chunks": n_chunks,
        "embed_seconds": round(embed_s, 2),
    }


def main() -> int:
    p = argparse.ArgumentParser(description="dense-only NDCG@10 of model variants")
    p.add_argument("models", nargs="+", help="model folders (or hub ids / the bundled default name)")
    p.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    p.add_argument("--suite", type=Path, default=Path("/work/shared/bench"))
    p.add_argument("--repos", type=lambda s: set(s.split(",")), default=None)
    p.add_argument("--cache", type=Path, default=Path("/tmp/codepith-model-eval"), help="chunk cache folder")
    p.add_argument("--split-camel", action="store_true", help="split camelCase before embedding (both sides)")
    p.add_argument("--json", type=Path, default=None, help="write all results here")
    args = p.parse_args()
    specs = {r["name"]: r for r in json.loads((args.suite / "repos.json").read_text())}
    results = []
    for m in args.models:
        r = evaluate(m, args, specs)
        results.append(r)
        cats = " ".join(f"{c}={v:.3f}" for c, v in r["categories"].items())
        print(
            f"{r['name']:<22} {r['mb']:>5.1f} MB  NDCG@10={r['ndcg10']:.3f}  {cats}  "
            f"({r['chunks']} chunks embedded in {r['embed_seconds']:.1f}s)",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
