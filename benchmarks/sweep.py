"""Ranking-parameter sweeps: build every corpus once, then re-score all queries for each setting.

    python benchmarks/sweep.py --corpora /work/corpora --model DIR NAME=V1,V2 [NAME=...]

NAME is a constant of ``codepith.search.engine`` (e.g. ALPHA_WORDS=0.4,0.5,0.6) or, prefixed with
``lexical.``, of ``codepith.index.lexical`` (e.g. lexical.B=0.5,0.75); ``fusion.RRF_K`` is RRF's k. Prints overall and
per-category NDCG@10 for each combination. Use it to check a signal's weight, not to chase queries.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metrics import Hit, score_query  # noqa: E402
from suite import load_suite  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotations", default=str(Path(__file__).resolve().parents[2] / "shared/bench/annotations"))
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--model", default=None)
    ap.add_argument("--repos", action="store_true", help="also print NDCG@10 per repository")
    ap.add_argument("--no-target-zero", action="store_true", help="no-target queries score 0 (semble)")
    ap.add_argument("params", nargs="*")
    args = ap.parse_args()
    os.environ["CODEPITH_CACHE_DIR"] = tempfile.mkdtemp(prefix="codepith-sweep-")
    import codepith
    from codepith.index import corpus as corpus_module
    from codepith.index import lexical
    from codepith.model.loader import load_model
    from codepith.search import engine, fusion

    model = load_model(args.model)
    corpora = [c for c in load_suite(Path(args.annotations), Path(args.corpora)) if c.available]
    indexes = {c.name: codepith.Index.from_path(c.root, model=model) for c in corpora}
    grid = [(name, [float(v) for v in values.split(",")]) for name, values in (p.split("=", 1) for p in args.params)]
    for combo in itertools.product(*[vals for _, vals in grid]) if grid else [()]:
        rebuild = False
        for (name, _), value in zip(grid, combo, strict=True):
            if name.startswith("lexical."):  # BM25 constants: the corpus arrays must be rebuilt
                const = name.split(".", 1)[1]
                setattr(lexical, const, value)
                setattr(corpus_module, const, value)  # the segment store's BM25 imported its own copy
                rebuild = True
            elif name == "fusion.RRF_K":  # the engine calls rrf() with its default k
                fusion.rrf.__defaults__ = (value,)
            else:
                setattr(engine, name, int(value) if "CANDIDATES" in name else value)
        if rebuild:
            for index in indexes.values():
                index._corpus = None
                index.refresh()
        per_repo: dict[str, list[float]] = {}
        per_cat: dict[str, dict[str, list[float]]] = {}
        for c in corpora:
            for q in c.queries:
                hits = [
                    Hit(r.chunk.file_path, r.chunk.start_line, r.chunk.end_line)
                    for r in indexes[c.name].search(q.text, top_k=10, refresh=False)
                ]
                s = score_query(hits, q.existing_targets)
                if s is None and not args.no_target_zero:
                    continue
                value = s.ndcg10 if s is not None else 0.0
                per_repo.setdefault(c.name, []).append(value)
                per_cat.setdefault(q.category, {}).setdefault(c.name, []).append(value)
        overall = sum(sum(v) / len(v) for v in per_repo.values()) / len(per_repo)
        cats = {k: sum(sum(v) / len(v) for v in reps.values()) / len(reps) for k, reps in sorted(per_cat.items())}
        label = " ".join(f"{n}={v}" for (n, _), v in zip(grid, combo, strict=True)) or "current"
        print(f"{label:40} NDCG@10 {overall:.4f}  " + "  ".join(f"{k} {v:.3f}" for k, v in cats.items()), flush=True)
        if args.repos:
            print("    " + " ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(per_repo.items())), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
