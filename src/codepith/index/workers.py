"""Prepare many files on several cores, so that no single file can fail or stall the build.

Chunking and embedding are Python plus tree-sitter and hold the GIL, so threads do not help; worker
processes do. On Linux, in a process with no other threads, workers are forked: they start in a few
milliseconds with the grammars and the model already loaded, do each file's whole work (chunks, term bags,
vectors, the segment's encoding: ``finish``) and send back a few buffers per file, so that even a build of a
hundred files uses both cores. Elsewhere, or where threads run (the MCP server), they are started as
``python -m codepith.index.workers`` rather than through multiprocessing, whose spawn and forkserver modes
re-run the caller's ``__main__`` (unsafe for API users' scripts); those start in ~0.3 s, chunk only, and
are used from ``MIN_FILES`` files.

A forked worker has the jobs in memory and sends results on a pipe; a started one reads its jobs on stdin
and answers on stdout, one pickle per file, so no copy of the source is ever written to disk: a build
killed with ``kill -9`` leaves no job files behind, and its workers end on the broken pipe. Results come
back in job order.

Forked workers take their jobs from one queue, the biggest first, and say which job they took before
working on it; a started worker works through a share fixed in advance, in order. Either way, when a
worker dies (a segfault in a grammar, the OOM killer) or goes silent for ``CODEPITH_FILE_TIMEOUT`` seconds
(it is then killed), the file it was on is known: that file gets line windows with the reason, and a fresh
worker takes the rest of the queue or the share. Jobs no worker can take are done in this process.

A build of fewer than ``MIN_FILES`` files forked only to use another core (no isolation asked) forks one
worker fewer, and this process takes jobs from the same queue while it waits, each marked in its journal
first as an in-process build's are: that saves a fork and half the results' pickles.

Builds too small for a pool chunk in-process, except in a long-lived process that asked to ``keep_helper``
(the MCP server): there one started worker, kept between builds, chunks them with the same timeout.
"""

from __future__ import annotations

import atexit
import faulthandler
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from codepith.chunks.chunker import fallback_reason, load_grammars
from codepith.index.analyze import FileAnalysis, index_text, line_windows
from codepith.index.forking import can_fork
from codepith.index.journal import Journal, file_timeout
from codepith.index.supervise import die_with_parent
from codepith.memory import prefer_small_pages

log = logging.getLogger("codepith")

Job = tuple[str, str, str]  # (rel_path, text, language)
R = TypeVar("R")
Finish = Callable[[str, FileAnalysis], R]  # (rel_path, analysis) -> what the build keeps of the file

MIN_FILES = 200  # below this, started workers' start-up (~0.3 s) costs more than they save
# ... and forked ones' unless a second worker would take this much text off the longest path: the
# forks, their first writes to shared pages and the results' pickles cost a small build 6-10 ms in a
# fresh process. The longest path is half the text, or the biggest file when that is more: a tree of a
# few big files (sinatra's 83,000 characters, most in one file) gains nothing from a second worker, one
# of many small files (axios's 135,000 in 65) does. Measured in fresh processes, alternating builds:
# see benchmarks/README.md, "Forking by what a second worker saves".
FORK_SAVING_CHARS = 40_000
MAX_RESTARTS = 8  # per worker slot; past it the rest of the share runs in this process
_READY = "codepith-worker-ready"  # the first message: imports worked, later deaths are a file's doing
_DONE = "codepith-worker-done"  # a forked worker's last message: every job it took is answered
LEGACY_JOB_PREFIX = "codepith-jobs-"  # job files of older versions, in the system temp folder
LEGACY_STALE_SECONDS = 3600.0


def env_workers() -> int | None:
    """``CODEPITH_WORKERS`` when set to a whole number."""
    env = os.environ.get("CODEPITH_WORKERS", "").strip()
    return int(env) if env.isdigit() else None


def worker_count() -> int:
    """``CODEPITH_WORKERS`` if set (0 or 1 = in-process), else one per core, at most 4."""
    env = env_workers()
    return env if env is not None else min(os.cpu_count() or 1, 4)


