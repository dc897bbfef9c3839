"""How much of a cold build is tree-sitter's parse: per corpus, ``parse`` alone over the files codepith
indexes, beside semble's and codepith's whole cold builds (best of ``--reps`` each, alternating, one
process, as ``cold_index.py`` measures them).

    python benchmarks/parse_share.py --corpora /work/corpora [--reps 3] [--repos a,b]

If the parse were most of semble's build, a cold ratio of 0.5 would need a second core; it is not.
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
    ap.add_argument("--model", type=Path, default=HERE.parent / "src/codepith/model/data")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(HERE.parent / "src"))
    from suite import load_suite
    from systems import BACKENDS, cold_cache

    from codepith.chunks.grammars import get_parser
    from codepith.files.read import read_text
    from codepith.files.walk import walk

    names = [r.strip() for r in args.repos.split(",") if r.strip()] or None
    corpora = [c for c in load_suite(args.annotations, args.corpora, names) if c.available]
    systems = ("semble", "codepith")
    with tempfile.TemporaryDirectory() as tmp:  # imports, model loads, first-use costs
        Path(tmp, "w.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        for name in systems:
            with cold_cache(BACKENDS[name]):
                BACKENDS[name].build(Path(tmp), args.model).search("add", 10, None)
    rows = []
    for corpus in corpora:
        sources = []
        for sf in walk(corpus.root, "code", None).files:
            text, _ = read_text(sf.path)
            parser = get_parser(sf.language) if text is not None else None
            if parser is not None and text is not None:
                sources.append((parser, text.encode("utf-8", "surrogatepass")))
        parse = float("inf")
        for _ in range(args.reps):
            started = time.perf_counter()
            for parser, data in sources:
                parser.parse(data)
            parse = min(parse, time.perf_counter() - started)
        best = {name: float("inf") for name in systems}
        for _ in range(args.reps):
            for name in systems:
                with cold_cache(BACKENDS[name]):
                    started = time.perf_counter()
                    BACKENDS[name].build(corpus.root, args.model)
                    best[name] = min(best[name], time.perf_counter() - started)
        rows.append((corpus.name, parse, best["semble"], best["codepith"]))
        print(
            f"{corpus.name:16s} parse {parse * 1000:6.0f} ms  semble {best['semble'] * 1000:6.0f} ms  "
            f"codepith {best['codepith'] * 1000:6.0f} ms  parse/semble {parse / best['semble']:.2f}  "
            f"codepith/semble {best['codepith'] / best['semble']:.2f}",
            flush=True,
        )
    if rows:
        print(
            f"median parse/semble {statistics.median(p / s for _, p, s, _ in rows):.3f}, "
            f"median codepith/semble {statistics.median(c / s for _, _, s, c in rows):.3f} ({len(rows)} corpora)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
