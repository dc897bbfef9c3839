"""Two concurrent `codepith index` runs against one, CPU of the whole process tree: issue 10's pair row.

    python benchmarks/pair_cpu.py --repo /work/corpora/pydantic [--rounds 5] [--src OTHER/src ...]

Each round, for each ``--src`` in turn (default: this checkout's): one build in a fresh cache folder, two
concurrent builds in another fresh one, then one more run on the finished index (the cost of a run with
nothing to do). Alternating the sources inside each round is what lets two commits be compared on a
machine whose speed drifts. Prints every round and, per source, the median ratio and no-op CPU.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _index(src: Path, repo: Path, cache: Path, n: int) -> tuple[float, list[int]]:
    """CPU of ``n`` concurrent `codepith index` runs of ``repo`` into ``cache``, and their exit codes."""
    env = {**os.environ, "PYTHONPATH": str(src), "CODEPITH_CACHE_DIR": str(cache)}
    cmd = [sys.executable, "-m", "codepith", "index", str(repo)]
    before = _cpu()
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]
    codes = [p.wait() for p in procs]
    return _cpu() - before, codes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--src", type=Path, action="append", help="a codepith source tree (repeat to compare)")
    args = ap.parse_args()
    if args.rounds < 1 or not args.repo.is_dir():
        print("error: --rounds takes a whole number from 1 and --repo a folder", file=sys.stderr)
        return 2
    sources = [s.resolve() for s in (args.src or [HERE.parent / "src"])]
    rows: dict[Path, list[tuple[float, float, float]]] = {s: [] for s in sources}
    with tempfile.TemporaryDirectory(prefix="codepith-pair-") as tmp:
        for _ in range(args.rounds):
            for src in sources:
                one_cache, two_cache = Path(tmp, "one"), Path(tmp, "two")
                for folder in (one_cache, two_cache):
                    shutil.rmtree(folder, ignore_errors=True)
                one, c1 = _index(src, args.repo, one_cache, 1)
                two, c2 = _index(src, args.repo, two_cache, 2)
                noop, c3 = _index(src, args.repo, two_cache, 1)
                indexes = (
                    sum(p.is_dir() for p in (two_cache / "indexes").iterdir())
                    if (two_cache / "indexes").is_dir()
                    else 0
                )
                rows[src].append((one, two, noop))
                print(
                    f"{src}: one {one:.2f} s, two {two:.2f} s ({two / one:.3f}x), no-op {noop:.2f} s, "
                    f"exits {c1 + c2 + c3}, indexes {indexes}",
                    flush=True,
                )
    for src, got in rows.items():
        ratio = statistics.median(t / o for o, t, _ in got)
        noop = statistics.median(n for _, _, n in got)
        print(f"{src}: median two/one {ratio:.3f}x, median no-op {noop:.2f} s CPU ({len(got)} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
