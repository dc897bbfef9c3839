"""Calibrate and check the "no confident match" floor (``codepith.api.Confidence``).

    PYTHONPATH=src python benchmarks/honest_empty.py [--annotations /work/shared/bench/annotations] \\
        [--corpora /work/corpora] [--out benchmarks/results/honest_empty]

For every dev-suite query that has a target in its corpus, the floor must say "confident" (a false
"no match" hides a real answer). For nonsense queries (made-up words, keyboard runs, random
letters, fixed seed) it should say "no confident match". Prints, per side, how many queries fall
under the floor and the similarity distribution of the queries with no informative lexical match,
which is where the dense threshold sits. Writes summary.json and results.json (per query) into --out.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "src"))  # this checkout's codepith

from suite import load_suite  # noqa: E402

NONSENSE_FIXED = (
    "zzqqxxnotfound",
    "asdfghjkl qwertyuiop",
    "xyzzy plugh frobnicate quux",
    "blorptastic wuzzle fnord",
    "qqq www eee rrr",
    "lorem ipsum dolor sit amet",
    "zxcvbnm poiuytrewq",
    "glarbnox thrumpet vizzlewick",
)


def nonsense(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = list(NONSENSE_FIXED)
    while len(out) < count:
        words = [
            "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(6, 12)))
            for _ in range(rng.randint(1, 3))
        ]
        out.append(" ".join(words))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--annotations", default="/work/shared/bench/annotations")
    ap.add_argument("--corpora", default="/work/corpora")
    ap.add_argument("--repos", default="", help="comma-separated subset")
    ap.add_argument("--nonsense", type=int, default=20, help="nonsense queries per corpus")
    ap.add_argument("--out", default="benchmarks/results/honest_empty")
    args = ap.parse_args(argv)

    import codepith
    from codepith.api import DENSE_FLOOR

    suite = load_suite(Path(args.annotations), Path(args.corpora))
    wanted = {r for r in args.repos.split(",") if r}
    real: list[dict[str, object]] = []
    fake: list[dict[str, object]] = []
    for corpus in suite:
        if wanted and corpus.name not in wanted:
            continue
        index = codepith.Index.from_path(str(corpus.root))
        for q in corpus.queries:
            if not q.existing_targets:
                continue
            c = index.confidence(q.text)
            real.append(
                {
                    "repo": corpus.name,
                    "query": q.text,
                    "terms": list(c.matched_terms),
                    "similarity": c.similarity,
                    "confident": c.confident,
                }
            )
        for text in nonsense(args.nonsense):
            c = index.confidence(text)
            fake.append(
                {
                    "repo": corpus.name,
                    "query": text,
                    "terms": list(c.matched_terms),
                    "similarity": c.similarity,
                    "confident": c.confident,
                }
            )
        print(
            f"{corpus.name}: {sum(not r['confident'] for r in real if r['repo'] == corpus.name)} real under the floor, "
            f"{sum(not f['confident'] for f in fake if f['repo'] == corpus.name)}/{args.nonsense} nonsense under it",
            flush=True,
        )

    def sims(rows: list[dict[str, object]]) -> list[float]:
        return sorted(float(r["similarity"]) for r in rows if not r["terms"])  # type: ignore[arg-type]

    real_sims, fake_sims = sims(real), sims(fake)
    summary = {
        "dense_floor": DENSE_FLOOR,
        "real_queries": len(real),
        "real_flagged": sum(not r["confident"] for r in real),
        "real_without_lexical_match": len(real_sims),
        "real_min_similarity_without_lexical_match": real_sims[0] if real_sims else None,
        "nonsense_queries": len(fake),
        "nonsense_flagged": sum(not f["confident"] for f in fake),
        "nonsense_without_lexical_match": len(fake_sims),
        "nonsense_max_similarity_without_lexical_match": fake_sims[-1] if fake_sims else None,
        "nonsense_similarity_percentiles": {
            p: fake_sims[min(len(fake_sims) - 1, len(fake_sims) * p // 100)] for p in (50, 90, 99)
        }
        if fake_sims
        else {},
    }
    print(json.dumps(summary, indent=1))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"summary": summary, "real": real, "nonsense": fake}, indent=1))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if summary["real_flagged"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
