"""Candidate selection: the sampled-threshold path for large corpora picks the same top n as a
partition of the whole array, in the same order, and falls back where its threshold says nothing."""

from __future__ import annotations

import numpy as np
import pytest

from codepith.search import fusion


def _whole(scores: np.ndarray, n: int, positive_only: bool, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    with monkeypatch.context() as m:
        m.setattr(fusion, "LARGE", 10**12)  # the partition of the whole array
        return fusion.top_indices(scores, n, positive_only=positive_only)


@pytest.mark.parametrize("positive_only", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sampled_threshold_gives_the_whole_arrays_top(dtype, positive_only: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    scores = rng.permutation(np.linspace(-1.0, 1.0, 300_000)).astype(dtype)  # distinct values
    got = fusion.top_indices(scores, 100, positive_only=positive_only)
    assert np.array_equal(got, _whole(scores, 100, positive_only, monkeypatch))
    assert list(scores[got]) == sorted(scores[got], reverse=True)


def test_the_true_best_are_found_even_when_the_sample_misses_them(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    scores = np.zeros(400_000, np.float32) + 0.01
    off_sample = np.arange(1, 400_000, fusion.SAMPLE_STEP)[:150]  # none of them is a sampled position
    scores[off_sample] = np.linspace(2.0, 1.0, 150, dtype=np.float32)
    got = fusion.top_indices(scores, 100, positive_only=True)
    assert np.array_equal(got, off_sample[:100])


def test_ties_at_the_cut_go_to_the_lower_index() -> None:
    scores = np.zeros(200_000, np.float32)
    scores[[50, 150_000, 7, 199_999]] = 1.0
    got = fusion.top_indices(scores, 2)
    assert got.tolist() == [7, 50]


def test_no_usable_threshold_falls_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    scores = np.full(200_000, -1.0)
    scores[[3, 99, 123_456]] = [0.5, 0.25, 0.75]  # too few positives for the sample to see
    assert fusion.top_indices(scores, 10, positive_only=True).tolist() == [123_456, 3, 99]
    with_nan = np.random.default_rng(1).random(200_000)
    with_nan[::2] = np.nan
    assert np.array_equal(fusion.top_indices(with_nan, 10), _whole(with_nan, 10, False, monkeypatch))
