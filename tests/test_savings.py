"""Savings stats: safe concurrent appends, corrupt lines skipped, failures never reach the caller."""

from __future__ import annotations

import json
import multiprocessing
from datetime import datetime, timedelta
from pathlib import Path

import filelock
import pytest

from codepith.output import savings
from codepith.output.savings import format_summary, record, source_chars, stats_path, summary

NOW = datetime(2026, 3, 10, 15, 30).astimezone()


def _writer(cache_dir: str, tag: str, count: int) -> None:
    for i in range(count):
        record(f"search-{tag}", i, 100, 1000, cache_dir=Path(cache_dir))


def test_concurrent_writers_produce_exactly_all_lines(tmp_path: Path) -> None:
    count = 150
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, count)) for tag in ("a", "b")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    lines = stats_path(tmp_path).read_text().splitlines()
    assert len(lines) == 2 * count
    records = [json.loads(line) for line in lines]
    for tag in ("a", "b"):
        mine = [r["results"] for r in records if r["call"] == f"search-{tag}"]
        assert mine == list(range(count))


def test_record_then_summary(tmp_path: Path) -> None:
    record("search", 5, 400, 40_000, cache_dir=tmp_path)
    record("read", 1, 800, 8_000, cache_dir=tmp_path)
    s = summary(cache_dir=tmp_path)
    total = s.all_time.total
    assert (total.calls, total.results, total.returned_chars, total.source_chars) == (2, 6, 1200, 48_000)
    assert total.returned_tokens == 300 and total.source_tokens == 12_000 and total.saved_tokens == 11_700
    assert s.today.total.calls == 2
    assert s.all_time.call("search").source_chars == 40_000
    assert s.all_time.call("related").calls == 0


def test_corrupt_lines_skipped(tmp_path: Path) -> None:
    record("search", 1, 10, 100, cache_dir=tmp_path)
    with open(stats_path(tmp_path), "a") as handle:
        handle.write('{"t": 1, "call": "search", "res\n')
        handle.write("not json at all\n")
        handle.write('[1, 2]\n{"t": 1, "call": "x", "results": -1, "returned": 1, "source": 1}\n')
        handle.write("\n")
    record("search", 2, 20, 200, cache_dir=tmp_path)
    s = summary(cache_dir=tmp_path)
    assert s.all_time.total.calls == 2 and s.all_time.total.results == 3
    assert s.skipped_lines == 4
    assert "4 unreadable lines skipped" in format_summary(s)


def test_unwritable_location_does_not_raise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkey_dir = blocker / "cache"  # a folder below a regular file cannot exist, even for root
    savings._warned = False
    try:
        record("search", 1, 10, 100, cache_dir=monkey_dir)
        record("search", 1, 10, 100, cache_dir=monkey_dir)
        err = capsys.readouterr().err
        assert err.count("savings not recorded") == 1  # warned once, not per call
        assert summary(cache_dir=monkey_dir).all_time.total.calls == 0
    finally:
        savings._warned = False


def test_locked_file_drops_record_without_raising(tmp_path: Path) -> None:
    savings._warned = False
    lock = filelock.FileLock(str(stats_path(tmp_path)) + ".lock")
    tmp_path.mkdir(exist_ok=True)
    try:
        with lock:
            ctx = multiprocessing.get_context("spawn")
            proc = ctx.Process(target=_writer, args=(str(tmp_path), "locked", 1))
            proc.start()
            proc.join(60)
            assert proc.exitcode == 0
        assert not stats_path(tmp_path).exists() or stats_path(tmp_path).read_text() == ""
    finally:
        savings._warned = False


def test_summary_windows(tmp_path: Path) -> None:
    stamps = {
        "today": NOW - timedelta(hours=1),
        "yesterday": NOW - timedelta(days=1),
        "six_days": NOW - timedelta(days=6, hours=23),
        "old": NOW - timedelta(days=8),
        "ancient": NOW - timedelta(days=400),
    }
    for name, when in stamps.items():
        record(
            "search" if name != "yesterday" else "related",
            1,
            100,
            1000,
            cache_dir=tmp_path,
            now=when.timestamp(),
        )
    s = summary(cache_dir=tmp_path, now=NOW)
    assert s.today.total.calls == 1
    assert s.week.total.calls == 3
    assert s.all_time.total.calls == 5
    assert dict(s.week.by_call)["related"].calls == 1 and dict(s.week.by_call)["search"].calls == 2
    text = format_summary(s)
    assert "today" in text and "last 7 days" in text and "all time" in text and "related" in text


def test_missing_stats_file_gives_empty_summary(tmp_path: Path) -> None:
    s = summary(cache_dir=tmp_path / "none")
    assert s.all_time.total.calls == 0 and s.all_time.total.saved_ratio == 0.0
    assert "no calls recorded yet" in format_summary(s)


def test_env_var_sets_default_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEPITH_CACHE_DIR", str(tmp_path / "env-cache"))
    record("read", 1, 10, 100)
    assert (tmp_path / "env-cache" / "stats.jsonl").exists()
    assert summary().all_time.total.calls == 1


def test_source_chars_counts_distinct_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x" * 100)
    (tmp_path / "b.py").write_text("y" * 50)
    assert source_chars(tmp_path, ["a.py", "b.py", "a.py", "gone.py"]) == 150
