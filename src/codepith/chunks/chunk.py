"""The unit of search: a span of one file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    file_path: str  # relative to the indexed root, '/'-separated
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    content: str
    language: str
    symbols: tuple[str, ...] = ()  # names this chunk defines (functions, classes, methods, ...)
    kind: str = "code"  # a short node label: "function", "class", "section", "lines", "module", ...

    @property
    def location(self) -> str:
        return f"{self.file_path}:{self.start_line}-{self.end_line}"