def prepare_all(jobs: Sequence[Job], finish: Finish[R], journal: Path | None = None) -> Iterator[R]:
    """``finish(rel, analyze_one(*job))`` of every job, in order; never raises for a file's sake.

    ``journal`` names the file an in-process build is on (see ``_in_process``)."""
    workers = worker_count()
    fork = workers >= 2 and can_fork()
    isolate = len(jobs) >= MIN_FILES  # from this many files, workers also keep a crashing grammar out of here
    if fork:
        small = len(jobs) < 2 or (not isolate and fork_saving([len(job[1]) for job in jobs]) < FORK_SAVING_CHARS)
    else:
        small = workers < 2 or not isolate
    if small:
        helper = _helper if _helper is not None and env_workers() != 0 else None
        if helper is not None:
            for job, analysis in zip(jobs, helper.analyze(jobs), strict=True):
                yield finish(job[0], analysis if analysis is not None else analyze_one(*job))
            return
        yield from _in_process(jobs, finish, journal)
        return
    if fork:
        load_grammars(job[2] for job in jobs)
    else:
        remove_legacy_job_files()
    # A build small enough to chunk in-process, forked only to use a second core: this process takes
    # jobs from the workers' queue as well, as an in-process build does (its journal marked before each
    # file), instead of waiting on a second fork. Not when a suspect from a build that died in a parse is
    # among the jobs: those go to workers.
    helping = Journal(journal) if fork and not isolate else None
    if helping is not None and helping.suspects & {job[0] for job in jobs}:
        helping.close(())
        helping = None
    pool = _Pool(jobs, workers - (helping is not None), file_timeout(), finish, fork, helping)
    answered = False
    try:
        for i, job in enumerate(jobs):
            got = pool.take(i)
            if i == len(jobs) - 1:
                answered = True  # before the last yield: the caller may take its time with it
            yield got if got is not None else finish(job[0], analyze_one(*job))
    finally:
        pool.close(answered)


