"""The float32 copies of segment vectors that BLAS needs: one cache per store, shared by its views.

Segments keep vectors as float16 or int8 codes; a product needs float32. A small store converts at once
(milliseconds). A large one must not make a query wait for a copy: allocating one costs 1-4 s of page
faults in a fresh process here, more than the whole search. A large int8 store (the kernel: 1.33M
vectors, a 1.36 GB copy) is never copied: streaming its codes is the faster scan (``View.dense``). A
large float16 store streams until a process has asked more than a one-shot search does; then a
background thread makes the copies, which later queries use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from codepith.store import segment as seg


class VectorCache:
    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._wanted: list[seg.Segment] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.asked = 0  # queries that found a copy missing (counted by large views only)

    def get(self, name: str) -> np.ndarray | None:
        return self._arrays.get(name)

    def fill(self, segments: Sequence[seg.Segment]) -> None:
        """Copy these segments now, and forget the ones no longer among them."""
        self._retain(segments)
        for s in segments:
            if s.name not in self._arrays:
                self._arrays[s.name] = _floats(s)

    def fill_later(self, segments: Sequence[seg.Segment]) -> None:
        """Copy these segments in a background thread (the newest list wins if one is running)."""
        with self._lock:
            self._wanted = list(segments)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="codepith-vectors", daemon=True)
                self._thread.start()

    def wait(self) -> None:
        """Until the background copies are made (for tests and benchmarks)."""
        thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._lock:
                wanted = self._wanted
                todo = next((s for s in wanted if s.name not in self._arrays), None)
                if todo is None:
                    self._retain(wanted)
                    self._thread = None
                    return
            self._arrays[todo.name] = _floats(todo)

    def _retain(self, segments: Sequence[seg.Segment]) -> None:
        keep = {s.name for s in segments}
        for name in [n for n in self._arrays if n not in keep]:
            self._arrays.pop(name, None)


def _floats(s: seg.Segment) -> np.ndarray:
    """float32 of the stored values: int8 codes stay unscaled (``View.dense`` scales the product)."""
    return np.asarray(s.vectors, dtype=np.float32)
