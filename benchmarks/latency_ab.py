"""Warm search latency of whichever codepith is on PYTHONPATH, for A/B runs of two source trees.

    PYTHONPATH=OLD/src python benchmarks/latency_ab.py --label main [--issue-trees DIR]
    PYTHONPATH=src     python benchmarks/latency_ab.py --label branch [--issue-trees DIR]

Short queries: every dev-suite query of a few corpora, one warm-up pass, then three timed passes.
Issue queries (optional): every third instance of ../shared/bench/issues/instances.jsonl, searched in
DIR/<instance_id> (one tree per instance, e.g. ``git archive base-<sha>`` of prepare.sh's clones),
three timed runs each after a warm-up. Alternate the two labels a few times on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "bench"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--annotations", default=str(SHARED / "annotations"))
    ap.add_argument("--corpora", default="/work/corpora")
    ap.add_argument("--repos", default="flask,tokio,fastapi,zod,rails,fmtlib")
    ap.add_argument("--issues", default=str(SHARED / "issues" / "instances.jsonl"))
    ap.add_argument("--issue-trees", default=None)
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args()
    os.environ["CODEPITH_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="codepith-lat-")
    from codepith import Index

    specs = {r["name"]: r for r in json.loads((Path(args.annotations).parent / "repos.json").read_text())}
    short: list[float] = []
    for name in args.repos.split(","):
        root = Path(args.corpora) / name / (specs[name].get("benchmark_root") or "")
        index = Index.from_path(root)
        queries = [q["query"] for q in json.loads((Path(args.annotations) / f"{name}.json").read_text())]
        for q in queries:
            index.search(q, top_k=10)
        for _ in range(3):
            for q in queries:
                t = time.perf_counter()
                index.search(q, top_k=10)
                short.append(time.perf_counter() - t)
    line = f"{args.label}: short median {statistics.median(short) * 1000:.2f} ms (n={len(short)})"
    if args.issue_trees:
        long_: list[float] = []
        insts = [json.loads(x) for x in open(args.issues) if x.strip()][::3]
        for inst in insts:
            index = Index.from_path(Path(args.issue_trees) / inst["instance_id"])
            q = inst["query"][:2000]
            index.search(q, top_k=20, refresh=False)
            for _ in range(3):
                t = time.perf_counter()
                index.search(q, top_k=20, refresh=False)
                long_.append(time.perf_counter() - t)
        line += f"; issue median {statistics.median(long_) * 1000:.1f} ms, mean {statistics.mean(long_) * 1000:.1f} ms"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
