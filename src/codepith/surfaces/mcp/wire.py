"""The wire: stdin/stdout moved off fds 0/1, and how file names with undecodable bytes cross JSON."""

from __future__ import annotations

import os
import select
import threading
import time

from codepith.files.names import read_name, show_bytes
from codepith.surfaces.mcp.guard import check_line


def wire_text(text: str) -> str:
    """A reply as the wire carries it: undecodable bytes as ``\\xNN`` (``show_bytes``), which
    read_snippet maps back; a JSON reply has had this done to its values already."""
    return show_bytes(text)


def from_wire_path(path: str) -> str:
    """The inverse of the names' spelling for a path argument (``files.names.read_name``): ``caf\\xe9.py``
    -> the name with the byte 0xE9, ``lit\\\\xe9.py`` -> the name holding a backslash and ``xe9``."""
    return read_name(path)


class Wire:
    """The protocol's stdin/stdout, moved off fds 0/1 so nothing else (print, a child) can touch them."""

    def __init__(self) -> None:
        self.in_fd = os.dup(0)
        self.out_fd = os.dup(1)
        os.set_inheritable(self.in_fd, False)
        os.set_inheritable(self.out_fd, False)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)  # stray writes to stdout land on stderr
        self.buf = bytearray()
        self.eof = False
        self.out_lock = threading.Lock()

    def write_line(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        with self.out_lock:
            view = memoryview(data)
            while view:
                n = os.write(self.out_fd, view)
                view = view[n:]

    def read_blocking(self) -> bytes:
        return self.read_message() or b""

    def read_message(self, timeout: float | None = None) -> bytes | None:
        """The next well-formed message line (see guard.py); a malformed one is answered here and skipped.

        b"" at end of input; None when ``timeout`` passed without a line.
        """
        while True:
            line = self.readline(timeout)
            if not line:
                return line
            checked = check_line(line)
            if checked.reply is not None:
                self.write_line(checked.reply)
            if checked.line is not None:
                return checked.line

    def readline(self, timeout: float | None = None) -> bytes | None:
        """One line (with its newline); b"" at end of input; None when ``timeout`` passed without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[: nl + 1])
                del self.buf[: nl + 1]
                return line
            if self.eof:
                line = bytes(self.buf)
                self.buf.clear()
                return line
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.in_fd], [], [], left)[0]:
                    return None
            chunk = os.read(self.in_fd, 65536)
            if not chunk:
                self.eof = True
            self.buf.extend(chunk)
