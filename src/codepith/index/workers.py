"""Chunk and tokenise many files on several cores, so that no single file can fail or stall the build.

Chunking is Python plus tree-sitter and holds the GIL, so threads do not help; worker processes do.
They are started as ``python -m codepith.index.workers`` rather than through multiprocessing, whose
spawn and forkserver modes re-run the caller's ``__main__`` (unsafe for API users' scripts) and whose
fork mode is unsafe in a process with threads (the MCP server).

Jobs go to each worker through its stdin and results come back on its stdout, one pickle per file, so
no copy of the source is ever written to disk: a build killed with ``kill -9`` leaves no job files
behind, and its workers end on the broken pipe. Results come back in job order.

A worker works through its share in order, so when it dies (a segfault in a grammar, the OOM killer)
or goes silent for ``CODEPITH_FILE_TIMEOUT`` seconds (it is then killed), the file it was on is known:
that file gets line windows with the reason, and a fresh worker takes the rest of the share. A worker
that cannot even start hands its share to this process.
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from codepith.chunks.chunker import fallback_reason
from codepith.index.analyze import FileAnalysis, index_text, line_windows

log = logging.getLogger("codepith")

Job = tuple[str, str, str]  # (rel_path, text, language)

MIN_FILES = 200  # below this the workers' start-up (~0.3 s) costs more than they save
FILE_TIMEOUT_ENV = "CODEPITH_FILE_TIMEOUT"
DEFAULT_FILE_TIMEOUT = 120.0  # seconds one file may take in a worker (the slowest real file: ~1 s)
MAX_RESTARTS = 8  # per worker slot; past it the rest of the share runs in this process
_READY = "codepith-worker-ready"  # the first message: imports worked, later deaths are a file's doing
LEGACY_JOB_PREFIX = "codepith-jobs-"  # job files of older versions, in the system temp folder
LEGACY_STALE_SECONDS = 3600.0


def worker_count() -> int:
    """``CODEPITH_WORKERS`` if set (0 or 1 = in-process), else one per core, at most 4."""
    env = os.environ.get("CODEPITH_WORKERS", "").strip()
    if env.isdigit():
        return int(env)
    return min(os.cpu_count() or 1, 4)


def file_timeout() -> float:
    """``CODEPITH_FILE_TIMEOUT`` seconds if set to a positive number, else the default."""
    raw = os.environ.get(FILE_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_FILE_TIMEOUT
    return value if value > 0 else DEFAULT_FILE_TIMEOUT


def analyze_all(jobs: Sequence[Job]) -> Iterator[FileAnalysis]:
    """``index_text`` of every job, in order; never raises for a file's sake."""
    workers = worker_count()
    if workers < 2 or len(jobs) < MIN_FILES:
        for job in jobs:
            yield analyze_one(*job)
        return
    remove_legacy_job_files()
    pool = _Pool(jobs, workers, file_timeout())
    try:
        for i, job in enumerate(jobs):
            got = pool.take(i)
            yield got if got is not None else analyze_one(*job)
    finally:
        pool.close()


def analyze_one(rel_path: str, text: str, language: str) -> FileAnalysis:
    """``index_text``, or line windows with the reason if anything in it fails (the tokenizer too)."""
    try:
        return index_text(rel_path, text, language)
    except Exception as exc:  # index_text already guards chunking; one file never fails a build
        reason = fallback_reason(exc).replace("chunker error", "indexing error")
    try:
        return line_windows(rel_path, text, language, reason)
    except Exception:  # even windows failed (the tokenizer?): the file is listed, with no chunks
        return FileAnalysis([], [], reason)


def balanced_shares(sizes: Sequence[int], workers: int) -> list[list[int]]:
    """Job indices split over ``workers`` so that each gets about the same amount of text (the biggest
    first to the least loaded), each share in job order; dealing them out in turn left one worker with
    two thirds of the text on a repository of a few hundred files."""
    loads = [0] * workers
    shares: list[list[int]] = [[] for _ in range(workers)]
    for i in sorted(range(len(sizes)), key=lambda j: (-sizes[j], j)):
        w = min(range(workers), key=lambda k: (loads[k], k))
        loads[w] += sizes[i] + 1
        shares[w].append(i)
    return [sorted(share) for share in shares]


