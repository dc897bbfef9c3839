"""Cold index time, codepith against semble, side by side in one process: the ratio issue 10 judges.

    python benchmarks/cold_index.py --corpora /work/corpora [--reps 3] [--repos a,b] [--src DIR]

Each corpus (its ``benchmark_root``) is built ``--reps`` times by each system in turn, every build in a
fresh cache folder; the best of each is kept, since one build of a small repository swings by 2x on a
shared machine. Prints per repository the two times and their ratio, then the per-repo median ratio and
the ratio of the totals. ``--src`` imports codepith from another checkout's ``src`` (to compare two
commits with the same harness). Model loading and imports are paid once, before any timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotations", type=Path, default=HERE.parents[1] / "shared/bench/annotations")
    ap.add_argument("--corpora", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--repos", default="")
    ap.add_argument("--src", type=Path, default=HERE.parent / "src", help="the codepith source tree to import")
    ap.add_argument("--model", type=Path, default=HERE.parent / "src/codepith/model/data")
    args = ap.parse_args()
    if args.reps < 1:
        print("error: --reps takes a whole number from 1", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(args.src.resolve()))
    from suite import load_suite
    from systems import BACKENDS, cold_cache

    names = [r.strip() for r in args.repos.split(",") if r.strip()] or None
    corpora = [c for c in load_suite(args.annotations, args.corpora, names) if c.available]
    systems = ("codepith", "semble")
    with tempfile.TemporaryDirectory() as tmp:  # imports, model loads, first-use costs
        Path(tmp, "w.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        for name in systems:
            with cold_cache(BACKENDS[name]):
                BACKENDS[name].build(Path(tmp), args.model).search("add", 10, None)
    rows = []
    for corpus in corpora:
        best = {name: float("inf") for name in systems}
        for _ in range(args.reps):
            for name in systems:
                with cold_cache(BACKENDS[name]):
                    started = time.perf_counter()
                    BACKENDS[name].build(corpus.root, args.model)
                    best[name] = min(best[name], time.perf_counter() - started)
        rows.append((corpus.name, best["codepith"], best["semble"]))
        print(
            f"{corpus.name:16s} {best['codepith'] * 1000:7.0f} ms {best['semble'] * 1000:7.0f} ms "
            f"{best['codepith'] / best['semble']:5.2f}x",
            flush=True,
        )
    if rows:
        median = statistics.median(c / s for _, c, s in rows)
        total = sum(c for _, c, _ in rows) / sum(s for _, _, s in rows)
        print(f"per-repo median ratio {median:.2f}x, total {total:.2f}x ({len(rows)} corpora, best of {args.reps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
