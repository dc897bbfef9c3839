"""Retrieval-quality benchmark: index every corpus with every system, score the annotated queries.

    python benchmarks/run.py --annotations /work/shared/bench/annotations --corpora /work/corpora \
        [--repos a,b] [--systems codepith,semble] [--model PATH] [--out benchmarks/results/latest]

Per corpus and system: a cold index build (timed, fresh cache dir; the best of --index-reps builds, 3 by
default), every query at top 10 once
(scored) and again (timed: warm latency), and find_related from each annotated seed. Writes
results.json (everything, per query too) and results.md (side-by-side tables) into --out.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "src"))  # this checkout's codepith

from metrics import Hit, QueryScore, macro_mean, mean_scores, median, percentile, score_query  # noqa: E402
from report import render_markdown  # noqa: E402
from suite import Corpus, Query, SuiteError, load_suite  # noqa: E402
from systems import BACKENDS, SYSTEMS, BenchSystemError, BuiltIndex, System, cold_cache, default_model_dir  # noqa: E402

TOP_K = 10
_ZERO = QueryScore(0.0, 0.0, 0.0, 0.0, (), 0)
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class QueryRecord:
    """Everything about one query for one system, kept for error analysis."""

    system: str
    repo: str
    language: str
    index: int
    query: str
    category: str
    targets: tuple[str, ...]
    missing_targets: tuple[str, ...]
    hits: tuple[Hit, ...]
    score: QueryScore | None
    latency_ms: float
    related_hits: tuple[Hit, ...] | None = None
    related_score: QueryScore | None = None


@dataclass
class RepoRun:
    """One system on one corpus: build cost and the query records."""

    system: str
    repo: str
    language: str
    index_s: float
    stats: dict[str, Any]
    records: list[QueryRecord] = field(default_factory=list)
    error: str | None = None


# --- running ------------------------------------------------------------------------------------


@contextmanager
def _maybe_profile(enabled: bool, dest: Path | None) -> Iterator[None]:
    """cProfile the block into a text report at `dest` (top functions by cumulative time)."""
    if not enabled or dest is None:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(40)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(buf.getvalue(), encoding="utf-8")


def warm_up(backend_name: str, model_dir: Path | None) -> float:
    """Build and query a one-file index so imports and model loading stay out of per-corpus timings."""
    backend = BACKENDS[backend_name]
    with tempfile.TemporaryDirectory(prefix="bench-warmup-") as tmp:
        Path(tmp, "warmup.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        with cold_cache(backend):
            started = time.perf_counter()
            index = backend.build(Path(tmp), model_dir)
            index.search("add two numbers", TOP_K, None)
            return time.perf_counter() - started


def run_queries(
    system: System, corpus: Corpus, index: BuiltIndex, *, profile_dest: Path | None = None
) -> list[QueryRecord]:
    """First pass scores (and warms); second pass is timed; then find_related for seeded queries."""
    first = [index.search(q.text, TOP_K, system.mode) for q in corpus.queries]
    latencies: list[float] = []
    with _maybe_profile(profile_dest is not None, profile_dest):
        for q in corpus.queries:
            started = time.perf_counter()
            index.search(q.text, TOP_K, system.mode)
            latencies.append((time.perf_counter() - started) * 1000)
    triples = zip(corpus.queries, first, latencies, strict=True)
    return [_record(system, corpus, q, hits, ms, index) for q, hits, ms in triples]


def _record(
    system: System, corpus: Corpus, q: Query, hits: list[Hit], latency_ms: float, index: BuiltIndex
) -> QueryRecord:
    related_hits: list[Hit] | None = None
    related_score: QueryScore | None = None
    if q.seed is not None and q.seed.exists and q.existing_related:
        related_hits = index.related(q.seed.path, q.seed.line, TOP_K)
        if related_hits is not None:
            related_score = score_query(related_hits, q.existing_related, TOP_K)
    return QueryRecord(
        system=system.name,
        repo=corpus.name,
        language=corpus.language,
        index=q.index,
        query=q.text,
        category=q.category,
        targets=tuple(t.target.label() for t in q.targets if t.exists),
        missing_targets=tuple(t.raw for t in q.targets if not t.exists),
        hits=tuple(hits),
        score=score_query(hits, q.existing_targets, TOP_K),
        latency_ms=latency_ms,
        related_hits=tuple(related_hits) if related_hits is not None else None,
        related_score=related_score,
    )


def _extra_build_seconds(backend_name: str, root: Path, model_dir: Path | None, reps: int) -> list[float]:
    """Wall seconds of ``reps`` more cold builds (each in a fresh cache, the index thrown away): the index
    time reported is the best of all builds, since one build of a small repository on a shared machine
    swings by 2x (seen: 0.05 s and 0.23 s for the same tree in two runs an hour apart)."""
    backend = BACKENDS[backend_name]
    out: list[float] = []
    for _ in range(reps):
        with cold_cache(backend):
            started = time.perf_counter()
            try:
                backend.build(root, model_dir)
            except Exception:  # noqa: BLE001 - the scored build reports the failure
                return out
            out.append(time.perf_counter() - started)
    return out


def run_corpus(
    corpus: Corpus,
    systems: Sequence[System],
    model_dir: Path | None,
    profile_dir: Path | None,
    index_reps: int = 1,
) -> list[RepoRun]:
    """Build once per backend (cold cache), then run every system that uses that backend; with
    ``index_reps`` > 1 the index time is the best of that many cold builds."""
    runs: list[RepoRun] = []
    by_backend: dict[str, list[System]] = defaultdict(list)
    for s in systems:
        by_backend[s.backend].append(s)
    for backend_name, members in by_backend.items():
        backend = BACKENDS[backend_name]
        with cold_cache(backend):
            build_prof = profile_dir / f"{backend_name}-{corpus.name}-build.txt" if profile_dir else None
            try:
                with _maybe_profile(profile_dir is not None, build_prof):
                    started = time.perf_counter()
                    index = backend.build(corpus.root, model_dir)
                    build_s = time.perf_counter() - started
                build_s = min([build_s, *_extra_build_seconds(backend_name, corpus.root, model_dir, index_reps - 1)])
            except BenchSystemError:
                raise
            except Exception as exc:  # a crash on one corpus should not lose the rest of the run
                msg = f"{type(exc).__name__}: {exc}"
                _log(f"  {backend_name} failed to index {corpus.name}: {msg}")
                runs.extend(RepoRun(s.name, corpus.name, corpus.language, 0.0, {}, error=msg) for s in members)
                continue
            stats = index.stats()
            for s in members:
                query_prof = profile_dir / f"{s.name}-{corpus.name}-queries.txt" if profile_dir else None
                run = RepoRun(s.name, corpus.name, corpus.language, build_s, stats)
                try:
                    run.records = run_queries(s, corpus, index, profile_dest=query_prof)
                except BenchSystemError:
                    raise
                except Exception as exc:
                    run.error = f"{type(exc).__name__}: {exc}"
                    _log(f"  {s.name} failed on {corpus.name}: {run.error}")
                runs.append(run)
                _log(f"  {s.name:<18} {corpus.name:<14} index {build_s:6.2f}s  {_brief(run)}")
    return runs


def _brief(run: RepoRun) -> str:
    means = mean_scores(r.score for r in run.records if r.score is not None)
    lat = [r.latency_ms for r in run.records]
    if means is None:
        return "no scorable queries"
    return f"NDCG@10 {means['ndcg10']:.3f}  median {median(lat) or 0:.2f} ms"


# --- aggregation --------------------------------------------------------------------------------


def _repo_means(records: Sequence[QueryRecord], pick: Callable[[QueryRecord], QueryScore | None]) -> dict[str, Any]:
    by_repo: dict[str, list[QueryScore]] = defaultdict(list)
    for r in records:
        s = pick(r)
        if s is not None:
            by_repo[r.repo].append(s)
    return {repo: mean_scores(scores) for repo, scores in sorted(by_repo.items())}


def aggregate(runs: Sequence[RepoRun]) -> dict[str, Any]:
    """Summaries for one system's runs.

    Overall, per-language and per-category numbers are macro averages: the mean over repos of each
    repo's mean (per-category: of each repo's mean over its queries of that category). Query-level
    (micro) category means are included too, under `per_category_micro`.
    """
    records = [r for run in runs for r in run.records]
    per_repo = _repo_means(records, lambda r: r.score)
    languages = {run.repo: run.language for run in runs}
    categories = sorted({r.category for r in records})
    per_category = {
        c: macro_mean(_repo_means([r for r in records if r.category == c], lambda r: r.score)) for c in categories
    }
    per_category_micro = {
        c: mean_scores(r.score for r in records if r.category == c and r.score is not None) for c in categories
    }
    per_language = {
        lang: macro_mean({repo: m for repo, m in per_repo.items() if languages.get(repo) == lang})
        for lang in sorted(set(languages.values()))
    }
    related_per_repo = _repo_means(records, lambda r: r.related_score)
    latencies = [r.latency_ms for r in records]
    return {
        "overall": macro_mean(per_repo),
        # semble's published reference scores a query with no existing target as 0 instead of skipping it
        "overall_no_target_as_zero": macro_mean(_repo_means(records, lambda r: r.score or _ZERO)),
        "per_category_no_target_as_zero": {
            c: macro_mean(_repo_means([r for r in records if r.category == c], lambda r: r.score or _ZERO))
            for c in categories
        },
        "per_category": per_category,
        "per_category_micro": per_category_micro,
        "per_language": per_language,
        "per_repo": per_repo,
        "find_related": {
            "overall": macro_mean(related_per_repo),
            "per_repo": related_per_repo,
            "queries": sum(1 for r in records if r.related_score is not None),
        },
        "queries_scored": sum(1 for r in records if r.score is not None),
        "queries_skipped": sum(1 for r in records if r.score is None),
        "index_s": {run.repo: run.index_s for run in runs if run.error is None},
        "index_s_total": sum(run.index_s for run in runs if run.error is None),
        "latency_ms": {"median": median(latencies), "p95": percentile(latencies, 95)},
        "latency_ms_per_repo": {
            run.repo: {
                "median": median([r.latency_ms for r in run.records]),
                "p95": percentile([r.latency_ms for r in run.records], 95),
            }
            for run in runs
            if run.records
        },
        "stats_per_repo": {run.repo: run.stats for run in runs},
        "errors": {run.repo: run.error for run in runs if run.error},
    }


def _score_json(s: QueryScore | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "ndcg10": s.ndcg10,
        "ndcg5": s.ndcg5,
        "recall10": s.recall10,
        "mrr": s.mrr,
        "ranks": list(s.ranks),
        "n_existing": s.n_existing,
    }


def _record_json(r: QueryRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "repo": r.repo,
        "index": r.index,
        "query": r.query,
        "category": r.category,
        "targets": list(r.targets),
        "missing_targets": list(r.missing_targets),
        "hits": [h.label() for h in r.hits],
        "latency_ms": r.latency_ms,
        **(_score_json(r.score) or {"skipped": True}),
    }
    if r.related_hits is not None:
        out["related_hits"] = [h.label() for h in r.related_hits]
        out["related"] = _score_json(r.related_score)
    return out


# --- command line ---------------------------------------------------------------------------------


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--annotations", type=Path, default=Path("/work/shared/bench/annotations"))
    p.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    p.add_argument("--repos", default="", help="comma-separated corpus names (default: all that are fetched)")
    p.add_argument("--systems", default="codepith,semble", help=f"comma-separated, from: {', '.join(SYSTEMS)}")
    p.add_argument(
        "--model",
        type=Path,
        default=None,
        help="model2vec folder used by every system (default: src/codepith/model/data, else /work/models/*)",
    )
    p.add_argument("--baseline", default=None, help="system the others are compared to (default: semble if run)")
    p.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results" / "latest")
    p.add_argument(
        "--index-reps", type=int, default=3, help="cold builds per corpus and backend; index time is the best"
    )
    p.add_argument("--profile", action="store_true", help="cProfile builds and timed query passes into OUT/profile/")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        return _main(args, list(sys.argv if argv is None else ["run.py", *argv]))
    except (SuiteError, BenchSystemError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace, command: list[str]) -> int:
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown or not names:
        raise BenchSystemError(f"unknown systems: {', '.join(unknown) or '(none)'} (known: {', '.join(SYSTEMS)})")
    systems = [SYSTEMS[n] for n in names]
    baseline = args.baseline or ("semble" if "semble" in names and len(names) > 1 else names[0])
    if baseline not in names:
        raise BenchSystemError(f"--baseline {baseline} is not among --systems")
    model_dir = args.model or default_model_dir(REPO_ROOT)
    if model_dir is not None and not model_dir.is_dir():
        raise BenchSystemError(f"model folder not found: {model_dir}")
    if not args.corpora.is_dir():
        raise SuiteError(f"corpora folder not found: {args.corpora}")
    if args.index_reps < 1:
        raise SuiteError("--index-reps takes a whole number from 1")
    repos = [r.strip() for r in args.repos.split(",") if r.strip()] or None
    suite = load_suite(args.annotations, args.corpora, repos)
    available = [c for c in suite if c.available]
    missing = [c.name for c in suite if not c.available]
    if not available:
        raise SuiteError(f"no corpus found under {args.corpora} (fetch them with fetch_corpora.py)")
    _log(f"model: {model_dir}; corpora: {len(available)} ({len(missing)} missing: {', '.join(missing) or '-'})")

    startup = {}
    for backend in dict.fromkeys(s.backend for s in systems):
        startup[backend] = warm_up(backend, model_dir)
        _log(f"warm-up {backend}: {startup[backend]:.2f}s")
    profile_dir = args.out / "profile" if args.profile else None
    runs: list[RepoRun] = []
    for corpus in available:
        runs.extend(run_corpus(corpus, systems, model_dir, profile_dir, args.index_reps))

    summary = {n: aggregate([r for r in runs if r.system == n]) for n in names}
    meta = {
        "command": " ".join(command),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "model": str(model_dir) if model_dir else None,
        "systems": names,
        "baseline": baseline,
        "top_k": TOP_K,
        "index_reps": args.index_reps,
        "corpora": [c.name for c in available],
        "missing_corpora": missing,
        "startup_s": startup,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "aggregation": "overall, language and category = mean over repos of per-repo means; "
        "per_category_micro = mean over queries",
    }
    result = {
        "meta": meta,
        "summary": summary,
        "queries": {n: [_record_json(r) for run in runs if run.system == n for r in run.records] for n in names},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (args.out / "results.md").write_text(render_markdown(meta, summary), encoding="utf-8")
    _log(f"wrote {args.out / 'results.json'} and {args.out / 'results.md'}")
    for n in names:
        o = summary[n]["overall"]
        lat = summary[n]["latency_ms"]
        if o is not None:
            cats = "  ".join(f"{c} {m['ndcg10']:.3f}" for c, m in summary[n]["per_category"].items() if m)
            timing = f"median {lat['median']:.2f} ms  p95 {lat['p95']:.2f} ms"
            _log(f"{n}: NDCG@10 {o['ndcg10']:.3f} ({cats})  {timing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
