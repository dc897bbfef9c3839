"""The values a test run produces; frozen so they can cross modules and threads safely."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    """A ``file:line`` inside the repository (relative path), where a failure passed."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Failure:
    """One failing (or erroring) test: its name, what it said, and the repository frames, innermost first."""

    name: str
    message: str
    frames: tuple[Frame, ...] = ()
    kind: str = "failed"  # "failed", or "error" (setup, collection, build)


@dataclass(frozen=True)
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped + self.errors


@dataclass(frozen=True)
class Output:
    """Bounded capture of the merged stdout/stderr: the head and the tail, and how much was dropped."""

    head: str
    tail: str
    dropped: int  # bytes between head and tail that were not kept

    @property
    def text(self) -> str:
        if not self.dropped:
            return self.head + self.tail
        return f"{self.head}\n... ({self.dropped} bytes of output dropped) ...\n{self.tail}"


@dataclass(frozen=True)
class Exit:
    """How the process ended: its code, or killed by a signal, or killed by us at the timeout."""

    code: int | None
    signal: int | None = None
    timed_out: bool = False
    seconds: float = 0.0
    limit: float = 0.0  # the timeout it ran under

    @property
    def shell_code(self) -> int:
        """The code a shell would report: the runner's own, 124 on timeout, 128+N for signal N."""
        if self.timed_out:
            return 124
        if self.signal is not None:
            return 128 + self.signal
        return self.code if self.code is not None else 1


@dataclass(frozen=True)
class TestRun:
    """A finished run: what ran, how it ended, the counts and failures when the runner reported them."""

    runner: str
    command: str
    exit: Exit
    output: Output
    counts: Counts | None = None  # None when nothing structured could be read
    failures: tuple[Failure, ...] = ()
    source: str = "text"  # where counts and failures came from: "junit", "go-json", "libtest", "text"

    __test__ = False  # not a pytest test class
