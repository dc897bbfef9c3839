"""Public entry point of the chunks stage: ``chunk_file`` picks syntax, headings or line windows."""

from __future__ import annotations

from .chunk import Chunk
from .grammars import get_parser
from .lines import line_chunks, make_chunk, split_lines, trim_span, window_spans
from .markdown import markdown_chunks
from .syntax import SPECS, Piece, syntax_pieces

_MARKDOWN = frozenset({"markdown"})


def supported_languages() -> frozenset[str]:
    """Languages chunked by syntax (definitions); markdown is split by headings, the rest by lines."""
    return frozenset(SPECS)


def chunk_file(rel_path: str, text: str, language: str) -> list[Chunk]:
    """Chunks of one file, sorted by start line, covering every non-blank line exactly once.

    Syntax-aware for ``supported_languages()``; falls back to line windows when the grammar is missing
    or the parse is mostly errors. Deterministic: same input, same chunks.
    """
    if not text.strip():
        return []
    if language in _MARKDOWN:
        return markdown_chunks(rel_path, text, language)
    if language not in SPECS:
        return line_chunks(rel_path, text, language)
    parser = get_parser(language)
    if parser is None:
        return line_chunks(rel_path, text, language)
    try:
        tree = parser.parse(text.encode("utf-8", "replace"))
    except Exception:  # a grammar crash must not stop indexing; lines still work
        return line_chunks(rel_path, text, language)
    pieces = syntax_pieces(tree.root_node, language)
    if pieces is None:
        return line_chunks(rel_path, text, language)
    return _to_chunks(rel_path, split_lines(text), language, pieces)


def _to_chunks(rel_path: str, lines: list[str], language: str, pieces: list[Piece]) -> list[Chunk]:
    """Make pieces disjoint, trim blank edges, and cover any non-blank line the tree walk missed."""
    pieces = sorted(pieces, key=lambda p: (p.start, p.end))
    spans: list[tuple[int, int, tuple[str, ...], str]] = []
    last_end = -1
    for piece in pieces:
        start = max(piece.start, last_end + 1)
        end = min(piece.end, len(lines) - 1)
        if start > end:  # swallowed by the previous piece (shared line): keep its names there
            if spans and piece.symbols:
                s, e, syms, kind = spans[-1]
                spans[-1] = (s, e, tuple(dict.fromkeys((*syms, *piece.symbols))), kind)
            continue
        span = trim_span(lines, start, end)
        if span is not None:
            spans.append((span[0], span[1], tuple(piece.symbols), piece.kind))
        last_end = end
    chunks: list[Chunk] = []
    row = 0
    for start, end, symbols, kind in spans + [(len(lines), len(lines), (), "")]:
        if start > row:  # safety net: lines outside every piece
            for s, e in window_spans(lines, row, start - 1):
                chunks.append(make_chunk(rel_path, lines, s, e, language))
        if start < len(lines):
            chunks.append(make_chunk(rel_path, lines, start, end, language, symbols, kind))
        row = end + 1
    return chunks
