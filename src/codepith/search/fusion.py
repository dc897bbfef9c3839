"""Reciprocal-rank fusion: combine ranked lists without calibrating their scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_K = 60.0


def top_indices(scores: np.ndarray, n: int, *, positive_only: bool = False) -> np.ndarray:
    """Indices of the n highest scores, best first (ties broken by index for determinism)."""
    if positive_only:
        cand = np.flatnonzero(scores > 0)
        if not len(cand):
            return cand
        sub = scores[cand]
    else:
        cand = np.arange(len(scores))
        sub = scores
    n = min(n, len(sub))
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    part = np.argpartition(-sub, n - 1)[:n] if n < len(sub) else np.arange(len(sub))
    order = np.lexsort((cand[part], -sub[part]))
    return cand[part][order]


def rrf(ranked_lists: Sequence[np.ndarray], weights: Sequence[float], k: float = RRF_K) -> dict[int, float]:
    """Each index's sum of ``w / (k + rank)`` (rank from 1), in order of first appearance."""
    fused: dict[int, float] = {}
    for ranked, w in zip(ranked_lists, weights, strict=True):
        ids = ranked.tolist()
        shares = (w / (k + np.arange(len(ids), dtype=np.float64) + 1.0)).tolist()  # same float steps as w / (k + r + 1)
        get = fused.get
        for idx, share in zip(ids, shares, strict=True):
            fused[idx] = get(idx, 0.0) + share
    return fused
