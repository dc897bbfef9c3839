"""Limits every surface states and enforces the same way (CLI, MCP, Python API).

A plain module with no imports: the MCP front loads it before anything heavy.
"""

MAX_TOP_K = 100  # results per search; the engine retrieves 100 candidates per retriever
MIN_MAX_CHARS = 300  # the smallest reply budget that still shows a typical hit: header, one line, read call
MAX_MAX_CHARS = 100_000
MAX_LINE = 1_000_000_000  # a line number past any file's: larger ones are refused, not looked for
