"""Ranking settings judged on every tuning set at once: build each set's corpora once, then re-score all
their queries per setting, in semble's convention (a query with no target scores 0).

    python benchmarks/sweep_sets.py [--sets dev,second,...] [--repos] "" "SATURATION=0.4" \
        "ALPHA_SPAN=0.15;ALPHA_MID=5" "lexical.K1=1.4" "fusion.RRF_K=40"

A setting is ``NAME=VALUE`` pairs joined by ``;`` (the empty string is the current code): NAME is a
constant of ``codepith.search.engine``, ``fusion.RRF_K``, or ``lexical.K1`` / ``lexical.B`` (BM25's, which
rebuild every corpus's arrays). Each setting is undone before the next. Prints one line per setting with
each set's NDCG@10 (mean over its repositories) and, after the first, the repositories that moved by more
than 0.005. The sets: ``dev`` is ``../shared/bench`` over ``--corpora``; the others are
``benchmarks/NAME_set`` over ``--sets-root/NAME`` (laid out by their ``fetch.sh``). Chunker settings need an
index per value, so they are compared by running this once per checkout or edit.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OTHER_SETS = ("second", "third", "fourth", "fifth", "sixth")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", type=Path, default=Path("/work/corpora"), help="the dev suite's corpora")
    ap.add_argument("--sets-root", type=Path, default=Path("/work/sets"), help="holds NAME/ for each other set")
    ap.add_argument("--sets", default=",".join(("dev", *OTHER_SETS)))
    ap.add_argument("--repos", action="store_true", help="print every repository's NDCG@10 per setting")
    ap.add_argument("settings", nargs="*", default=[""])
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(1, str(HERE.parent / "src"))
    os.environ["CODEPITH_CACHE_DIR"] = tempfile.mkdtemp(prefix="codepith-sweep-sets-")
    from suite import load_suite

    import codepith
    from codepith.model.loader import load_model

    model = load_model(None)
    loaded: list[tuple[str, list[Any], dict[str, Any]]] = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name == "dev":
            annotations, corpora = HERE.parents[1] / "shared/bench/annotations", args.corpora
        elif name in OTHER_SETS:
            annotations, corpora = HERE / f"{name}_set/annotations", args.sets_root / name
        else:
            print(f"error: unknown set {name!r} (dev, {', '.join(OTHER_SETS)})", file=sys.stderr)
            return 2
        suite = [c for c in load_suite(annotations, corpora) if c.available]
        loaded.append((name, suite, {c.name: codepith.Index.from_path(c.root, model=model) for c in suite}))
    base: dict[str, float] | None = None
    for setting in args.settings:
        undo = _apply(setting, loaded)
        try:
            per_set, per_repo = _score(loaded)
        finally:
            undo()
        print(f"{setting or 'current':45} " + "  ".join(f"{k} {v:.4f}" for k, v in per_set.items()), flush=True)
        if args.repos:
            print("    " + " ".join(f"{k} {v:.3f}" for k, v in sorted(per_repo.items())), flush=True)
        if base is None:
            base = per_repo
        else:
            moved = sorted(((v - base[k], k) for k, v in per_repo.items() if abs(v - base[k]) > 0.005))
            print("    moved: " + (" ".join(f"{k} {d:+.3f}" for d, k in moved) or "none"), flush=True)
    return 0


def _apply(setting: str, loaded: list[tuple[str, list[Any], dict[str, Any]]]) -> Any:
    """Set each NAME=VALUE of ``setting``; returns what undoes them."""
    from codepith.index import corpus as corpus_module
    from codepith.index import lexical
    from codepith.search import engine, fusion

    undo: list[Any] = []
    rebuild = False
    for pair in filter(None, (p.strip() for p in setting.split(";"))):
        name, _, raw = pair.partition("=")
        value = float(raw)
        if name == "fusion.RRF_K":
            old_defaults = fusion.rrf.__defaults__
            fusion.rrf.__defaults__ = (value,)
            undo.append(lambda d=old_defaults: setattr(fusion.rrf, "__defaults__", d))
        elif name.startswith("lexical."):
            const = name.split(".", 1)[1]
            old = getattr(lexical, const)
            for module in (lexical, corpus_module):  # the segment store's BM25 imported its own copy
                setattr(module, const, value)
                undo.append(lambda m=module, c=const, o=old: setattr(m, c, o))
            rebuild = True
        else:
            old = getattr(engine, name)
            setattr(engine, name, type(old)(value))
            undo.append(lambda n=name, o=old: setattr(engine, n, o))
    if rebuild:
        _rebuild(loaded)

    def run_undo() -> None:
        for step in reversed(undo):
            step()
        if rebuild:
            _rebuild(loaded)

    return run_undo


def _rebuild(loaded: list[tuple[str, list[Any], dict[str, Any]]]) -> None:
    for _, _, indexes in loaded:
        for index in indexes.values():
            index._corpus = None
            index.refresh()


def _score(loaded: list[tuple[str, list[Any], dict[str, Any]]]) -> tuple[dict[str, float], dict[str, float]]:
    from metrics import Hit, score_query

    per_set: dict[str, float] = {}
    per_repo: dict[str, float] = {}
    for name, suite, indexes in loaded:
        means: dict[str, float] = {}
        for corpus in suite:
            values = []
            for q in corpus.queries:
                hits = [
                    Hit(r.chunk.file_path, r.chunk.start_line, r.chunk.end_line)
                    for r in indexes[corpus.name].search(q.text, top_k=10, refresh=False)
                ]
                s = score_query(hits, q.existing_targets)
                values.append(s.ndcg10 if s is not None else 0.0)
            means[corpus.name] = sum(values) / len(values)
        per_set[name] = sum(means.values()) / len(means)
        per_repo.update(means)
    return per_set, per_repo


if __name__ == "__main__":
    sys.exit(main())
