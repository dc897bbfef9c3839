"""The file an in-process build is chunking, written down before its parse, so that dying in it once
does not mean dying in it every time.

A build too small for worker processes chunks in-process (see ``workers.py``), where a grammar that
segfaults kills the process and one that hangs holds it for ever, in C and with the GIL. Two records
name the file in flight:

- the index's ``parsing`` file (one ``pwrite`` a file, no fsync: it has to survive the process, not the
  machine). The next build of that index reads its *suspects* and chunks each one alone in a worker,
  where a crash or a hang costs that file line windows. They stay listed until a build has got past them
  in-process, so two crashing files cannot take turns;
- under ``supervise.py``, a page shared with the parent process: a counter that moves with every file
  and the file's name, so the parent can tell a child stuck on one file, and a death in a parse from any
  other.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable
from pathlib import Path

FILE_TIMEOUT_ENV = "CODEPITH_FILE_TIMEOUT"
DEFAULT_FILE_TIMEOUT = 120.0  # seconds one file may take (the slowest real file: ~1 s)
PAGE_SIZE = 4096
_COUNTER = struct.Struct("<Q")
_shared: mmap.mmap | None = None  # set in a supervised child


def file_timeout() -> float:
    """``CODEPITH_FILE_TIMEOUT`` seconds if set to a positive number, else the default: how long a worker,
    or a supervised command, may stay on one file before it is killed."""
    raw = os.environ.get(FILE_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_FILE_TIMEOUT
    return value if value > 0 else DEFAULT_FILE_TIMEOUT


def share_page(page: mmap.mmap) -> None:
    """From now on, this process publishes the file it is chunking on ``page`` (a supervised child)."""
    global _shared
    _shared = page


def page_state(page: mmap.mmap) -> tuple[int, str]:
    """(how many files were started, the one in flight or "")."""
    count = _COUNTER.unpack_from(page, 0)[0]
    raw = page[_COUNTER.size : PAGE_SIZE]
    return count, raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _publish(rel: str) -> None:
    page = _shared
    if page is None:
        return
    name = rel.encode("utf-8", "surrogateescape")[: PAGE_SIZE - _COUNTER.size - 1]
    page[_COUNTER.size : _COUNTER.size + len(name) + 1] = name + b"\0"
    _COUNTER.pack_into(page, 0, _COUNTER.unpack_from(page, 0)[0] + 1)


class Journal:
    """The ``parsing`` record of one in-process batch: ``suspects`` from the last build that died in a
    parse, ``mark`` before each file, ``close`` at the end."""

    def __init__(self, path: Path | None) -> None:
        self.suspects: frozenset[str] = frozenset(_read(path))
        self._fd: int | None = None
        if path is not None:
            try:
                self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:  # a read-only cache: the build goes on without the record
                self._fd = None

    def mark(self, rel: str) -> None:
        """``rel`` is next ("" = none: a suspect chunked apart, or the end)."""
        self._write(rel, self.suspects)
        _publish(rel)

    def close(self, done: Iterable[str]) -> None:
        """The batch is over, ``done`` were its files: its suspects are cleared, a later batch's kept."""
        left = self.suspects - set(done)
        self._write("", left)
        _publish("")
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, current: str, suspects: Iterable[str]) -> None:
        if self._fd is None:
            return
        # NUL-separated, the file in flight first, ended by an empty entry; pwrite does not truncate, so
        # whatever a longer earlier record left after the end is ignored
        data = "\0".join([current, *sorted(suspects)]).encode("utf-8", "surrogateescape") + b"\0\0"
        try:
            os.pwrite(self._fd, data, 0)
        except OSError:
            pass


def _read(path: Path | None) -> set[str]:
    if path is None:
        return set()
    try:
        raw = path.read_bytes()
    except OSError:
        return set()
    end = raw.find(b"\0\0")
    body = raw[: end if end >= 0 else len(raw)]
    return {name.decode("utf-8", "surrogateescape") for name in body.split(b"\0") if name}
