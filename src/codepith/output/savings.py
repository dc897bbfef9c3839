"""How much reading codepith saved: one JSON line per call, summed into today / 7 days / all time.

"Source" is what the agent would have read without codepith: the whole files the results come from.
Recording is best effort: a locked, unwritable or corrupt stats file never breaks a search.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import filelock
import platformdirs

STATS_FILE = "stats.jsonl"
LOCK_TIMEOUT = 0.5  # seconds; a busy lock means the record is dropped, not that the caller waits
CHARS_PER_TOKEN = 4

_warned = False


def default_cache_dir() -> Path:
    """``$CODEPITH_CACHE_DIR`` when set, else the platform's user cache folder for codepith."""
    env = os.environ.get("CODEPITH_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("codepith"))


def stats_path(cache_dir: Path | None = None) -> Path:
    return (cache_dir if cache_dir is not None else default_cache_dir()) / STATS_FILE


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        try:
            print(f"codepith: savings not recorded ({message})", file=sys.stderr)
        except (OSError, ValueError):
            pass


def source_chars(root: Path, paths: Iterable[str]) -> int:
    """Size of the distinct files ``paths`` (relative to ``root``): what reading them whole would cost.

    Uses the size on disk (bytes), close enough to characters for an estimate; missing files count 0.
    """
    total = 0
    for rel in set(paths):
        try:
            total += (Path(root) / rel).stat().st_size
        except OSError:
            continue
    return total


def record(
    call: str,
    results: int,
    returned_chars: int,
    source_chars: int,
    *,
    cache_dir: Path | None = None,
    now: float | None = None,
) -> None:
    """Append one line for a search/related/read call. Never raises: failures warn once on stderr."""
    line = json.dumps(
        {
            "t": round(time.time() if now is None else now, 3),
            "call": call,
            "results": int(results),
            "returned": int(returned_chars),
            "source": int(source_chars),
        },
        separators=(",", ":"),
    )
    data = (line + "\n").encode("utf-8")
    try:
        path = stats_path(cache_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)  # one write per line: readers never see half a record from us
            finally:
                os.close(fd)
    except filelock.Timeout:
        _warn_once("stats file is busy")
    except Exception as err:  # stats must never break the caller
        _warn_once(str(err) or type(err).__name__)


@dataclass(frozen=True)
class Totals:
    calls: int = 0
    results: int = 0
    returned_chars: int = 0
    source_chars: int = 0

    @property
    def returned_tokens(self) -> int:
        return self.returned_chars // CHARS_PER_TOKEN

    @property
    def source_tokens(self) -> int:
        return self.source_chars // CHARS_PER_TOKEN

    @property
    def saved_tokens(self) -> int:
        return max(0, self.source_tokens - self.returned_tokens)

    @property
    def saved_ratio(self) -> float:
        """Share of the source tokens not read (0.0 when there was nothing to save)."""
        return self.saved_tokens / self.source_tokens if self.source_tokens else 0.0

    def plus(self, results: int, returned: int, source: int) -> Totals:
        return Totals(
            self.calls + 1,
            self.results + results,
            self.returned_chars + returned,
            self.source_chars + source,
        )


@dataclass(frozen=True)
class Window:
    name: str
    total: Totals = Totals()
    by_call: tuple[tuple[str, Totals], ...] = ()  # sorted by call name

    def call(self, name: str) -> Totals:
        return dict(self.by_call).get(name, Totals())


@dataclass(frozen=True)
class Summary:
    today: Window
    week: Window  # the last 7 days, today included
    all_time: Window
    skipped_lines: int = 0  # corrupt lines ignored
    path: Path = field(default_factory=Path)

    @property
    def windows(self) -> tuple[Window, Window, Window]:
        return (self.today, self.week, self.all_time)


class _Acc:
    def __init__(self, name: str) -> None:
        self.name = name
        self.total = Totals()
        self.by_call: dict[str, Totals] = {}

    def add(self, call: str, results: int, returned: int, source: int) -> None:
        self.total = self.total.plus(results, returned, source)
        self.by_call[call] = self.by_call.get(call, Totals()).plus(results, returned, source)

    def window(self) -> Window:
        return Window(self.name, self.total, tuple(sorted(self.by_call.items())))


def _parse(line: str) -> tuple[float, str, int, int, int] | None:
    try:
        rec = json.loads(line)
        if not isinstance(rec, dict):
            return None
        t, call = rec["t"], rec["call"]
        nums = (rec["results"], rec["returned"], rec["source"])
        if not isinstance(call, str) or isinstance(t, bool) or not isinstance(t, (int, float)):
            return None
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in nums):
            return None
        return float(t), call, nums[0], nums[1], nums[2]
    except (ValueError, KeyError, TypeError):
        return None


def summary(*, cache_dir: Path | None = None, now: datetime | None = None) -> Summary:
    """Totals for today (local time), the last 7 days and all time; corrupt lines are skipped."""
    path = stats_path(cache_dir)
    current = now if now is not None else datetime.now()
    if current.tzinfo is None:
        current = current.astimezone()
    day_start = current.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    week_start = (current - timedelta(days=7)).timestamp()
    today, week, every = _Acc("today"), _Acc("last 7 days"), _Acc("all time")
    skipped = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                if not raw.strip():
                    continue
                rec = _parse(raw)
                if rec is None:
                    skipped += 1
                    continue
                t, call, results, returned, source = rec
                every.add(call, results, returned, source)
                if t >= week_start:
                    week.add(call, results, returned, source)
                if t >= day_start:
                    today.add(call, results, returned, source)
    except OSError:
        pass
    return Summary(today.window(), week.window(), every.window(), skipped, path)


def _num(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def _row(label: str, totals: Totals) -> str:
    saved = f"{_num(totals.saved_tokens)} ({totals.saved_ratio:.0%})"
    return f"{label:<14}{totals.calls:>7}{_num(totals.returned_tokens):>10}{_num(totals.source_tokens):>10}  {saved}"


def format_summary(s: Summary) -> str:
    """A small table for people: calls and estimated tokens returned vs. whole files, per window and call."""
    lines = [
        "codepith savings (estimated tokens = characters / 4)",
        f"{'':<14}{'calls':>7}{'returned':>10}{'files':>10}  saved",
    ]
    for window in s.windows:
        lines.append(_row(window.name, window.total))
        for name, totals in window.by_call:
            lines.append(_row(f"  {name}", totals))
    if s.skipped_lines:
        lines.append(f"({s.skipped_lines} unreadable lines skipped in {s.path})")
    if not s.all_time.total.calls:
        lines.append(f"no calls recorded yet ({s.path})")
    return "\n".join(lines)
