"""A one-shot command that may build an index runs in a forked child, watched by the process that
started it, so that no file's parse can kill or hang the command.

Small builds chunk in-process (a fork per build would cost a small repository a third of its build
time), where a grammar that segfaults kills the process and one that hangs holds it in C, deaf to ^C.
Forking once, at start-up, while the process is small, costs about a millisecond. The parent waits:

- a child that dies while it chunks a file (the page ``journal.py`` shares names one) is run again;
  the index's journal then names the file, which the new run chunks alone in a worker;
- a child that stays on one file for ``CODEPITH_FILE_TIMEOUT`` seconds is killed and run again, the same;
- ^C, or a SIGTERM or SIGHUP to the parent, reaches the child; a child that does not end within a second
  of it (stuck in C) is killed;
- any other end is the command's: its exit status, or its signal, raised again in the parent after one line
  that names it (a SIGKILL is most often the out-of-memory killer's).

``CODEPITH_SUPERVISE=0`` runs the command in this process.
"""

from __future__ import annotations

import mmap
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable

from codepith.index.journal import PAGE_SIZE, file_timeout, page_state, share_page

SUPERVISE_ENV = "CODEPITH_SUPERVISE"
MAX_RUNS = 4  # a first run and up to three more, each with one more file chunked apart
_GRACE = 1.0  # seconds a child has to end after ^C or SIGTERM before it is killed
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


def can_supervise() -> bool:
    if os.environ.get(SUPERVISE_ENV, "").strip() == "0":
        return False
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and hasattr(os, "waitid")
        and threading.active_count() == 1
    )


def supervised(command: Callable[[], int]) -> int:
    """``command()``'s exit status, from a child process (see the module's docstring). In the child this
    returns what ``command`` returns; the parent returns, or dies of, the last child's end."""
    if not can_supervise():
        return command()
    page = mmap.mmap(-1, PAGE_SIZE)
    status = 0
    for run in range(MAX_RUNS):
        page[:] = bytes(PAGE_SIZE)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            die_with_parent()
            share_page(page)
            return command()
        try:
            status, stuck, name, interrupted = _wait(pid, page)
        except KeyboardInterrupt:  # ^C before the handler was in place
            _kill(pid)
            os.waitpid(pid, 0)
            return 130
        if interrupted:
            return 128 + interrupted
        if run + 1 < MAX_RUNS and name and (stuck or os.WIFSIGNALED(status)):
            what = f"took over {file_timeout():g} s" if stuck else f"was killed by signal {os.WTERMSIG(status)}"
            print(f"codepith: warning: chunking {name} {what}; running again with that file in a worker",
                  file=sys.stderr, flush=True)  # fmt: skip
            continue
        break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        print(f"codepith: error: {_died_of(sig)}", file=sys.stderr, flush=True)
        try:
            signal.signal(sig, signal.SIG_DFL)  # SIGKILL and SIGSTOP have no handler to reset (EINVAL)
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), sig)
        return 128 + sig  # when the signal cannot end this process
    return os.waitstatus_to_exitcode(status)


def _died_of(sig: int) -> str:
    """One line for a child that a signal ended (not one this process passed on, nor one in a parse)."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    if sig == signal.SIGKILL:
        return (
            "the command was killed (SIGKILL), as the out-of-memory killer ends a process; what the index had "
            "committed is kept, and the next run resumes from it"
        )
    return f"the command was ended by {name}; what the index had committed is kept, and the next run resumes from it"


def _wait(pid: int, page: mmap.mmap) -> tuple[int, bool, str, int]:
    """(wait status, killed for staying on one file, the file it was on or "", the signal that ended it:
    ^C, SIGTERM or SIGHUP to this process, or 0)."""
    asked: list[tuple[float, int]] = []  # when ^C or a SIGTERM came, and which

    def forward(signum: int, _frame: object) -> None:
        if not asked:
            asked.append((time.monotonic(), signum))
        try:
            if signum != signal.SIGINT:  # ^C reaches the whole foreground group, the child included
                os.kill(pid, signum)
        except ProcessLookupError:
            pass

    before = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    try:
        fd: int | None = os.pidfd_open(pid)
    except OSError:  # a kernel or sandbox without pidfds: poll the child's state instead
        fd = None
    try:
        poller = select.poll()
        if fd is not None:
            poller.register(fd, select.POLLIN)
        timeout = file_timeout()
        count, name = page_state(page)
        since = time.monotonic()
        stuck = False
        while not _ended(poller, fd, pid):
            now = time.monotonic()
            seen, name = page_state(page)
            if seen != count or not name:
                count, since = seen, now
            elif now - since > timeout:
                stuck = True
                _kill(pid)
            if asked and now - asked[0][0] > _GRACE:
                _kill(pid)
        _, status = os.waitpid(pid, 0)
        if not stuck:
            name = page_state(page)[1]
        return status, stuck, name, asked[0][1] if asked else 0
    finally:
        if fd is not None:
            os.close(fd)
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _ended(poller: select.poll, fd: int | None, pid: int) -> bool:
    """Whether the child has ended, waiting up to a quarter of a second for it."""
    if fd is not None:
        return bool(poller.poll(250))
    time.sleep(0.05)
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def die_with_parent() -> None:
    """Ask Linux to kill this process (SIGKILL) when the thread that forked it ends: a parent killed with
    -9 takes its forked children with it (a supervised command, a build's workers)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:  # noqa: BLE001 - without it an orphan finishes its work, or ends on a broken pipe
        pass
