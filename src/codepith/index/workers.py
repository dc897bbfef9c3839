"""Chunk and tokenise many files on several cores.

Chunking is Python plus tree-sitter and holds the GIL, so threads do not help; worker processes do.
They are started as ``python -m codepith.index.workers JOBFILE`` rather than through multiprocessing,
whose spawn and forkserver modes re-run the caller's ``__main__`` (unsafe for API users' scripts) and
whose fork mode is unsafe in a process with threads (the MCP server). Each worker streams one pickled
``(index, chunks, terms)`` per file on its stdout; results come back in job order. Any failure falls
back to doing the remaining files in this process, so the answer never depends on the workers.
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from typing import IO, Any

from codepith.chunks.chunk import Chunk
from codepith.index.analyze import index_text
from codepith.index.lexical import TermCounts

log = logging.getLogger("codepith")

Job = tuple[str, str, str]  # (rel_path, text, language)
Result = tuple[list[Chunk], list[TermCounts]]

MIN_FILES = 200  # below this the workers' start-up (~0.3 s) costs more than they save


def worker_count() -> int:
    """``CODEPITH_WORKERS`` if set (0 or 1 = in-process), else one per core, at most 4."""
    env = os.environ.get("CODEPITH_WORKERS", "").strip()
    if env.isdigit():
        return int(env)
    return min(os.cpu_count() or 1, 4)


def analyze_all(jobs: Sequence[Job]) -> Iterator[Result]:
    """``index_text`` of every job, in order."""
    workers = worker_count()
    if workers < 2 or len(jobs) < MIN_FILES:
        for job in jobs:
            yield index_text(*job)
        return
    pool = _Pool(jobs, workers)
    try:
        for i, job in enumerate(jobs):
            got = pool.take(i)
            yield got if got is not None else index_text(*job)
    finally:
        pool.close()


class _Pool:
    def __init__(self, jobs: Sequence[Job], workers: int) -> None:
        self._results: dict[int, Result] = {}
        self._failed: set[int] = set()  # worker slots that died; their jobs run in-process
        self._done = threading.Condition()
        self._finished = [False] * workers
        self._procs: list[subprocess.Popen[bytes]] = []
        self._files: list[str] = []
        self._readers: list[threading.Thread] = []
        self._workers = workers
        for w in range(workers):
            share = [(i, *jobs[i]) for i in range(w, len(jobs), workers)]
            fd, path = tempfile.mkstemp(prefix="codepith-jobs-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(share, fh, protocol=pickle.HIGHEST_PROTOCOL)
            self._files.append(path)
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "codepith.index.workers", path],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as exc:
                log.debug("cannot start an index worker: %s", exc)
                self._failed.add(w)
                self._finished[w] = True
                continue
            self._procs.append(proc)
            reader = threading.Thread(target=self._read, args=(w, proc), daemon=True)
            reader.start()
            self._readers.append(reader)

    def _read(self, slot: int, proc: subprocess.Popen[bytes]) -> None:
        stream: IO[bytes] | None = proc.stdout
        try:
            while stream is not None:
                try:
                    idx, chunks, terms = pickle.load(stream)
                except EOFError:
                    break
                with self._done:
                    self._results[idx] = (chunks, terms)
                    self._done.notify_all()
            ok = proc.wait() == 0
        except Exception as exc:  # a broken stream: the remaining jobs run in-process
            log.debug("index worker failed: %s", exc)
            ok = False
        with self._done:
            if not ok:
                self._failed.add(slot)
            self._finished[slot] = True
            self._done.notify_all()

    def take(self, i: int) -> Result | None:
        """The result for job i, waiting for its worker; None when that worker failed."""
        slot = i % self._workers
        with self._done:
            while i not in self._results and not self._finished[slot]:
                self._done.wait()
            return self._results.pop(i, None)

    def close(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for path in self._files:
            try:
                os.unlink(path)
            except OSError:
                pass


def _serve(job_file: str) -> int:
    with open(job_file, "rb") as fh:
        share: list[tuple[Any, ...]] = pickle.load(fh)
    out = sys.stdout.buffer
    for idx, rel_path, text, language in share:
        chunks, terms = index_text(rel_path, text, language)
        pickle.dump((idx, chunks, terms), out, protocol=pickle.HIGHEST_PROTOCOL)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
