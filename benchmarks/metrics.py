"""Retrieval metrics for the dev benchmark suite (semble's definition, binary gains).

A query's targets are its `relevant` + `secondary` locations. A target is found at the rank of the
first of the top-k results whose file is the target's file and, when the target has a line span,
whose span overlaps it. NDCG uses one binary gain per result position (two targets found by the
same result count once); the ideal DCG counts only targets that exist in the corpus.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """An annotated location: a file, optionally narrowed to a 1-based inclusive line span."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def has_span(self) -> bool:
        return self.start_line is not None and self.end_line is not None

    def label(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}" if self.has_span else self.path


@dataclass(frozen=True)
class Hit:
    """One ranked result location, as every system under test reports it."""

    path: str
    start_line: int
    end_line: int

    def label(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class QueryScore:
    """Per-query metrics; `ranks` holds the 1-based rank per existing target (None = not found)."""

    ndcg10: float
    ndcg5: float
    recall10: float
    mrr: float
    ranks: tuple[int | None, ...]
    n_existing: int


METRIC_NAMES: tuple[str, ...] = ("ndcg10", "ndcg5", "recall10", "mrr")


def parse_target(raw: object) -> Target:
    """Read an annotation target: a path string or a {path, start_line, end_line} mapping."""
    if isinstance(raw, str):
        return Target(normalize_path(raw))
    if isinstance(raw, Mapping) and isinstance(raw.get("path"), str):
        start, end = raw.get("start_line"), raw.get("end_line")
        if start is not None and end is None:
            end = start
        return Target(
            normalize_path(raw["path"]),
            int(start) if start is not None else None,
            int(end) if end is not None else None,
        )
    raise ValueError(f"not an annotation target: {raw!r}")


def normalize_path(path: str) -> str:
    """Compare paths with forward slashes and without a leading './'."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def spans_overlap(hit: Hit, target: Target) -> bool:
    """True when the target has no span, or the closed line intervals intersect."""
    if not target.has_span:
        return True
    assert target.start_line is not None and target.end_line is not None
    return hit.start_line <= target.end_line and target.start_line <= hit.end_line


def hit_matches(hit: Hit, target: Target) -> bool:
    """Same file (exact relative path) and overlapping span."""
    return normalize_path(hit.path) == target.path and spans_overlap(hit, target)


def target_rank(hits: Sequence[Hit], target: Target, k: int) -> int | None:
    """1-based rank of the first of the top-k hits matching the target, or None."""
    for rank, hit in enumerate(hits[:k], 1):
        if hit_matches(hit, target):
            return rank
    return None


def dcg(gains: Sequence[int]) -> float:
    """Discounted cumulative gain of a gain list ordered by rank (rank 1 first)."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at(ranks: Iterable[int | None], n_existing: int, k: int) -> float:
    """NDCG@k from target ranks: one binary gain per position, ideal = min(k, n_existing) hits."""
    if n_existing <= 0:
        return 0.0
    gains = [0] * k
    for rank in ranks:
        if rank is not None and 1 <= rank <= k:
            gains[rank - 1] = 1
    return dcg(gains) / dcg([1] * min(k, n_existing))


def score_query(hits: Sequence[Hit], targets: Sequence[Target], k: int = 10) -> QueryScore | None:
    """Score one query against its existing targets; None when no target exists (query skipped).

    Callers pass only targets that exist in the corpus; duplicate targets are counted once.
    """
    unique = list(dict.fromkeys(targets))
    if not unique:
        return None
    ranks = tuple(target_rank(hits, t, k) for t in unique)
    found = [r for r in ranks if r is not None]
    return QueryScore(
        ndcg10=ndcg_at(ranks, len(unique), 10),
        ndcg5=ndcg_at(ranks, len(unique), 5),
        recall10=sum(1 for r in found if r <= 10) / len(unique),
        mrr=1.0 / min(found) if found else 0.0,
        ranks=ranks,
        n_existing=len(unique),
    )


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean, None for an empty input (a group with nothing to score)."""
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in [0, 100]); None for an empty input."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float | None:
    """Median, None for an empty input."""
    return statistics.median(values) if values else None


def mean_scores(scores: Iterable[QueryScore]) -> dict[str, float] | None:
    """Mean of every metric over the given query scores; None when there are none."""
    items = list(scores)
    if not items:
        return None
    return {name: sum(getattr(s, name) for s in items) / len(items) for name in METRIC_NAMES}


def macro_mean(per_repo: Mapping[str, Mapping[str, float] | None]) -> dict[str, float] | None:
    """Mean over repositories of per-repo metric means (repos with nothing scored are left out)."""
    present = [m for m in per_repo.values() if m is not None]
    if not present:
        return None
    return {name: sum(m[name] for m in present) / len(present) for name in METRIC_NAMES}
