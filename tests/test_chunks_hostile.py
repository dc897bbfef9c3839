"""Hostile input for the chunker, in every supported language: deep nesting and random text never raise,
never fall back for an error, and always give ordered, in-range chunks that hold every non-blank line."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codepith.chunks.chunk import Chunk
from codepith.chunks.chunker import chunk_file_checked, supported_languages
from codepith.chunks.lines import split_lines

LANGUAGES = sorted(supported_languages() | {"markdown", "text"})


def _assert_sound(text: str, chunks: list[Chunk]) -> None:
    """Spans in range, ordered and disjoint; content equals the span; every non-blank line covered."""
    lines = split_lines(text)
    covered = [False] * len(lines)
    last_end = 0
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.start_line > last_end, "chunks overlap or are out of order"
        last_end = c.end_line
        assert c.content == "\n".join(lines[c.start_line - 1 : c.end_line])
        for row in range(c.start_line - 1, c.end_line):
            covered[row] = True
    lost = [row + 1 for row, line in enumerate(lines) if line.strip() and not covered[row]]
    assert not lost, f"lines in no chunk: {lost[:5]}"


# Deep shapes that once raised RecursionError: each nests ~3,000 levels (or chains 1,000 branches).
def _parens(depth: int) -> str:
    rows = ["x = "]
    for i in range(depth):
        rows.append("(" if i % 50 else "(\n")
    rows.append("1")
    rows.extend(")" if i % 50 else ")\n" for i in range(depth))
    return "".join(rows) + "\n"


def _else_if(branches: int) -> str:
    body = "".join(f"  {'} else ' if i else ''}if (x == {i}) {{\n    g({i});\n" for i in range(branches))
    return "void f(int x) {\n" + body + "  }\n}\n"


def _blocks(depth: int) -> str:
    return "".join(f"{{ a{i};\n" for i in range(depth)) + "".join("}\n" for _ in range(depth))


def _brackets(depth: int) -> str:
    return "v = " + "[" * depth + "]" * depth + "\n"


def _functions(depth: int) -> str:
    opening = "".join(f"function f{i}() {{\n" for i in range(depth))
    return opening + "call();\n" * 70 + "}\n" * depth


def _indented(depth: int) -> str:
    return "".join(" " * i + f"def f{i}():\n" for i in range(depth)) + " " * depth + "return 1\n"


SHAPES = {
    "parens": lambda: _parens(3000),
    "else-if": lambda: _else_if(1000),
    "blocks": lambda: _blocks(3000),
    "brackets": lambda: _brackets(3000),
    "functions": lambda: _functions(1500),
    "indented": lambda: _indented(400),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("language", LANGUAGES)
def test_deep_nesting_is_chunked_without_error(language: str, shape: str) -> None:
    text = SHAPES[shape]()
    limit = sys.getrecursionlimit()
    chunks, fallback = chunk_file_checked(f"deep.{language}", text, language)
    assert sys.getrecursionlimit() == limit  # coped by walking iteratively, not by raising the limit
    assert fallback is None, fallback
    assert chunks
    _assert_sound(text, chunks)


def test_kernel_test_bpf_is_chunked_by_syntax() -> None:
    """The kernel file that failed a 13-minute build: now definitions, with no error."""
    from pathlib import Path

    path = Path("/work/kernel/linux-source-6.1/lib/test_bpf.c")
    if not path.is_file():
        pytest.skip("kernel tree not on this machine")
    text = path.read_text(encoding="utf-8", errors="replace")
    chunks, fallback = chunk_file_checked("lib/test_bpf.c", text, "c")
    assert fallback is None
    assert any("bpf_fill_maxinsns1" in c.symbols for c in chunks)
    _assert_sound(text, chunks)


_TOKENS = [
    "(", ")", "[", "]", "{", "}", "<", ">", "\"", "'", "`", "/*", "*/", "//", "#", "\\", ";", ":", ",",
    "=", "=>", "->", "::", "@", "$", "%", "def", "class", "fn", "function", "if", "else", "end", "do",
    "module", "impl", "struct", "template", "namespace", "return", "let", "x", "y1", "\t", " ", "    ",
    "\n", "\n", "\n", "\r\n", "é", "\u200b", "\x00", "\ufffd",
]  # fmt: skip
_random_text = st.lists(st.sampled_from(_TOKENS), max_size=400).map("".join)
_unicode_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=400)


@st.composite
def _nested(draw: st.DrawFn) -> str:
    """A random nest: openers and closers of mixed kinds, up to 2,000 deep, some left unbalanced."""
    pairs = [("(", ")"), ("[", "]"), ("{", "}"), ("if (a) {", "}"), ("class A {", "};"), ("def f():", ""),
             ("function g() {", "}"), ("do", "end"), ("<", ">"), ("/*", "*/")]  # fmt: skip
    depth = draw(st.one_of(st.integers(0, 40), st.integers(500, 2000)))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=4))
    sep = draw(st.sampled_from(["", " ", "\n", "\n  "]))
    opened = [chosen[i % len(chosen)] for i in range(depth)]
    middle = draw(_random_text)
    cut = draw(st.integers(0, depth))  # drop some closers: broken code must not break the chunker
    closing = [close for _, close in reversed(opened)][: depth - cut]
    return sep.join(o for o, _ in opened) + middle + sep.join(closing)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(_random_text, _unicode_text, _nested()))
def test_random_and_deep_input_never_raises(language: str, text: str) -> None:
    chunks, fallback = chunk_file_checked(f"r.{language}", text, language)
    assert fallback in (None, "chunker error: comments nested too deep"), fallback  # the latter: see below
    _assert_sound(text, chunks)


class _ErrorRoot:
    """A parse whose root tree-sitter typed ERROR for one bad spot, its children otherwise sound
    (what the kernel's kernel/sched/core.c parses to: 2.5 KB broken of 293 KB)."""

    def __init__(self, root: object, extra: list[object]) -> None:
        self.type = "ERROR"
        self.has_error = True
        self.is_missing = False
        self.children = [*root.children, *extra]  # type: ignore[attr-defined]
        self.start_byte = 0
        self.end_byte = max(c.end_byte for c in self.children)  # type: ignore[attr-defined]


def test_an_error_root_over_sound_definitions_keeps_them() -> None:
    from codepith.chunks.grammars import get_parser
    from codepith.chunks.syntax import syntax_pieces

    parser = get_parser("c")
    if parser is None:
        pytest.skip("no C grammar")
    body = "".join(f"int handler_{i}(int x)\n{{\n\treturn x + {i};\n}}\n\n" for i in range(20))
    sound = parser.parse(body.encode()).root_node
    bad = parser.parse(b"static int t[] = {\n#ifdef A\n\t{ 1 },\n").root_node
    pieces = syntax_pieces(_ErrorRoot(sound, list(bad.children)), "c")  # type: ignore[arg-type]
    assert pieces is not None
    assert {s for p in pieces for s in p.symbols} >= {f"handler_{i}" for i in range(20)}
    # a root of nothing but stray tokens is still line windows
    junk = parser.parse(b"} } } ) ) ) ] ] ] " * 200).root_node
    assert syntax_pieces(_ErrorRoot(junk, []), "c") is None  # type: ignore[arg-type]


_SWIFT_RUNAWAY = r"""
import sys
from codepith.chunks.chunker import chunk_file_checked
pairs = [("/*", "*/"), ("/*", "*/"), ("/*", "*/"), ("[", "]")]
opened = [pairs[i % 4] for i in range(200)]
text = "\n  ".join(o for o, _ in opened) + "x" + "\n  ".join([c for _, c in reversed(opened)][:100])
chunks, why = chunk_file_checked("r.swift", text, "swift")
assert chunks and why == "chunker error: comments nested too deep", why
"""


def test_a_runaway_parse_is_cut_short() -> None:
    """Unbalanced nested comments between brackets send the Swift grammar's error recovery exponential
    (7 s at 700 bytes, minutes at 1,400). tree-sitter's progress callback is checked about once a second
    there and did not stop it, and a build of fewer than 200 files chunks in-process, with no timeout; so
    comments nested deeper than real code nests them send the file to line windows before the parse.
    Found by the hypothesis test above on 2026-12-01. In a subprocess, so that a regression fails, not hangs."""
    import subprocess

    try:
        subprocess.run([sys.executable, "-c", _SWIFT_RUNAWAY], timeout=10, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail("chunking a 1.4 KB Swift file took over 10 s")


def test_comments_nested_as_real_code_nests_them_keep_syntax_chunks() -> None:
    text = "/* outer /* inner */ still outer */\nfunc f() -> Int {\n    return 1 /* one */\n}\n" * 20
    chunks, why = chunk_file_checked("a.swift", text, "swift")
    assert why is None and any("f" in c.symbols for c in chunks)


def test_a_file_never_has_more_chunks_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the limit a file gets line windows, widened until they fit, still covering every line."""
    import codepith.chunks.chunker as chunker

    monkeypatch.setattr(chunker, "MAX_FILE_CHUNKS", 10)
    text = "".join(f"def fn_{i}():\n    return {i}\n" for i in range(2000))
    chunks, why = chunker.chunk_file_checked("gen.py", text, "python")
    assert why == "chunker error: more than 10 chunks"
    assert 0 < len(chunks) <= 10
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert covered == set(range(1, 4001))
