"""Asking the kernel for pages of a segment's map before a search reads them, and only those missing.

A fault in a file map reads the pages around it (128 KB on most disks, 8 MB on this VM's) and waits for
them, one fault at a time. A search of a large store reads a little of every segment (a head, a few
thousand scattered code rows, a slice of postings per term), so with a cold page cache it read the
segments nearly whole, serially: 845 MB for the kernel's first search. Here each range is asked for with
``MADV_WILLNEED`` before it is read, all segments at once, so the disk works on them together; and a
range already in memory is not asked for (``mincore``), since thousands of asks cost a warm search
20 ms. Everything here is advice: where the platform has no ``madvise`` or ``mincore``, nothing is asked
or every range is, and what is read is the same either way.
"""

from __future__ import annotations

import ctypes
import mmap
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

PAGE = mmap.PAGESIZE
ROW_GAP_PAGES = 4  # ranges whose pages are closer than this are asked for as one


def page_ranges(starts: np.ndarray, length: int, gap: int = ROW_GAP_PAGES) -> list[tuple[int, int]]:
    """(page-aligned offset, bytes) ranges covering ``length`` bytes from each offset in ``starts``, runs
    of pages at most ``gap`` pages apart joined: a few thousand scattered rows in a few hundred asks."""
    if not len(starts) or length <= 0:
        return []
    starts = np.sort(np.asarray(starts, np.int64))
    first = starts // PAGE
    last = np.maximum.accumulate((starts + length - 1) // PAGE)
    breaks = np.flatnonzero(first[1:] > last[:-1] + gap) + 1
    begin = np.concatenate(([0], breaks))
    end = np.concatenate((breaks - 1, [len(starts) - 1]))
    return [(int(a) * PAGE, (int(b) - int(a) + 1) * PAGE) for a, b in zip(first[begin], last[end], strict=True)]


def _mincore() -> Any:
    """libc's ``mincore``, or None where it cannot be had. The process's own symbols hold libc:
    ``find_library("c")`` would run ``ldconfig -p`` in a child at every import (1.4-4 ms, in every process)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.mincore
    except Exception:  # noqa: BLE001 - no C library by that name (Windows), no mincore in it: no looking
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    fn.restype = ctypes.c_int
    return fn


_MINCORE = _mincore()


FRESH_SECONDS = 30.0  # an array looked at (and asked for) is not looked at again for this long
LONG_RUN_PAGES = 4  # a run of postings this long is asked for before it is read; shorter ones just fault


class MapPages:
    """The pages of one read-only map: which are in memory, and asking for the others.

    An array read whole (a head, the keys) is looked at (mincore, a page at a time in the kernel: up to
    8 ms for the kernel's 62 heads) at most once in ``FRESH_SECONDS``: a burst of searches pays it once,
    and a page dropped meanwhile is read when it is touched, as it would be without any of this. Rows
    (``ask_rows``) are looked at every time, since each search wants other rows."""

    def __init__(self, mm: mmap.mmap) -> None:
        self._map = mm
        self._size = len(mm)
        # the map's address, for mincore (a one-byte view; the arrays hold the map open anyway)
        self._addr = int(np.frombuffer(mm, np.uint8, count=1).ctypes.data) if self._size else 0
        self._looked: dict[int, float] = {}  # array offset -> when it was last looked at

    def advise(self, advice: int | None, spans: Iterable[tuple[int, int]]) -> bool:
        """``madvise`` these (offset, bytes) spans; False where it cannot be done."""
        if advice is None or not self._size:
            return False
        try:
            for offset, length in spans:
                if length > 0:
                    start = offset - offset % PAGE
                    self._map.madvise(advice, start, min(length + offset - start, self._size - start))
        except (OSError, ValueError):
            return False
        return True

    def absent(self, offset: int, length: int) -> np.ndarray | None:
        """Per page from ``offset``'s page through the range's last: True where not in memory (None:
        unknown, when mincore cannot be asked)."""
        if _MINCORE is None or length <= 0 or not self._size:
            return None
        start = offset - offset % PAGE
        span = min(offset + length, self._size) - start
        vec = np.zeros((span + PAGE - 1) // PAGE, np.uint8)
        if _MINCORE(self._addr + start, span, vec.ctypes.data) != 0:
            return None
        return (vec & 1) == 0

    def _due(self, offset: int) -> bool:
        """Whether the array at ``offset`` is to be looked at now (and is taken as looked at)."""
        now = time.monotonic()
        if now - self._looked.get(offset, -FRESH_SECONDS) < FRESH_SECONDS:
            return False
        self._looked[offset] = now
        return True

    def ask(self, offset: int, length: int) -> None:
        """Ask for a whole array now, unless it is in memory."""
        if self._due(offset):
            got = self.absent(offset, length)
            if got is None or got.any():
                self._will_need(offset, length)

    def ask_rows(self, span: tuple[int, int], starts: np.ndarray, length: int) -> None:
        """Ask for ``length`` bytes at each of the offsets ``starts`` into the array at ``span`` (file
        offset, bytes), those with a page not in memory, nearby ones as one range. Looked at every
        time: each search wants other rows (0.9 ms over the kernel's 62 segments once their pages are
        mapped in this process, more before)."""
        if not len(starts):
            return
        base = span[0]
        got = self.absent(*span)
        starts = np.asarray(starts, np.int64)
        if got is not None:
            if not got.any():
                return
            first = base - base % PAGE
            pages = np.minimum((base + starts - first) // PAGE, len(got) - 1)
            ends = np.minimum((base + starts + length - 1 - first) // PAGE, len(got) - 1)
            starts = starts[got[pages] | got[ends]]
        for offset, size in page_ranges(base + starts, length):
            self._will_need(offset, size)

    def ask_long_runs(self, base: int, item: int, runs: Iterable[tuple[int, int]]) -> None:
        """Ask for items ``lo:hi`` of each run of ``LONG_RUN_PAGES`` pages or more of the array at file
        offset ``base`` (``item`` bytes each): read a page at a time, such a run would wait for each."""
        for lo, hi in runs:
            if (hi - lo) * item >= LONG_RUN_PAGES * PAGE:
                self._will_need(base + lo * item, (hi - lo) * item)

    def _will_need(self, offset: int, length: int) -> None:
        if length <= 0 or not hasattr(mmap, "MADV_WILLNEED"):
            return
        start = offset - offset % PAGE
        try:
            self._map.madvise(mmap.MADV_WILLNEED, start, min(length + offset - start, self._size - start))
        except (OSError, ValueError):
            pass  # advice only