def remove_legacy_job_files(folder: str | None = None, now: float | None = None) -> int:
    """Delete job files that versions before 0.2 left in the system temp folder when killed.

    Only this user's files older than an hour: a build still running reads its job file within a second
    of writing it, so nothing live is touched. Returns how many were removed.
    """
    folder = folder or tempfile.gettempdir()
    now = time.time() if now is None else now
    uid = os.getuid() if hasattr(os, "getuid") else None
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(LEGACY_JOB_PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not entry.is_file(follow_symlinks=False) or (uid is not None and info.st_uid != uid):
                continue
            if now - info.st_mtime < LEGACY_STALE_SECONDS:
                continue
            os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


@dataclass
class _Slot:
    """One worker's share of the jobs and the process now working through it."""

    jobs: list[int]  # job indices, in the order the worker does them
    pos: int = 0  # jobs[pos] is the one in progress (every earlier one has a result)
    proc: subprocess.Popen[bytes] | None = None
    ready: bool = False
    last: float = field(default_factory=time.monotonic)  # last sign of progress
    timed_out: bool = False
    restarts: int = 0
    finished: bool = False  # no more results will come from a worker: take() runs the rest here


class _Pool:
    def __init__(self, jobs: Sequence[Job], workers: int, timeout: float) -> None:
        self._jobs = jobs
        self._timeout = timeout
        self._results: dict[int, FileAnalysis] = {}
        self._done = threading.Condition()
        self._closed = False
        self._slots = [_Slot(share) for share in balanced_shares([len(job[1]) for job in jobs], workers)]
        self._slot_of = {i: s for s in self._slots for i in s.jobs}
        for slot in self._slots:
            self._start(slot)

    def _start(self, slot: _Slot) -> None:
        """A fresh worker for the rest of ``slot``'s share (called with the lock held, or at init)."""
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "codepith.index.workers"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            log.debug("cannot start an index worker: %s", exc)
            slot.finished = True
            return
        slot.proc, slot.ready, slot.timed_out, slot.last = proc, False, False, time.monotonic()
        share = [(i, *self._jobs[i]) for i in slot.jobs[slot.pos :]]
        threading.Thread(target=self._feed, args=(proc, share), daemon=True).start()
        threading.Thread(target=self._read, args=(slot, proc), daemon=True).start()

    @staticmethod
    def _feed(proc: subprocess.Popen[bytes], share: list[tuple[Any, ...]]) -> None:
        stream = proc.stdin
        if stream is None:
            return
        try:
            for job in share:
                pickle.dump(job, stream, protocol=pickle.HIGHEST_PROTOCOL)
            stream.close()
        except (OSError, ValueError):  # the worker died or was killed: the reader deals with it
            pass

    def _read(self, slot: _Slot, proc: subprocess.Popen[bytes]) -> None:
        stream: IO[bytes] | None = proc.stdout
        try:
            while stream is not None:
                try:
                    msg = pickle.load(stream)
                except EOFError:
                    break
                with self._done:
                    if msg == _READY:
                        slot.ready = True
                    else:
                        idx, result = msg
                        self._results[idx] = result
                        slot.pos += 1
                    slot.last = time.monotonic()
                    self._done.notify_all()
        except Exception as exc:  # a broken stream counts as a dead worker
            log.debug("index worker stream failed: %s", exc)
        code = proc.wait()
        with self._done:
            self._after_exit(slot, code)
            self._done.notify_all()

    def _after_exit(self, slot: _Slot, code: int) -> None:
        """Blame the file in progress (if the worker got that far) and restart for the rest."""
        if slot.pos >= len(slot.jobs) or self._closed:
            slot.finished = True
            return
        if not slot.ready:  # died before its first file: the worker, not a file, is broken
            log.debug("index worker failed to start (exit %s); indexing in this process", code)
            slot.finished = True
            return
        idx = slot.jobs[slot.pos]
        rel, text, language = self._jobs[idx]
        if slot.timed_out:
            reason = f"worker timed out (> {self._timeout:g}s)"
        else:
            reason = f"worker crashed (exit {code})"
        log.warning("%s while chunking %s; indexed as line windows", reason, rel)
        self._results[idx] = line_windows(rel, text, language, reason)
        slot.pos += 1
        if slot.pos >= len(slot.jobs):
            slot.finished = True
        elif slot.restarts >= MAX_RESTARTS:
            slot.finished = True
        else:
            slot.restarts += 1
            self._start(slot)

    def take(self, i: int) -> FileAnalysis | None:
        """The result for job i, waiting for its worker; None when this process must do it."""
        slot = self._slot_of[i]
        with self._done:
            while i not in self._results and not slot.finished:
                self._done.wait(timeout=min(1.0, self._timeout / 4))
                self._watchdog()
            return self._results.pop(i, None)

    def _watchdog(self) -> None:
        """Kill workers silent for longer than the per-file timeout (called with the lock held)."""
        now = time.monotonic()
        for slot in self._slots:
            proc = slot.proc
            if (
                proc is not None
                and not slot.finished
                and not slot.timed_out
                and slot.pos < len(slot.jobs)
                and now - slot.last > self._timeout
            ):
                slot.timed_out = True
                proc.kill()

    def close(self) -> None:
        with self._done:
            self._closed = True
        for slot in self._slots:
            proc = slot.proc
            if proc is None:
                continue
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _serve() -> int:
    """The worker: announce readiness, then answer each job read from stdin on stdout."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    pickle.dump(_READY, out)
    out.flush()
    while True:
        try:
            idx, rel_path, text, language = pickle.load(inp)
        except EOFError:
            break
        result = analyze_one(rel_path, text, language)
        pickle.dump((idx, result), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_serve())
    except (BrokenPipeError, KeyboardInterrupt):  # the parent is gone: nobody wants the rest
        sys.exit(1)
