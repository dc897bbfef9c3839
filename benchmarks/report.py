"""Render the benchmark summary as markdown tables, systems side by side against a baseline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_METRIC_LABELS = (("ndcg10", "NDCG@10"), ("ndcg5", "NDCG@5"), ("recall10", "Recall@10"), ("mrr", "MRR"))


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _diff(value: float | None, base: float | None) -> str:
    return "-" if value is None or base is None else f"{value - base:+.3f}"


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or base is None or base == 0 else f"{value / base:.2f}x"


def _metric(m: dict[str, float] | None, key: str) -> float | None:
    return None if m is None else m.get(key)


_Getter = Callable[[dict[str, Any]], "float | None"]
_Row = tuple[str, _Getter, bool]


def _section(section: str, key: str) -> _Getter:
    return lambda s: _metric(s[section], key)


def _keyed(section: str, name: str) -> _Getter:
    """NDCG@10 of one named group (category, language or repo) of a system's summary."""
    return lambda s: _metric(s[section].get(name), "ndcg10")


def _no_target_zero(s: dict[str, Any]) -> float | None:
    return _metric(s["overall_no_target_as_zero"], "ndcg10")


def _related_ndcg(s: dict[str, Any]) -> float | None:
    return _metric(s["find_related"]["overall"], "ndcg10")


def _index_total(s: dict[str, Any]) -> float | None:
    return s["index_s_total"] if s["index_s"] else None


def _latency(which: str) -> _Getter:
    return lambda s: s["latency_ms"][which]


def _repo_index_s(repo: str) -> _Getter:
    return lambda s: s["index_s"].get(repo)


def _repo_latency(repo: str) -> _Getter:
    return lambda s: (s["latency_ms_per_repo"].get(repo) or {}).get("median")


def _median_ratio(summary: dict[str, Any], system: str, baseline: str, get: Callable[[str], _Getter]) -> str:
    """Median over repositories of system/baseline (what issue 10's ratios are judged by), or '-'."""
    repos = set(summary[system]["index_s"]) & set(summary[baseline]["index_s"])
    ratios = []
    for repo in repos:
        a, b = get(repo)(summary[system]), get(repo)(summary[baseline])
        if a is not None and b:
            ratios.append(a / b)
    if not ratios:
        return "-"
    ratios.sort()
    mid = len(ratios) // 2
    value = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
    return f"{value:.2f}x"


def _table(
    title_col: str,
    rows: Sequence[_Row],
    systems: Sequence[str],
    baseline: str,
    summary: dict[str, Any],
    digits: int = 3,
) -> list[str]:
    """One row per (label, getter, is_time); quality rows show a diff vs baseline, time rows a ratio."""
    others = [s for s in systems if s != baseline]
    head = [title_col, *systems, *[f"{s} vs {baseline}" for s in others]]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for label, get, is_time in rows:
        values = {s: get(summary[s]) for s in systems}
        cells = [_fmt(values[s], 2 if is_time else digits) for s in systems]
        compare = _ratio if is_time else _diff
        cells += [compare(values[s], values[baseline]) for s in others]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return lines


def render_markdown(meta: dict[str, Any], summary: dict[str, Any]) -> str:
    """Overall, per-category, per-language and per-repo tables plus timings."""
    systems: list[str] = meta["systems"]
    baseline: str = meta["baseline"]
    out = [
        "# Retrieval benchmark",
        "",
        f"- command: `{meta['command']}`",
        f"- date: {meta['date']}; model: `{meta['model']}`; top {meta['top_k']}",
        f"- corpora: {len(meta['corpora'])} ({', '.join(meta['corpora'])})"
        + (f"; missing: {', '.join(meta['missing_corpora'])}" if meta["missing_corpora"] else ""),
        "- queries scored: "
        + ", ".join(f"{s} {summary[s]['queries_scored']}" for s in systems)
        + f"; skipped (no target exists): {summary[systems[0]]['queries_skipped']}",
        f"- {meta['aggregation']}",
        f"- find_related: queries with a seed ({summary[systems[0]]['find_related']['queries']} scored)",
        "- latency: warm (second pass over the queries), per query, pooled over all corpora",
        "",
        "## Overall",
        "",
    ]
    overall_rows: list[_Row] = [(label, _section("overall", key), False) for key, label in _METRIC_LABELS]
    overall_rows += [
        ("NDCG@10, no-target queries as 0 (semble's reference convention)", _no_target_zero, False),
        ("find_related NDCG@10", _related_ndcg, False),
        ("index time, total (s)", _index_total, True),
        ("query latency median (ms)", _latency("median"), True),
        ("query latency p95 (ms)", _latency("p95"), True),
    ]
    out += _table("metric", overall_rows, systems, baseline, summary)
    startup = ", ".join(f"{k} {v:.2f}s" for k, v in meta["startup_s"].items())
    out += ["", f"Warm-up (imports + model load + one-file index, excluded above): {startup}", ""]
    reps = meta.get("index_reps", 1)
    for s in systems:
        if s != baseline:
            out.append(
                f"- {s} vs {baseline}, median over repositories of the per-repo ratio: index time "
                f"{_median_ratio(summary, s, baseline, _repo_index_s)} (best of {reps} cold builds each), "
                f"warm query median {_median_ratio(summary, s, baseline, _repo_latency)}"
            )
    out.append("")

    categories = sorted({c for s in systems for c in summary[s]["per_category"]})
    out += ["## Per category (NDCG@10, mean over repos)", ""]
    out += _table("category", [(c, _keyed("per_category", c), False) for c in categories], systems, baseline, summary)
    languages = sorted({lang for s in systems for lang in summary[s]["per_language"]})
    out += ["", "## Per language (NDCG@10, mean over repos)", ""]
    out += _table("language", [(x, _keyed("per_language", x), False) for x in languages], systems, baseline, summary)
    repos = sorted({r for s in systems for part in ("per_repo", "errors") for r in summary[s][part]})
    out += ["", "## Per repo (NDCG@10)", ""]
    out += _table("repo", [(r, _keyed("per_repo", r), False) for r in repos], systems, baseline, summary)
    out += ["", "## Per repo: index time (s)", ""]
    out += _table("repo", [(r, _repo_index_s(r), True) for r in repos], systems, baseline, summary)
    out += ["", "## Per repo: median warm query latency (ms)", ""]
    out += _table("repo", [(r, _repo_latency(r), True) for r in repos], systems, baseline, summary)
    errors = [(s, r, e) for s in systems for r, e in summary[s]["errors"].items()]
    if errors:
        out += ["", "## Errors", ""] + [f"- {s} / {r}: {e}" for s, r, e in errors]
    return "\n".join(out) + "\n"
