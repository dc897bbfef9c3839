"""Cold index time, codepith against semble, side by side in one process: the ratio issue 10 judges.

    python benchmarks/cold_index.py --corpora /work/corpora [--reps 3] [--repos a,b] [--src DIR] [--parse] [--fresh]

Each corpus (its ``benchmark_root``) is built ``--reps`` times by each system in turn, every build in a
fresh cache folder; the best of each is kept, since one build of a small repository swings by 2x on a
shared machine. Prints per repository the two times and their ratio, then the per-repo median ratio and
the ratio of the totals. ``--src`` imports codepith from another checkout's ``src`` (to compare two
commits with the same harness). Model loading and imports are paid once, before any timing.
``--fresh`` builds each time in a new process per system instead (imports, the model and a one-file
build first, untimed), as a ``codepith index`` or a first ``SembleIndex.from_path`` runs: no cache left
warm by the previous build, no other system's memory in the process (which made each of codepith's
forks cost 8 ms instead of 1.5), no thread of the other's to keep codepith from forking.
With ``--fresh`` each line also gives the CPU time of the build (its process and the workers it forked),
best of ``--reps`` apart from the wall time: on this shared VM a build's CPU often moves less from run to run than
its wall time, so a change is easier to judge by it (codepith spends two cores' time to save wall time).
``--parse`` also times tree-sitter's ``parse`` alone over the files codepith indexes (best of ``--reps``)
and prints its share of semble's build: work both systems must do.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
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
    ap.add_argument("--parse", action="store_true", help="also time the parse alone, as a share of semble's build")
    ap.add_argument("--fresh", action="store_true", help="each build in a new process per system")
    ap.add_argument("--child", nargs=2, metavar=("SYSTEM", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reps < 1:
        print("error: --reps takes a whole number from 1", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(args.src.resolve()))
    from suite import load_suite
    from systems import best_cold_builds, warm_up

    if args.child:
        return _child(args.child[0], Path(args.child[1]), args.model)

    names = [r.strip() for r in args.repos.split(",") if r.strip()] or None
    corpora = [c for c in load_suite(args.annotations, args.corpora, names) if c.available]
    systems = ("codepith", "semble")
    if not args.fresh:
        warm_up(systems, args.model)
    rows = []
    cpu_rows = []
    shares = []
    for corpus in corpora:
        cpu: dict[str, float] = {}
        if args.fresh:
            best, cpu = _fresh_builds(systems, corpus.root, args)
        else:
            best = best_cold_builds(systems, corpus.root, args.model, args.reps)
        rows.append((corpus.name, best["codepith"], best["semble"]))
        line = (
            f"{corpus.name:16s} {best['codepith'] * 1000:7.0f} ms {best['semble'] * 1000:7.0f} ms "
            f"{best['codepith'] / best['semble']:5.2f}x"
        )
        if cpu:
            cpu_rows.append(cpu["codepith"] / cpu["semble"])
            line += (
                f"   CPU {cpu['codepith'] * 1000:6.0f} ms {cpu['semble'] * 1000:6.0f} ms "
                f"{cpu['codepith'] / cpu['semble']:5.2f}x"
            )
        if args.parse:
            parse = _parse_seconds(corpus.root, args.reps)
            shares.append(parse / best["semble"])
            line += f"   parse alone {parse * 1000:6.0f} ms, {shares[-1]:.2f} of semble's build"
        print(line, flush=True)
    if rows:
        median = statistics.median(c / s for _, c, s in rows)
        total = sum(c for _, c, _ in rows) / sum(s for _, _, s in rows)
        print(f"per-repo median ratio {median:.2f}x, total {total:.2f}x ({len(rows)} corpora, best of {args.reps})")
    if cpu_rows:
        print(f"CPU: per-repo median ratio {statistics.median(cpu_rows):.2f}x")
    if shares:
        print(f"the parse alone: a median {statistics.median(shares):.3f} of semble's build")
    return 0


def _fresh_builds(
    systems: tuple[str, ...], root: Path, args: argparse.Namespace
) -> tuple[dict[str, float], dict[str, float]]:
    """Each system's fastest of ``--reps`` builds, each in a process of its own, the systems in turn: (wall,
    CPU), each the best of its own."""
    best = {name: float("inf") for name in systems}
    cpu = {name: float("inf") for name in systems}
    for _ in range(args.reps):
        for name in systems:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--corpora", str(args.corpora)]
            cmd += ["--src", str(args.src), "--model", str(args.model), "--child", name, str(root)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = done.stdout.strip().splitlines()
            if done.returncode != 0 or not lines:
                raise SystemExit(f"error: the {name} build of {root} failed: {done.stderr.strip()[-400:]}")
            wall, used = (float(x) for x in lines[-1].split())
            best[name] = min(best[name], wall)
            cpu[name] = min(cpu[name], used)
    return best, cpu


def _child(name: str, root: Path, model: Path) -> int:
    """One timed cold build in this fresh process, after imports, the model and a one-file build: prints its
    wall and CPU seconds."""
    from systems import BACKENDS, cold_cache, warm_up

    warm_up((name,), model)
    with cold_cache(BACKENDS[name]):
        cpu = _cpu_seconds()
        started = time.perf_counter()
        BACKENDS[name].build(root, model)
        wall = time.perf_counter() - started
        _reap_children()
        print(wall, _cpu_seconds() - cpu, flush=True)
    return 0


def _reap_children() -> None:
    """Wait for the workers a build left to exit on their own (codepith reaps them later, at the latest
    when its process ends), so that their CPU time is counted."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _cpu_seconds() -> float:
    """User and system time of this process and of its children that have ended (forked workers)."""
    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime


def _parse_seconds(root: Path, reps: int) -> float:
    """tree-sitter's parse of every file codepith would chunk, best of ``reps`` (the sources read first)."""
    from codepith.chunks.grammars import get_parser
    from codepith.files.read import read_text
    from codepith.files.walk import walk

    sources = []
    for sf in walk(root, "code", None).files:
        text, _ = read_text(sf.path)
        parser = get_parser(sf.language) if text is not None else None
        if parser is not None and text is not None:
            sources.append((parser, text.encode("utf-8", "surrogatepass")))
    best = float("inf")
    for _ in range(reps):
        started = time.perf_counter()
        for parser, data in sources:
            parser.parse(data)
        best = min(best, time.perf_counter() - started)
    return best


if __name__ == "__main__":
    sys.exit(main())
