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
    binds: tuple[str, ...] = ()  # module-level values it binds (`g = LocalProxy(...)`): named, not defined

    @property
    def names(self) -> tuple[str, ...]:
        """What a search for a name finds here: its definitions, then the values it binds."""
        return self.symbols + self.binds if self.binds else self.symbols

    @property
    def location(self) -> str:
        return f"{self.file_path}:{self.start_line}-{self.end_line}"
