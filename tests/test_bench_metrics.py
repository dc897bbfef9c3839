"""The benchmark harness's metric, resolution and aggregation logic on hand-made examples."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from metrics import (  # noqa: E402
    Hit,
    Target,
    macro_mean,
    ndcg_at,
    parse_target,
    percentile,
    score_query,
    spans_overlap,
    target_rank,
)
from run import QueryRecord, RepoRun, aggregate  # noqa: E402
from suite import OUTSIDE_ROOT, SuiteError, load_queries, resolve_target  # noqa: E402


def hit(path: str, start: int = 1, end: int = 10) -> Hit:
    return Hit(path, start, end)


# --- spans and matching -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hit_span", "target_span", "expected"),
    [
        ((1, 10), (5, 6), True),  # target inside the hit
        ((5, 6), (1, 10), True),  # hit inside the target
        ((1, 10), (10, 20), True),  # touching on the last line: closed intervals overlap
        ((11, 20), (1, 10), False),  # starts just after the target
        ((1, 4), (5, 9), False),  # ends just before the target
    ],
)
def test_span_overlap(hit_span: tuple[int, int], target_span: tuple[int, int], expected: bool) -> None:
    assert spans_overlap(Hit("a.py", *hit_span), Target("a.py", *target_span)) is expected


def test_path_only_target_matches_any_span_of_its_file() -> None:
    assert spans_overlap(Hit("a.py", 900, 950), Target("a.py")) is True
    assert target_rank([hit("b.py"), hit("a.py", 900, 950)], Target("a.py"), 10) == 2


def test_rank_skips_same_file_with_non_overlapping_span() -> None:
    hits = [hit("a.py", 1, 5), hit("b.py", 20, 30), hit("a.py", 20, 30)]
    assert target_rank(hits, Target("a.py", 25, 26), 10) == 3


def test_rank_requires_exact_relative_path() -> None:
    hits = [hit("pkg/a.py"), hit("a.py.bak"), hit("a.py")]
    assert target_rank(hits, Target("a.py"), 10) == 3


def test_rank_ignores_hits_beyond_k() -> None:
    hits = [hit(f"f{i}.py") for i in range(10)] + [hit("a.py")]
    assert target_rank(hits, Target("a.py"), 10) is None
    assert target_rank(hits, Target("a.py"), 11) == 11


def test_parse_target_forms() -> None:
    assert parse_target("./src/a.py") == Target("src/a.py")
    assert parse_target({"path": "a.py", "start_line": 3, "end_line": 9}) == Target("a.py", 3, 9)
    with pytest.raises(ValueError):
        parse_target({"start_line": 3})


# --- per-query metrics --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "ndcg10", "ndcg5", "mrr"),
    [
        (1, 1.0, 1.0, 1.0),
        (3, 0.5, 0.5, 1 / 3),  # 1 / log2(3 + 1)
        (7, 1 / 3, 0.0, 1 / 7),  # 1 / log2(7 + 1); outside the top 5
    ],
)
def test_single_target_rank_positions(rank: int, ndcg10: float, ndcg5: float, mrr: float) -> None:
    hits = [hit(f"other{i}.py") for i in range(1, rank)] + [hit("a.py")]
    score = score_query(hits, [Target("a.py")])
    assert score is not None
    assert score.ranks == (rank,)
    assert score.ndcg10 == pytest.approx(ndcg10)
    assert score.ndcg5 == pytest.approx(ndcg5)
    assert score.mrr == pytest.approx(mrr)
    assert score.recall10 == 1.0


def test_not_found_scores_zero() -> None:
    score = score_query([hit("x.py"), hit("y.py")], [Target("a.py")])
    assert score is not None
    assert (score.ndcg10, score.ndcg5, score.recall10, score.mrr) == (0.0, 0.0, 0.0, 0.0)
    assert score.ranks == (None,)


def test_two_targets_partial_recall_and_ideal() -> None:
    # a.py at rank 2, b.py missing from the results: DCG = 1/log2(3); ideal = 1 + 1/log2(3).
    score = score_query([hit("x.py"), hit("a.py"), hit("y.py")], [Target("a.py"), Target("b.py")])
    assert score is not None
    assert score.ndcg10 == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert score.recall10 == 0.5
    assert score.mrr == 0.5


def test_duplicate_results_count_once() -> None:
    # The same file returned twice does not earn a second gain: b.py is still missing.
    score = score_query([hit("a.py", 1, 5), hit("a.py", 6, 9)], [Target("a.py"), Target("b.py")])
    assert score is not None
    assert score.ranks == (1, None)
    assert score.ndcg10 == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_two_targets_found_by_one_result_share_its_single_gain() -> None:
    score = score_query([hit("a.py", 1, 40)], [Target("a.py", 1, 5), Target("a.py", 30, 35)])
    assert score is not None
    assert score.ranks == (1, 1)
    assert score.ndcg10 == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert score.recall10 == 1.0


def test_duplicate_targets_count_once_in_ideal() -> None:
    score = score_query([hit("a.py")], [Target("a.py"), Target("a.py")])
    assert score is not None
    assert score.ndcg10 == 1.0
    assert score.n_existing == 1


def test_query_without_existing_targets_is_skipped() -> None:
    assert score_query([hit("a.py")], []) is None


def test_ideal_is_capped_at_k() -> None:
    targets = [Target(f"t{i}.py") for i in range(12)]
    hits = [hit(f"t{i}.py") for i in range(10)]
    assert ndcg_at([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None, None], 12, 10) == pytest.approx(1.0)
    score = score_query(hits, targets)
    assert score is not None
    assert score.ndcg10 == pytest.approx(1.0)
    assert score.recall10 == pytest.approx(10 / 12)


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 95) == 19.0
    assert percentile(values, 50) == 10.0
    assert percentile([], 95) is None


# --- resolving annotations against a corpus -------------------------------------------------------------


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus_dir = tmp_path / "proj"
    root = corpus_dir / "src" / "pkg"
    root.mkdir(parents=True)
    (root / "core.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    (corpus_dir / "setup.py").write_text("x = 1\n", encoding="utf-8")
    return corpus_dir, root


def test_target_paths_relative_to_corpus_or_benchmark_root(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    from_corpus = resolve_target("src/pkg/core.py", corpus_dir, root)
    from_root = resolve_target({"path": "core.py", "start_line": 2, "end_line": 3}, corpus_dir, root)
    assert from_corpus.exists and from_corpus.target == Target("core.py")
    assert from_root.exists and from_root.target == Target("core.py", 2, 3)


def test_missing_file_and_span_past_end_do_not_exist(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    assert not resolve_target("src/pkg/gone.py", corpus_dir, root).exists
    assert not resolve_target({"path": "core.py", "start_line": 50, "end_line": 60}, corpus_dir, root).exists


def test_file_outside_benchmark_root_exists_but_never_matches(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    outside = resolve_target("setup.py", corpus_dir, root)
    assert outside.exists
    assert outside.target.path == OUTSIDE_ROOT + "setup.py"
    assert target_rank([hit("setup.py")], outside.target, 10) is None


def test_missing_targets_are_excluded_from_the_ideal(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    items = [{"query": "q", "relevant": ["core.py"], "secondary": ["gone.py"], "category": "semantic"}]
    (query,) = load_queries(items, corpus_dir, root, "test")
    assert query.existing_targets == (Target("core.py"),)
    score = score_query([hit("core.py")], query.existing_targets)
    assert score is not None and score.ndcg10 == 1.0


def test_seed_and_related_are_resolved(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    items = [
        {
            "query": "q",
            "relevant": ["core.py"],
            "category": "symbol",
            "seed": {"path": "src/pkg/core.py", "line": 2},
            "related": ["src/pkg/core.py", "nope.py"],
        }
    ]
    (query,) = load_queries(items, corpus_dir, root, "test")
    assert query.seed is not None and (query.seed.path, query.seed.line, query.seed.exists) == (
        "core.py",
        2,
        True,
    )
    assert query.existing_related == (Target("core.py"),)


def test_malformed_annotation_is_a_suite_error(corpus: tuple[Path, Path]) -> None:
    corpus_dir, root = corpus
    with pytest.raises(SuiteError):
        load_queries([{"relevant": ["core.py"]}], corpus_dir, root, "test")
    with pytest.raises(SuiteError):
        load_queries([{"query": "q", "relevant": [{"start_line": 1}]}], corpus_dir, root, "test")


# --- aggregation ------------------------------------------------------------------------------------------


def _record(repo: str, category: str, found: bool, language: str = "python") -> QueryRecord:
    hits = (hit("a.py"),) if found else (hit("x.py"),)
    return QueryRecord(
        "sys", repo, language, 0, "q", category, ("a.py",), (), hits, score_query(hits, [Target("a.py")]), 1.0
    )


def test_overall_is_mean_over_repos_not_queries() -> None:
    big = RepoRun("sys", "big", "python", 1.0, {}, [_record("big", "semantic", True) for _ in range(3)])
    small = RepoRun("sys", "small", "go", 1.0, {}, [_record("small", "semantic", False, "go")])
    summary = aggregate([big, small])
    assert summary["overall"]["ndcg10"] == pytest.approx(0.5)  # (1.0 + 0.0) / 2, not 3 / 4
    assert summary["per_language"]["python"]["ndcg10"] == 1.0
    assert summary["per_language"]["go"]["ndcg10"] == 0.0
    assert summary["per_category_micro"]["semantic"]["ndcg10"] == pytest.approx(0.75)


def test_category_means_average_per_repo_category_means() -> None:
    one = RepoRun(
        "sys",
        "one",
        "python",
        1.0,
        {},
        [_record("one", "symbol", True), _record("one", "symbol", True), _record("one", "symbol", False)],
    )
    two = RepoRun("sys", "two", "python", 1.0, {}, [_record("two", "symbol", False), _record("two", "semantic", True)])
    summary = aggregate([one, two])
    assert summary["per_category"]["symbol"]["ndcg10"] == pytest.approx((2 / 3 + 0.0) / 2)
    assert summary["per_category"]["semantic"]["ndcg10"] == 1.0  # only repo "two" has semantic queries


def test_macro_mean_skips_repos_with_nothing_scored() -> None:
    means = {"a": {"ndcg10": 1.0, "ndcg5": 1.0, "recall10": 1.0, "mrr": 1.0}, "b": None}
    result = macro_mean(means)
    assert result is not None and result["ndcg10"] == 1.0
    assert macro_mean({"b": None}) is None


def test_no_target_queries_are_skipped_but_counted_as_zero_in_the_reference_variant() -> None:
    skipped = QueryRecord("sys", "r", "python", 1, "q", "semantic", (), ("gone.py",), (hit("a.py"),), None, 1.0)
    summary = aggregate([RepoRun("sys", "r", "python", 1.0, {}, [_record("r", "semantic", True), skipped])])
    assert summary["overall"]["ndcg10"] == 1.0
    assert summary["queries_skipped"] == 1
    assert summary["overall_no_target_as_zero"]["ndcg10"] == pytest.approx(0.5)


# --- the codepith adapter, against a stand-in index ------------------------------------------------------


class _FakeChunk:
    def __init__(self, path: str, start: int, end: int) -> None:
        self.file_path, self.start_line, self.end_line = path, start, end


class _FakeResult:
    def __init__(self, path: str, start: int, end: int) -> None:
        self.chunk = _FakeChunk(path, start, end)


class _FakeCodepith:
    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def search(self, query: str, top_k: int = 10, **kwargs: object) -> list[_FakeResult]:
        self.calls.append({"query": query, "top_k": top_k, **kwargs})
        return [_FakeResult("pkg\\a.py", 3, 9)]

    def find_related(self, file_path: str, line: int, top_k: int = 5, **kwargs: object) -> list[_FakeResult]:
        from codepith.errors import PathError

        raise PathError(f"not in the index: {file_path}")


def test_codepith_adapter_passes_mode_and_refresh_and_maps_hits() -> None:
    pytest.importorskip("codepith", reason="codepith does not import yet")
    from systems import _CodepithIndex

    fake = _FakeCodepith()
    adapter = _CodepithIndex(fake, refresh=False)
    assert adapter.search("q", 10, "dense") == [Hit("pkg/a.py", 3, 9)]
    assert fake.calls == [{"query": "q", "top_k": 10, "refresh": False, "mode": "dense"}]
    _CodepithIndex(fake, refresh=True).search("q", 10, None)
    assert fake.calls[-1] == {"query": "q", "top_k": 10}
    assert adapter.related("missing.py", 1, 10) == []  # a seed outside the index is a miss, not a crash


def test_the_index_ratio_is_the_median_of_per_repo_ratios() -> None:
    from report import _median_ratio, _repo_index_s

    summary = {
        "a": {"index_s": {"x": 1.0, "y": 2.0, "z": 9.0}},
        "b": {"index_s": {"x": 4.0, "y": 2.0, "z": 3.0}},
    }
    # per repo 0.25, 1.0, 3.0: the median is 1.0, where the ratio of totals would be 12/9
    assert _median_ratio(summary, "a", "b", _repo_index_s) == "1.00x"
    summary["a"]["index_s"]["w"], summary["b"]["index_s"]["w"] = 1.0, 2.0  # four repos: mean of the middle two
    assert _median_ratio(summary, "a", "b", _repo_index_s) == "0.75x"
    assert _median_ratio({"a": {"index_s": {}}, "b": {"index_s": {}}}, "a", "b", _repo_index_s) == "-"
