"""Run one argument vector (never a shell) in its own process group, with a timeout and bounded capture.

A test run may spawn servers, browsers or workers; a timeout, or the run ending, kills the whole group
so nothing it started outlives it. Groups still running when the interpreter exits are killed too
(an MCP server closed by its client must not leave a test suite behind), and ``stop_on_signals`` lets a
command that runs tests on its main thread (the CLI) end its runs, and clean up, on SIGTERM, SIGINT or
SIGHUP, which would otherwise end the process with the test group still running.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from codepith.runner.results import Exit, Output

HEAD_BYTES = 32 * 1024  # the start of the output: the command's banner, collection errors
TAIL_BYTES = 256 * 1024  # the end: summaries and failure blocks
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL at a timeout
TICK_EVERY = 10.0  # seconds between ``tick`` calls while a run goes on
READER_JOIN = 2.0  # seconds to wait for the pipe to close once the group is gone

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_live: set[int] = set()
# reentrant: a stop signal's handler runs on the main thread, which may be holding the lock at that moment
_live_lock = threading.RLock()
_stop_signal: int | None = None  # set while stop_on_signals is stopping: a group started now is killed at once


_folders: set[str] = set()  # the temporary folders of the runs in progress (run.py holds them here)


@contextmanager
def held_folder(folder: str) -> Iterator[None]:
    """While the body runs, ``folder`` is a run's temporary folder that ``stop_all`` removes."""
    with _live_lock:
        _folders.add(folder)
    try:
        yield
    finally:
        with _live_lock:
            _folders.discard(folder)


def stop_all() -> None:
    """``kill_all``, then the runs' temporary folders removed: for a process about to end at once (the
    MCP server on SIGTERM or SIGINT, or when its client leaves), whose runs never reach their own cleanup."""
    kill_all()
    with _live_lock:
        folders = list(_folders)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def end_on_signals(signals: Sequence[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
    """For a process that serves until told to end (the MCP server): on ``signals``, ``stop_all``, then
    end as the signal would. (SIGINT as a KeyboardInterrupt stopped the server's event loop, whose shutdown
    then waited on the thread blocked reading stdin: the server hung, answering nothing, until stdin
    closed.) Only the main thread can set handlers: elsewhere this changes nothing."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            signal.signal(sig, on_signal)


def kill_all() -> None:
    """Kill every process group still running (the interpreter is exiting)."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        _kill_group(pgid, signal.SIGKILL)


atexit.register(kill_all)


@dataclass
class Stop:
    """The signal that stopped the runs inside ``stop_on_signals`` (None while none came)."""

    signal: int | None = None

    @property
    def exit_code(self) -> int | None:
        """The code a shell reports for a process ended by that signal (143 for SIGTERM, 130 for SIGINT)."""
        return None if self.signal is None else 128 + self.signal


@contextmanager
def stop_on_signals(signals: Sequence[int] = STOP_SIGNALS) -> Iterator[Stop]:
    """While the body runs, ``signals`` kill every running test group (and one started later) instead of
    ending the process at once: the run returns as killed, its temporary folder is removed, and the
    caller exits as the signal asks (``Stop.exit_code``). A signal the process ignores (nohup) stays
    ignored. Only the main thread can set handlers: elsewhere this changes nothing."""
    global _stop_signal
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        global _stop_signal
        if stop.signal is None:
            stop.signal = _stop_signal = signum  # before kill_all: a group not yet listed checks it
        kill_all()

    previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}
    try:
        for sig in signals:
            if signal.getsignal(sig) != signal.SIG_IGN:
                previous[sig] = signal.signal(sig, on_signal)
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        _stop_signal = None


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Capture:
    """Keeps the first HEAD_BYTES and the last TAIL_BYTES of a stream; counts the bytes in between."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_max, self.tail_max = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self.lock:
            self._add(data)

    def _add(self, data: bytes) -> None:
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        over = len(self.tail) - self.tail_max
        if over > 0:
            del self.tail[:over]
            self.dropped += over

    def output(self) -> Output:
        def text(raw: bytes) -> str:
            return _ANSI.sub("", raw.decode("utf-8", errors="replace")).replace("\r\n", "\n")

        with self.lock:
            return Output(text(bytes(self.head)), text(bytes(self.tail)), self.dropped)


def _read_all(fd: int, capture: _Capture) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        capture.add(chunk)


def _wait(proc: subprocess.Popen[bytes], timeout: float, tick: Callable[[float], None] | None) -> bool:
    """Wait for ``proc`` up to ``timeout`` seconds, calling ``tick(elapsed)`` every TICK_EVERY; True if it ended."""
    start = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            return False
        try:
            proc.wait(timeout=min(left, TICK_EVERY) if tick is not None else left)
            return True
        except subprocess.TimeoutExpired:
            if tick is not None:
                tick(time.monotonic() - start)


def run_process(
    argv: Sequence[str],
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    tick: Callable[[float], None] | None = None,
) -> tuple[Exit, Output]:
    """Run ``argv`` in ``cwd`` in a new session (so a new process group); stdout and stderr merged.

    At ``timeout`` seconds the group gets SIGTERM, then SIGKILL after a short grace. When the leader
    exits, whatever it left running in its group is killed too. ``tick`` hears the elapsed seconds now
    and then (an MCP progress note keeps a client from giving up on a long run).
    """
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    pgid = proc.pid  # the session leader's pid is its group id
    with _live_lock:
        _live.add(pgid)
        stopping = _stop_signal is not None
    if stopping:  # the stop signal came while the group was starting, before kill_all could see it
        _kill_group(pgid, signal.SIGKILL)
    capture = _Capture()
    reader = threading.Thread(target=_read_all, args=(read_fd, capture), name="codepith-test-output", daemon=True)
    reader.start()
    timed_out = False
    try:
        if not _wait(proc, timeout, tick):
            timed_out = True
            _kill_group(pgid, signal.SIGTERM)
            try:
                proc.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                pass
    finally:
        _kill_group(pgid, signal.SIGKILL)  # grandchildren and leftovers, on every path
        proc.wait()
        with _live_lock:
            _live.discard(pgid)
    seconds = time.monotonic() - start
    reader.join(READER_JOIN)
    if not reader.is_alive():
        os.close(read_fd)
    # else a process that left the group (setsid) still holds the pipe: its reader thread (a daemon)
    # keeps the descriptor until that process ends; closing it under a blocked read could hand the
    # number to another file
    code = proc.returncode
    if timed_out:
        return Exit(None, None, True, seconds, timeout), capture.output()
    if code < 0:
        return Exit(None, -code, False, seconds, timeout), capture.output()
    return Exit(code, None, False, seconds, timeout), capture.output()
