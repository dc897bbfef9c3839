"""Public entry point of the chunks stage: ``chunk_file`` picks syntax, headings or line windows."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .chunk import Chunk
from .grammars import get_parser
from .lines import WINDOW_CHARS, WINDOW_LINES, line_chunks, make_chunk, split_lines, trim_span, window_spans
from .macros import MASKED_LANGUAGES, error_bytes, mask_macros
from .markdown import markdown_chunks
from .syntax import SPECS, Piece, syntax_pieces

_MARKDOWN = frozenset({"markdown"})


def supported_languages() -> frozenset[str]:
    """Languages chunked by syntax (definitions); markdown is split by headings, the rest by lines."""
    return frozenset(SPECS)


def load_grammars(languages: Iterable[str]) -> None:
    """Load now the grammars that chunking these languages will use (forked workers then share them, and a
    long-lived process keeps them for its next build: a grammar costs ~0.3 s the first time)."""
    for language in set(languages):
        if language in SPECS and language not in _MARKDOWN:
            get_parser(language)


def chunk_file(rel_path: str, text: str, language: str) -> list[Chunk]:
    """Chunks of one file, sorted by start line, covering every non-blank line exactly once.

    Syntax-aware for ``supported_languages()``; falls back to line windows when the grammar is missing,
    the parse is mostly errors, or chunking fails. Deterministic: same input, same chunks.
    """
    return chunk_file_checked(rel_path, text, language)[0]


def chunk_file_checked(rel_path: str, text: str, language: str) -> tuple[list[Chunk], str | None]:
    """``chunk_file`` plus why it fell back to line windows after an error (None when it did not).

    No input may raise here: one odd file (a 3,000-deep nest, a grammar bug) must not fail the build
    of a whole repository, so any error gives line windows and a reason the index report can show.
    """
    chunks, why = _chunks_checked(rel_path, text, language)
    if len(chunks) <= MAX_FILE_CHUNKS:
        return chunks, why
    return _coarse_windows(rel_path, text, language), f"chunker error: more than {MAX_FILE_CHUNKS} chunks"


# A file's chunks are numbered within one index segment (at most 65,535 of them): a generated file of 100,000
# one-line definitions (1 MB) failed the whole build. Past this many a file gets line windows, widened until
# they fit; real files stay far below (the kernel's most: a few thousand).
MAX_FILE_CHUNKS = 50_000


def _coarse_windows(rel_path: str, text: str, language: str) -> list[Chunk]:
    """Line windows, widened (more lines, more characters each) until the file has at most MAX_FILE_CHUNKS."""
    size, chars = WINDOW_LINES, WINDOW_CHARS
    while True:
        chunks = line_chunks(rel_path, text, language, size, chars)
        if len(chunks) <= MAX_FILE_CHUNKS:
            return chunks
        size, chars = size * 4, chars * 4


def _chunks_checked(rel_path: str, text: str, language: str) -> tuple[list[Chunk], str | None]:
    if not text.strip():
        return [], None
    if language == "c" and rel_path.endswith(".h"):
        language = header_language(text)
    if language in _MARKDOWN:
        return _guarded(markdown_chunks, rel_path, text, language)
    if language not in SPECS:
        return line_chunks(rel_path, text, language), None
    parser = get_parser(language)
    if parser is None:
        return line_chunks(rel_path, text, language), None
    if language in _NESTED_COMMENTS and _comment_depth(text) > MAX_COMMENT_DEPTH:
        return line_chunks(rel_path, text, language), "chunker error: comments nested too deep"
    return _guarded(_syntax_chunks, rel_path, text, language)


# A ``.h`` file is C, Objective-C or C++ by what it holds; its name cannot say (the walk judges by name).
# Only the head is read, and each pattern is matched only on the lines that hold its marker word (found by
# str.find): run over every line, the regexes took 15 s for the kernel's 24,000 headers (565 MB, most of
# it register tables), against 1-2 s this way.
_SNIFF_CHARS = 50_000
_OBJC_LINE = re.compile(r"[ \t]*(?:@(?:interface|protocol|implementation)\b|#[ \t]*import\b)")
_CPP_LINE = re.compile(
    r"[ \t]*(?:template[ \t]*<|namespace(?:[ \t]+[\w:]+)?[ \t]*\{|class[ \t]+\w+[^;()]*[:{][ \t]*$"
    r"|(?:public|private|protected)[ \t]*:)"
)
_CPP_SCOPE = re.compile(r"[ \t]*[^/*#\s](?:(?!/[/*]).)*\b\w+::~?\w")  # a::b, not in a comment
_OBJC_MARKERS = {"@interface": _OBJC_LINE, "@protocol": _OBJC_LINE, "@implementation": _OBJC_LINE, "import": _OBJC_LINE}
_CPP_MARKERS = {
    **dict.fromkeys(("template", "namespace", "class", "public", "private", "protected"), _CPP_LINE),
    "::": _CPP_SCOPE,
}


def header_language(text: str) -> str:
    """The grammar a C-family header is parsed with: Objective-C's when it declares an ``@interface`` or
    ``@protocol`` or uses ``#import``, C++'s when it opens a template, a namespace, a class or an access
    section or names ``a::b`` outside a comment (C's grammar reads those as errors), else C's."""
    head = text[:_SNIFF_CHARS]
    if _holds(head, _OBJC_MARKERS):
        return "objc"
    return "cpp" if _holds(head, _CPP_MARKERS) else "c"


def _holds(text: str, markers: dict[str, re.Pattern[str]]) -> bool:
    """Whether a line holding one of the marker words matches that marker's pattern from its start."""
    for marker, pattern in markers.items():
        at = text.find(marker)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            if pattern.match(text, start, end):
                return True
            at = text.find(marker, end)
    return False


# Languages whose /* */ comments nest. Swift's grammar recovers exponentially, in C and past any callback,
# from deep unbalanced nests of them (1.4 KB: minutes); real code nests them two or three deep at most.
_NESTED_COMMENTS = frozenset({"swift", "rust", "kotlin", "scala", "dart", "d"})
MAX_COMMENT_DEPTH = 16


def _comment_depth(text: str) -> int:
    """The deepest nesting of ``/*`` ... ``*/`` (strings not told apart: an overestimate costs a file its
    syntax chunks only in the rare file with comment markers in its strings, never a hang)."""
    if text.count("/*") <= MAX_COMMENT_DEPTH:
        return 0
    depth = deepest = 0
    at = 0
    while True:
        open_at, close_at = text.find("/*", at), text.find("*/", at)
        if open_at < 0 and close_at < 0:
            return deepest
        if open_at >= 0 and (close_at < 0 or open_at < close_at):
            depth += 1
            deepest = max(deepest, depth)
            at = open_at + 2
        else:
            depth = max(0, depth - 1)
            at = close_at + 2


def fallback_reason(exc: BaseException) -> str:
    """A short, stable label for an error that sent a file to line windows (grouped in reports)."""
    if isinstance(exc, RecursionError):
        return "chunker error: nesting too deep"
    if isinstance(exc, MemoryError):
        return "chunker error: out of memory"
    return f"chunker error: {type(exc).__name__}"


def _guarded(
    chunker: Callable[[str, str, str], list[Chunk]], rel_path: str, text: str, language: str
) -> tuple[list[Chunk], str | None]:
    try:
        return chunker(rel_path, text, language), None
    except Exception as exc:  # any failure (RecursionError, MemoryError too) means line windows
        return line_chunks(rel_path, text, language), fallback_reason(exc)


def _syntax_chunks(rel_path: str, text: str, language: str) -> list[Chunk]:
    parser = get_parser(language)
    data = text.encode("utf-8", "replace")
    tree = parser.parse(data) if parser is not None else None
    if tree is not None and parser is not None and language in MASKED_LANGUAGES and tree.root_node.has_error:
        masked = mask_macros(data)  # a second parse only where a macro may be what broke the first
        if masked is not data:
            again = parser.parse(masked)
            if error_bytes(again.root_node) < error_bytes(tree.root_node):
                tree = again
    pieces = syntax_pieces(tree.root_node, language) if tree is not None else None
    if pieces is None:
        return line_chunks(rel_path, text, language)
    return _to_chunks(rel_path, split_lines(text), language, pieces)


def _to_chunks(rel_path: str, lines: list[str], language: str, pieces: list[Piece]) -> list[Chunk]:
    """Make pieces disjoint, trim blank edges, and cover any non-blank line the tree walk missed."""
    pieces = sorted(pieces, key=lambda p: (p.start, p.end))
    spans: list[tuple[int, int, tuple[str, ...], str, tuple[str, ...]]] = []
    last_end = -1
    for piece in pieces:
        start = max(piece.start, last_end + 1)
        end = min(piece.end, len(lines) - 1)
        if start > end:  # swallowed by the previous piece (shared line): keep its names there
            if spans and (piece.symbols or piece.binds):
                s, e, syms, kind, bound = spans[-1]
                syms = tuple(dict.fromkeys((*syms, *piece.symbols)))
                spans[-1] = (s, e, syms, kind, tuple(dict.fromkeys((*bound, *piece.binds))))
            continue
        span = trim_span(lines, start, end)
        if span is not None:
            spans.append((span[0], span[1], tuple(piece.symbols), piece.kind, tuple(piece.binds)))
        last_end = end
    chunks: list[Chunk] = []
    row = 0
    for start, end, symbols, kind, bound in spans + [(len(lines), len(lines), (), "", ())]:
        if start > row:  # safety net: lines outside every piece
            for s, e in window_spans(lines, row, start - 1):
                chunks.append(make_chunk(rel_path, lines, s, e, language))
        if start < len(lines):
            chunks.append(make_chunk(rel_path, lines, start, end, language, symbols, kind, bound))
        row = end + 1
    return chunks