def fork_saving(sizes: Sequence[int]) -> int:
    """Characters a second worker takes off the build's longest path: the text, less the larger of
    its half and the biggest file (which one worker must do alone)."""
    total = sum(sizes)
    return total - max((total + 1) // 2, max(sizes, default=0))


def _in_process(jobs: Sequence[Job], finish: Finish[R], journal: Path | None) -> Iterator[R]:
    """Each job in this process, its path in the journal first (see journal.py), except the suspects a
    build that died in a parse left there: each of those alone in a worker. Forking for every small build
    would cost it a third of its time (``keep_helper``)."""
    record = Journal(journal)
    try:
        for job in jobs:
            if job[0] in record.suspects:
                record.mark("")
                yield _isolated(job, finish)
                continue
            record.mark(job[0])
            yield finish(job[0], analyze_one(*job))
    finally:  # also on an exception or ^C here: this process is alive, so no parse killed it
        record.close(job[0] for job in jobs)


def _isolated(job: Job, finish: Finish[R]) -> R:
    """One job in a worker of its own (forked where safe, else started), with the per-file timeout."""
    log.info("chunking %s in a worker: the last build stopped while chunking it", job[0])
    pool = _Pool([job], 1, file_timeout(), finish, can_fork())
    answered = False
    try:
        got = pool.take(0)
        answered = True
    finally:
        pool.close(answered)
    return got if got is not None else finish(job[0], line_windows(*job, "worker could not start"))


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


class _Forked:
    """A forked worker, with the part of ``subprocess.Popen``'s interface the pool uses."""

    def __init__(self, pid: int, stdout: IO[bytes]) -> None:
        self.pid = pid
        self.stdout: IO[bytes] | None = stdout
        self.stdin: IO[bytes] | None = None
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def _reap(self, flags: int) -> int | None:
        with self._lock:
            if self.returncode is None:
                try:
                    pid, status = os.waitpid(self.pid, flags)
                except ChildProcessError:
                    self.returncode = -signal.SIGKILL
                else:
                    if pid:
                        self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def wait(self) -> int:
        code = self._reap(0)
        return -signal.SIGKILL if code is None else code

    def kill(self) -> None:
        with self._lock:
            if self.returncode is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


_Proc = subprocess.Popen[bytes] | _Forked

# Forked workers that said they were done and are exiting. Linux tears a process's memory down before it
# closes its files, which took a worker with the model and grammars mapped 4-6 ms (a small build's
# close waited for it); the build goes on at once, and the next pool (or ``reap_exited``) reaps them.
_exiting: list[_Forked] = []
_exiting_lock = threading.Lock()
_reap_at_exit = False
DONE_WAIT = 0.05  # seconds a finished pool's close waits for a worker's last word before it kills it


def _reap_later(proc: _Forked) -> None:
    """Leave a done worker to exit on its own; this process reaps it before it ends itself at the latest,
    so that no zombie outlives it and the worker's CPU time is counted as this process's children's."""
    global _reap_at_exit
    with _exiting_lock:
        _exiting.append(proc)
        if not _reap_at_exit:
            atexit.register(reap_exited, True)
            _reap_at_exit = True


def reap_exited(wait: bool = False) -> int:
    """Reap the done workers that have exited (all of them with ``wait``); returns how many are left."""
    with _exiting_lock:
        for proc in list(_exiting):
            if (proc.wait() if wait else proc.poll()) is not None:
                _exiting.remove(proc)
        return len(_exiting)


@dataclass
class _Slot:
    """One worker's share of the jobs and the process now working through it."""

    jobs: list[int]  # job indices, in the order the worker does them
    pos: int = 0  # jobs[pos] is the one in progress (every earlier one has a result)
    proc: _Proc | None = None
    ready: bool = False
    last: float = field(default_factory=time.monotonic)  # last sign of progress
    timed_out: bool = False
    restarts: int = 0
    finished: bool = False  # no more results will come from a worker: take() runs the rest here
    current: int | None = None  # a worker fed by the shared queue: the job it took and has not answered
    said_done: bool = False  # the worker answered all it took and is exiting: reaped later (``_exiting``)
    reader: threading.Thread | None = None


class _Pool(Generic[R]):
    def __init__(
        self,
        jobs: Sequence[Job],
        workers: int,
        timeout: float,
        finish: Finish[R],
        fork: bool,
        helping: Journal | None = None,
    ) -> None:
        self._jobs = jobs
        self._timeout = timeout
        self._finish = finish
        self._fork = fork
        # job -> (finished, value): a forked worker's results are finished; a started worker's, and the
        # line windows this process makes for a crashed file, are analyses that take() finishes
        self._results: dict[int, tuple[bool, Any]] = {}
        self._done = threading.Condition()
        self._closed = False
        # Forked workers take their jobs from one queue, the biggest first, each the next when it is free:
        # shares fixed in advance ended up to 30-70 ms apart on 150-330 ms builds (one worker slowed by the
        # other's files, by this process's reader threads, by the machine). Started workers keep shares.
        self._queue = _job_queue([len(job[1]) for job in jobs]) if fork and 0 < len(jobs) <= _QUEUE_MAX else None
        if self._queue is not None:
            self._slots = [_Slot([]) for _ in range(min(workers, len(jobs)))]
        else:
            self._slots = [_Slot(share) for share in balanced_shares([len(job[1]) for job in jobs], workers)]
        self._slot_of = {i: s for s in self._slots for i in s.jobs}
        reap_exited()
        # this process's own share of the queue (``take``): its journal, and the jobs it did
        self._helping = helping if self._queue is not None else None
        self._helped: list[str] = []
        if helping is not None and self._helping is None:
            helping.close(())
        # Every first worker is started before any thread of the pool's, so the forks see one thread.
        started = [(slot, self._launch(slot)) for slot in self._slots]
        for slot, share in started:
            self._watch(slot, share)

    def _start(self, slot: _Slot) -> None:
        """A fresh worker for the rest of ``slot``'s share (called with the lock held)."""
        self._watch(slot, self._launch(slot))

    def _launch(self, slot: _Slot) -> list[tuple[Any, ...]]:
        """Start the process; returns the jobs still to send it (none for a forked worker)."""
        share = slot.jobs[slot.pos :]
        try:
            if self._fork:
                proc: _Proc = self._fork_worker(share)
                jobs: list[tuple[Any, ...]] = []
            else:
                proc = _start_worker()
                jobs = [(i, *self._jobs[i]) for i in share]
        except OSError as exc:
            log.debug("cannot start an index worker: %s", exc)
            slot.finished = True
            return []
        slot.proc, slot.ready, slot.timed_out, slot.last = proc, False, False, time.monotonic()
        return jobs

    def _watch(self, slot: _Slot, jobs: list[tuple[Any, ...]]) -> None:
        proc = slot.proc
        if proc is None or slot.finished:
            return
        if jobs:
            threading.Thread(target=self._feed, args=(proc, jobs), daemon=True).start()
        slot.reader = threading.Thread(target=self._read, args=(slot, proc), daemon=True)
        slot.reader.start()

    def _fork_worker(self, share: list[int]) -> _Forked:
        read_fd, write_fd = os.pipe()
        parent = os.getpid()
        main = threading.current_thread() is threading.main_thread()
        # The tokenizer's own threads do not survive a fork; told so by the environment, the child's
        # tokenizer works serially and does not print its fork warning. This process keeps its setting.
        before = os.environ.get(_TOKENIZERS_ENV)
        os.environ[_TOKENIZERS_ENV] = "false"
        try:
            pid = os.fork()
            if pid == 0:  # the child: never returns
                _forked_main(self._jobs, share, self._finish, write_fd, parent, main, self._queue)
        finally:
            if before is None:
                os.environ.pop(_TOKENIZERS_ENV, None)
            else:
                os.environ[_TOKENIZERS_ENV] = before
        os.close(write_fd)
        return _Forked(pid, os.fdopen(read_fd, "rb"))

    @staticmethod
    def _feed(proc: _Proc, share: list[tuple[Any, ...]]) -> None:
        if proc.stdin is not None:
            _write_jobs(proc.stdin, share, close=True)

    def _read(self, slot: _Slot, proc: _Proc) -> None:
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
                    elif msg == _DONE:
                        slot.said_done = True
                    elif isinstance(msg, int):  # a queue worker took this job
                        slot.current = msg
                    else:
                        idx, result = msg
                        self._results[idx] = (self._fork, result)
                        if self._queue is None:
                            slot.pos += 1
                        else:
                            slot.current = None
                    slot.last = time.monotonic()
                    self._done.notify_all()
        except Exception as exc:  # a broken stream counts as a dead worker
            log.debug("index worker stream failed: %s", exc)
        finally:
            if stream is not None:
                stream.close()
        if slot.said_done and isinstance(proc, _Forked):
            _reap_later(proc)
            with self._done:
                slot.finished = True
                self._done.notify_all()
            return
        code = proc.wait()
        with self._done:
            self._after_exit(slot, code)
            self._done.notify_all()

    def _after_exit(self, slot: _Slot, code: int) -> None:
        """Blame the file in progress (if the worker got that far) and restart for the rest: of its share,
        or of the queue (a queue worker that ended cleanly between jobs found the queue empty)."""
        if self._queue is None:
            idx = slot.jobs[slot.pos] if slot.pos < len(slot.jobs) else None
            done = idx is None
        else:
            idx, slot.current = slot.current, None
            done = idx is None and code == 0
        if done or self._closed:
            slot.finished = True
            return
        if not slot.ready:  # died before its first file: the worker, not a file, is broken
            log.debug("index worker failed to start (exit %s); indexing in this process", code)
            slot.finished = True
            return
        if idx is not None:
            self._blame(slot, idx, code)
            if self._queue is None:
                slot.pos += 1
                if slot.pos >= len(slot.jobs):
                    slot.finished = True
                    return
        self._restart(slot)

    def _blame(self, slot: _Slot, idx: int, code: int) -> None:
        """Line windows, with the reason, for the job a worker died or hung on."""
        rel, text, language = self._jobs[idx]
        if slot.timed_out:
            reason = f"worker timed out (> {self._timeout:g}s)"
        else:
            reason = f"worker crashed (exit {code})"
        log.warning("%s while chunking %s; indexed as line windows", reason, rel)
        self._results[idx] = (False, line_windows(rel, text, language, reason))

    def _restart(self, slot: _Slot) -> None:
        """A fresh worker for the rest of the slot's jobs, unless it has been restarted too often."""
        if slot.restarts >= MAX_RESTARTS:
            slot.finished = True
        else:
            slot.restarts += 1
            self._start(slot)

    def _given_up(self, i: int) -> bool:
        """No worker will answer job i: its own has finished (shares), or every worker has (the queue)."""
        if self._queue is None:
            return self._slot_of[i].finished
        return all(slot.finished for slot in self._slots)

    def take(self, i: int) -> R | None:
        """The result for job i, waiting for its worker (or, helping, doing the queue's next job meanwhile);
        None when this process must do it."""
        while True:
            with self._done:
                if i in self._results or self._given_up(i):
                    got = self._results.pop(i, None)
                    break
                if self._helping is None:
                    self._done.wait(timeout=min(1.0, self._timeout / 4))
                    self._watchdog()
                    continue
            self._help()
        if got is None:
            return None
        finished, value = got
        return value if finished else self._finish(self._jobs[i][0], value)

    def _help(self) -> None:
        """The queue's next job, done here, its path in the journal first; at the queue's end, stop helping."""
        journal, queue_fd = self._helping, self._queue
        raw = os.read(queue_fd, _QUEUE_ITEM) if journal is not None and queue_fd is not None else b""
        if journal is None or len(raw) != _QUEUE_ITEM:
            with self._done:
                self._end_help()
            return
        j = int.from_bytes(raw, "little")
        rel, text, language = self._jobs[j]
        journal.mark(rel)
        done = self._finish(rel, analyze_one(rel, text, language))
        self._helped.append(rel)
        with self._done:
            self._results[j] = (True, done)
            self._done.notify_all()

    def _end_help(self) -> None:
        """Done helping: the journal keeps only the suspects of other batches (called with the lock held)."""
        if self._helping is not None:
            self._helping.close(self._helped)
            self._helping = None

    def _watchdog(self) -> None:
        """Kill workers silent for longer than the per-file timeout (called with the lock held)."""
        now = time.monotonic()
        for slot in self._slots:
            proc = slot.proc
            if (
                proc is not None
                and not slot.finished
                and not slot.timed_out
                and (slot.pos < len(slot.jobs) if self._queue is None else slot.current is not None)
                and now - slot.last > self._timeout
            ):
                slot.timed_out = True
                proc.kill()

    def close(self, answered: bool = False) -> None:
        """Stop the workers. ``answered``: every job has its result, so a forked worker is only saying it
        is done; its last word is waited for (briefly), and its exit is not."""
        with self._done:
            self._closed = True
            self._end_help()  # also after an exception here: this process is alive, no parse killed it
        for slot in self._slots:
            if answered and self._fork and slot.reader is not None:
                slot.reader.join(DONE_WAIT)
            proc = slot.proc
            if proc is None or slot.said_done:
                continue
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if self._queue is not None:
            os.close(self._queue)
            self._queue = None


_helper: _Helper | None = None
_helper_lock = threading.Lock()
HELPER_START_TIMEOUT = 60.0  # seconds for a started helper to import codepith and say it is ready


def keep_helper() -> None:
    """From now on, builds too small for the pool (most of a long-lived process's: one edited file, a small
    repository) are chunked in one started worker that this process keeps, not in-process.

    For the MCP server: in-process, a grammar that hangs on one file (held in C, with the GIL) or crashes
    takes the whole server and every later request with it; the helper costs one start, off this core
    (~0.3 s, once), and about a millisecond a file. One-shot processes do not call this: a fork costs a
    small build 30-90 ms here, a third of its time (measured with ``benchmarks/cold_index.py``), and a
    user sees a hung command where an agent would see a dead server. ``CODEPITH_WORKERS=0`` turns it off."""
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = _Helper()
            _helper.start()


def drop_helper() -> None:
    """Stop the kept helper, if any, and its reader thread: builds chunk in-process (or fork) again until
    ``keep_helper`` is called anew (a server shutting down, a test that needs this process to fork)."""
    global _helper
    with _helper_lock:
        helper, _helper = _helper, None
    if helper is not None:
        with helper._lock:
            helper._stop()
            drainer = helper._drainer
        if drainer is not None:
            drainer.join(5)


_GONE = object()  # the helper's output ended


class _Helper:
    """One started worker that outlives builds, used one batch at a time (see ``keep_helper``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: queue.Queue[Any] = queue.Queue()
        self._broken = False  # it could not even start: chunk in-process, as before
        self._next = 0  # job ids are never reused, so a result of a dead batch is never taken for another
        self._reason = ""  # why the last helper was stopped, for the file it was on
        self._ready = False
        self._drainer: threading.Thread | None = None

    def analyze(self, jobs: Sequence[Job]) -> Iterator[FileAnalysis | None]:
        """Each job's analysis in order; None for a job this process must do itself (no helper)."""
        with self._lock:
            at = 0
            try:
                while at < len(jobs):
                    if not self._ensure():
                        yield from (None for _ in jobs[at:])
                        return
                    base = self._next
                    self._next += len(jobs) - at
                    self._send([(base + k, *job) for k, job in enumerate(jobs[at:])])
                    while at < len(jobs):
                        got = self._take(base)
                        if got is None:  # hung or crashed on jobs[at]: blame it, restart for the rest
                            yield self._blame(jobs[at])
                            at += 1
                            break
                        yield got
                        at += 1
                        base += 1
            finally:
                if at < len(jobs):  # the caller stopped early: its results would be read by the next batch
                    self._stop()

    def start(self) -> None:
        """Start the process now, so that its imports overlap this process's work (the first batch waits)."""
        with self._lock:
            if not self._broken and self._proc is None:
                self._spawn()

    def _spawn(self) -> None:
        try:
            proc = _start_worker()
        except OSError as exc:
            log.debug("cannot start the chunking helper: %s", exc)
            self._broken = True
            return
        self._proc, self._out, self._ready = proc, queue.Queue(), False
        self._drainer = threading.Thread(target=_drain, args=(proc, self._out), daemon=True)
        self._drainer.start()

    def _ensure(self) -> bool:
        """A running helper that has said it is ready (started again if it died); False if it cannot be."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            if not self._broken:
                self._spawn()
        if self._broken or self._proc is None:
            return False
        if not self._ready:
            try:
                self._ready = self._out.get(timeout=HELPER_START_TIMEOUT) == _READY
            except queue.Empty:
                pass
            if not self._ready:
                log.debug("the chunking helper failed to start; chunking in this process")
                self._stop()
                self._broken = True
                return False
        return True

    def _send(self, jobs: list[tuple[Any, ...]]) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        threading.Thread(target=_write_jobs, args=(proc.stdin, jobs), daemon=True).start()

    def _take(self, want: int) -> FileAnalysis | None:
        """The result for job ``want``; None (the helper then killed) if it died or went silent."""
        timeout = file_timeout()
        while True:
            try:
                msg = self._out.get(timeout=timeout)
            except queue.Empty:
                self._reason = f"worker timed out (> {timeout:g}s)"
                self._stop()
                return None
            if msg is _GONE:
                proc = self._proc
                code = proc.wait() if proc is not None else -1
                self._reason = f"worker crashed (exit {code})"
                self._stop()
                return None
            idx, result = msg
            if idx == want:
                return result

    def _blame(self, job: Job) -> FileAnalysis:
        rel, text, language = job
        log.warning("%s while chunking %s; indexed as line windows", self._reason, rel)
        return line_windows(rel, text, language, self._reason)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _drain(proc: subprocess.Popen[bytes], out: queue.Queue[Any]) -> None:
    """Every message of one helper process into ``out``, then ``_GONE``."""
    stream = proc.stdout
    try:
        while stream is not None:
            out.put(pickle.load(stream))
    except Exception:  # noqa: BLE001 - end of output, or a broken stream: the process is done either way
        pass
    out.put(_GONE)


def _start_worker() -> subprocess.Popen[bytes]:
    """A started worker (``_serve``): jobs on its stdin, results on its stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "codepith.index.workers"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _write_jobs(stream: IO[bytes], jobs: list[tuple[Any, ...]], *, close: bool = False) -> None:
    """In a thread of its own, so that a big batch never fills both pipes and stalls both processes;
    ``close``: no more jobs will follow (a pool's worker then ends after the last)."""
    try:
        for job in jobs:
            pickle.dump(job, stream, protocol=pickle.HIGHEST_PROTOCOL)
        if close:
            stream.close()
        else:
            stream.flush()
    except (OSError, ValueError):  # the worker died or was killed: the reader deals with it
        pass


_TOKENIZERS_ENV = "TOKENIZERS_PARALLELISM"


def _forked_main(
    jobs: Sequence[Job],
    share: list[int],
    finish: Finish[Any],
    write_fd: int,
    parent: int,
    main: bool,
    queue_fd: int | None = None,
) -> None:
    """A forked worker's whole life: each job of its share (or taken from the queue), finished, pickled
    to the pipe; then exit without running anything of the parent's (no atexit hooks, no flush of its
    buffers)."""
    code = 1
    try:
        if main:  # forked by a pool thread (a restart), the death signal would come when that thread ends
            die_with_parent()
        # Only the pipes stay open: the parent's files, locks and other workers' pipes are not this
        # process's to hold (a copy of a pipe's read end would keep a dead parent's workers writing).
        low = 3
        for fd in sorted(fd for fd in (write_fd, queue_fd) if fd is not None):
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, _max_fd())
        out = os.fdopen(write_fd, "wb")
        pickle.dump(_READY, out)
        out.flush()
        for i in share if queue_fd is None else _taken(queue_fd, out):
            if os.getppid() != parent:
                break
            rel, text, language = jobs[i]
            with _own_deadline() if not main else nullcontext():  # (main: the death signal ends an orphan)
                done = finish(rel, analyze_one(rel, text, language))
            pickle.dump((i, done), out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
        code = 0
        if os.getppid() == parent:
            pickle.dump(_DONE, out)
        out.close()  # the parent's end sees the stream close now, not after this process is torn down
    except BaseException:  # noqa: BLE001 - a broken pipe or ^C: nobody wants the rest
        code = 1
    finally:
        os._exit(code)


_QUEUE_MAX = 16_000  # jobs a queue holds: 4 bytes each, written whole into a pipe (64 KiB on Linux)
_QUEUE_ITEM = 4


def _job_queue(sizes: Sequence[int]) -> int | None:
    """A pipe holding every job's index, the biggest job first, whose write end is already closed: each
    worker reads the next index when it is free (a pipe read of 4 bytes is never split between readers),
    and an empty pipe reads as its end. Returns the read end, or None when the pipe cannot hold them all
    (a user over the kernel's pipe-buffer quota gets 4 KiB pipes): the pool then uses fixed shares."""
    order = sorted(range(len(sizes)), key=lambda j: (-sizes[j], j))
    data = b"".join(i.to_bytes(_QUEUE_ITEM, "little") for i in order)
    read_fd, write_fd = os.pipe()
    try:
        os.set_blocking(write_fd, False)  # nobody reads yet: a full pipe must not block this process
        written = os.write(write_fd, data)
    except BlockingIOError:
        written = 0
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    if written != len(data):
        os.close(read_fd)
        return None
    return read_fd


def _taken(queue_fd: int, out: IO[bytes]) -> Iterator[int]:
    """The jobs this worker takes from the queue, each announced before it is worked on, so that the
    parent knows which file a death or a hang belongs to."""
    while len(raw := os.read(queue_fd, _QUEUE_ITEM)) == _QUEUE_ITEM:
        i = int.from_bytes(raw, "little")
        pickle.dump(i, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        yield i


def _max_fd() -> int:
    try:
        return max(256, int(os.sysconf("SC_OPEN_MAX")))
    except (ValueError, OSError):
        return 65536


def _serve() -> int:
    """The worker: announce readiness, then answer each job read from stdin on stdout."""
    prefer_small_pages()  # as in the process that started it
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    pickle.dump(_READY, out)
    out.flush()
    while True:
        try:
            idx, rel_path, text, language = pickle.load(inp)
        except EOFError:
            break
        with _own_deadline():
            result = analyze_one(rel_path, text, language)
        pickle.dump((idx, result), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
    return 0


@contextmanager
def _own_deadline() -> Iterator[None]:
    """A worker ends itself (exit 1) on a file that takes twice the per-file timeout: its parent kills it
    at the timeout, so only an orphan gets that far, one whose parent died while a parse hung, which
    would otherwise spin for ever. faulthandler's watchdog is a C thread, so a parse holding the GIL in C
    does not stop it, as it would a Python thread. It costs ~47 us a file (a thread started and joined),
    so workers forked by the main thread, which the death signal ends with their parent, go without."""
    global _sink
    if _sink is None:
        _sink = open(os.devnull, "w")  # noqa: SIM115 - kept for the worker's life
    faulthandler.dump_traceback_later(2 * file_timeout(), exit=True, file=_sink)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


_sink: IO[str] | None = None  # where a worker's own deadline writes its (unwanted) traceback


if __name__ == "__main__":
    try:
        sys.exit(_serve())
    except (BrokenPipeError, KeyboardInterrupt):  # the parent is gone: nobody wants the rest
        sys.exit(1)
