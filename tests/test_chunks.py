"""Behaviour of the chunks stage: syntax-aware units, fallbacks, markdown sections, line coverage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codepith.chunks.chunk import Chunk
from codepith.chunks.chunker import chunk_file, supported_languages
from codepith.chunks.lines import line_chunks, split_lines
from codepith.chunks.markdown import markdown_chunks
from codepith.chunks.syntax import COMMENT_LINES, MAX_LINES


def _assert_covers(text: str, chunks: list[Chunk]) -> None:
    """Every non-blank line in exactly one chunk, chunks sorted, content matching the span."""
    lines = split_lines(text)
    seen = [0] * len(lines)
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.content.strip()
        assert c.content == "\n".join(lines[c.start_line - 1 : c.end_line])
        for row in range(c.start_line - 1, c.end_line):
            seen[row] += 1
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
    for row, line in enumerate(lines):
        assert seen[row] <= 1, f"line {row + 1} in two chunks"
        if line.strip():
            assert seen[row] == 1, f"line {row + 1} lost"


def _by_symbol(chunks: list[Chunk], name: str) -> Chunk:
    matches = [c for c in chunks if c.symbols and c.symbols[0] == name]
    assert matches, f"no chunk for {name}: {[c.symbols for c in chunks]}"
    return matches[0]


SAMPLES: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {
    "python": (
        '"""Doc."""\nimport os\n\n\n@decorator\ndef foo(a):\n    return a\n\n\n'
        "class Bar(Base):\n    y = 2\n\n    def m(self):\n        pass\n",
        {"foo": (5, 7), "Bar": (10, 14)},
    ),
    "javascript": (
        "import x from 'y';\n// says foo\nfunction foo(a) {\n  return a;\n}\nconst bar = (b) => b * 2;\n"
        "class Baz extends Q {\n  m() { return 1; }\n}\nexport function qux() {}\n",
        {"foo": (2, 5), "bar": (6, 6), "Baz": (7, 9), "qux": (10, 10)},
    ),
    "typescript": (
        "import { a } from 'b';\nexport interface Foo {\n  a: number;\n}\ntype Alias = string;\n"
        "enum Color { Red }\nexport class Bar {\n  m(): void {}\n}\n",
        {"Foo": (2, 4), "Alias": (5, 5), "Color": (6, 6), "Bar": (7, 9)},
    ),
    "tsx": (
        "export function App(): JSX.Element {\n  return <div>hi</div>;\n}\nconst Button = () => <button />;\n",
        {"App": (1, 3), "Button": (4, 4)},
    ),
    "go": (
        'package main\n\nimport "fmt"\n\n// Foo does x.\ntype Foo struct {\n\tA int\n}\n\n'
        "func (f *Foo) Method() int { return 1 }\n\nfunc main() {\n\tfmt.Println(1)\n}\n",
        {"Foo": (5, 8), "Method": (10, 10), "main": (12, 14)},
    ),
    "rust": (
        "use std::io;\n\n/// Doc.\n#[derive(Debug)]\npub struct Foo { a: i32 }\n\nimpl Foo {\n"
        "    pub fn new() -> Self { Foo { a: 1 } }\n}\n\ntrait T { fn t(&self); }\n\nfn main() {}\n",
        {"Foo": (3, 5), "T": (11, 11), "main": (13, 13)},
    ),
    "c": (
        "#include <stdio.h>\nstruct point { int x; };\nstatic int add(int a, int b) {\n  return a + b;\n}\n"
        "int *make(void) { return 0; }\n",
        {"point": (2, 2), "add": (3, 5), "make": (6, 6)},
    ),
    "cpp": (
        "#include <vector>\nclass Foo : public Bar {\n public:\n  void m() const {}\n};\n"
        "template <typename T>\nT maxof(T a, T b) { return a; }\n",
        {"Foo": (2, 5), "maxof": (6, 7)},
    ),
    "csharp": (
        "using System;\n[Serializable]\npublic class Foo {\n    public void M() { }\n}\ninterface IBar { }\n",
        {"Foo": (2, 5), "IBar": (6, 6)},
    ),
    "java": (
        "package a;\nimport java.util.List;\n/** Doc. */\n@Entity\npublic class Foo {\n    public void m() { }\n}\n",
        {"Foo": (3, 7)},
    ),
    "kotlin": (
        "package a\n\nclass Foo(val a: Int) {\n    fun m(): Int = 1\n}\n\nfun top(a: Int): Int {\n    return a\n}\n",
        {"Foo": (3, 5), "top": (7, 9)},
    ),
    "scala": (
        "package a\nclass Foo(a: Int) {\n  def m(x: Int): Int = x\n}\nobject Obj { val v = 1 }\ndef top(): Unit = ()\n",
        {"Foo": (2, 4), "Obj": (5, 5), "top": (6, 6)},
    ),
    "swift": (
        "import Foundation\nclass Foo: Bar {\n    func m() -> Int { return 1 }\n}\n"
        "protocol P { func p() }\nfunc top() {}\n",
        {"Foo": (2, 4), "P": (5, 5), "top": (6, 6)},
    ),
    "objc": (
        '#import "Foo.h"\n\n@implementation Foo\n- (void)sendResult:(int)r callbackId:(id)c {\n  [self go];\n}\n'
        "+ (instancetype)make {\n  return nil;\n}\n@end\n",
        {"Foo": (3, 10)},
    ),
    "lua": (
        "local M = {}\n-- says foo\nfunction M.foo(a)\n  return a\nend\nlocal function baz() end\nreturn M\n",
        {"foo": (2, 5), "baz": (6, 6)},
    ),
    "zig": (
        'const std = @import("std");\npub fn main() void {}\nconst Point = struct {\n    x: i32,\n};\n'
        'test "thing" {}\n',
        {"main": (2, 2), "Point": (3, 5), "thing": (6, 6)},
    ),
    "bash": (
        "#!/bin/bash\nset -e\nfoo() {\n  echo hi\n}\nfunction bar {\n  echo bar\n}\necho done\n",
        {"foo": (3, 5), "bar": (6, 8)},
    ),
    "elixir": (
        'defmodule Foo.Bar do\n  @doc "x"\n  def hello(a) do\n    a\n  end\nend\n',
        {"Foo.Bar": (1, 6)},
    ),
    "haskell": (
        "module Main where\nimport Data.List\n\ndata Shape = Circle Double\n\narea :: Shape -> Double\n"
        "area (Circle r) = r\n\nmain :: IO ()\nmain = print 1\n",
        {"Shape": (4, 4), "area": (6, 7), "main": (9, 10)},
    ),
    "ruby": (
        "require 'x'\n# comment\nclass Foo < Bar\n  def initialize(a)\n    @a = a\n  end\nend\ndef top; end\n",
        {"Foo": (2, 7), "top": (8, 8)},
    ),
    "php": (
        "<?php\nnamespace App;\nclass Foo extends Bar {\n    public function m() { return 1; }\n}\n"
        "function top() { }\n",
        {"Foo": (3, 5), "top": (6, 6)},
    ),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_language_samples(language: str) -> None:
    text, expected = SAMPLES[language]
    chunks = chunk_file(f"sample.{language}", text, language)
    for name, (start, end) in expected.items():
        chunk = _by_symbol(chunks, name)
        assert (chunk.start_line, chunk.end_line) == (start, end), (name, chunk)
        assert chunk.language == language
        assert chunk.kind != "lines"
    _assert_covers(text, chunks)


def test_a_long_objc_implementation_splits_into_named_methods() -> None:
    body = "".join(f"  x{i} = {i};\n" for i in range(30))
    text = (
        f"@implementation Manager\n- (void)registerPlugin:(id)p {{\n{body}}}\n"
        f"- (id)commandInstance:(NSString*)name {{\n{body}  return nil;\n}}\n@end\n"
    )
    chunks = chunk_file("Manager.m", text, "objc")
    assert {"registerPlugin", "commandInstance"} <= {s for c in chunks for s in c.symbols}
    assert all(c.kind != "lines" for c in chunks)
    _assert_covers(text, chunks)


@pytest.mark.parametrize(
    ("text", "language", "name"),
    [
        ("#import <Foundation/Foundation.h>\n@protocol Bridged <NSObject>\n- (void)load;\n@end\n", "objc", "Bridged"),
        ("@interface Plugin : NSObject\n- (void)load;\n@end\n", "objc", "Plugin"),
        ("#pragma once\nnamespace spd {\nclass Logger {\n public:\n  void log();\n};\n}\n", "cpp", "Logger"),
        ("template <typename T>\nstruct Box {\n  T value;\n};\n", "cpp", "Box"),
        ("void spd::Logger::log() {\n  flush();\n}\n", "cpp", ""),
        (
            '#ifdef __cplusplus\nextern "C" {\n#endif\nstruct jv_parser {\n  int depth;\n};\n'
            "int jv_parse(const char *s); /* like std::parse */\n#ifdef __cplusplus\n}\n#endif\n",
            "c",
            "",
        ),
        ("struct jv_parser {\n  int depth;\n};\nint jv_parse(const char *s); // not std::parse\n", "c", "jv_parser"),
    ],
)
def test_a_header_is_parsed_as_the_language_it_holds(text: str, language: str, name: str) -> None:
    """``.h`` is C by name; Objective-C and C++ headers are told by their syntax (C's grammar reads an
    ``@interface`` or a ``class`` as errors), and a C header that only guards for C++ stays C."""
    chunks = chunk_file("include/x.h", text, "c")
    assert {c.language for c in chunks} == {language}
    if name:
        assert name in {s for c in chunks for s in c.symbols}
    _assert_covers(text, chunks)


def test_a_cpp_class_with_an_export_macro_is_a_class() -> None:
    """``class SPDLOG_API logger {`` parses as a function named ``logger`` returning ``class SPDLOG_API``."""
    text = '#include "common.h"\n\nclass SPDLOG_API logger {\npublic:\n  void log(int level);\n};\n'
    chunks = chunk_file("include/spdlog/logger.h", text, "cpp")
    assert any(c.kind == "class" and "logger" in c.symbols for c in chunks), [(c.kind, c.symbols) for c in chunks]
    _assert_covers(text, chunks)


def test_keyword_like_macros_are_read_as_what_they_expand_to() -> None:
    """``LIB_BEGIN_NAMESPACE`` alone on a line made ``namespace detail {`` a function named "namespace" that
    swallowed what followed; ``LIB_CONSTEXPR widget(...)`` broke the class around it."""
    text = (
        "LIB_BEGIN_NAMESPACE\n\nnamespace detail {\n\ntemplate <typename T> struct box { T v; };\n\n"
        "}  // namespace detail\n\nclass LIB_API widget : public base {\n public:\n"
        "  LIB_CONSTEXPR widget(int x) : x_(x) {}\n  int size() const { return x_; }\n\n private:\n"
        "  int x_;\n};\n\nLIB_END_NAMESPACE\n"
    )
    chunks = chunk_file("include/lib/widget.h", text, "cpp")
    kinds = {s: c.kind for c in chunks for s in c.symbols}
    assert kinds.get("detail") == "namespace" and kinds.get("box") == "namespace", kinds
    assert kinds.get("widget") == "class" and "size" in kinds, kinds
    assert "namespace" not in kinds
    _assert_covers(text, chunks)


def test_masked_macros_keep_every_byte_in_place_and_spare_directives_and_strings() -> None:
    from codepith.chunks.macros import mask_macros

    text = (
        b"#define LIB_EXPORT visibility\n#define LIB_MULTI(x) \\\n  LIB_INNER x\n"
        b"LIB_BEGIN_NAMESPACE\n"
        b"LIB_API int run(void);\n"
        b'const char *s = "LIB_WORD inside";\n'
        b"int v = obj.LIB_FIELD value;\n"
        b"enum e { FIRST_ONE,\n  LAST_ONE\n};\n"
        b"typedef LIB_TYPE lib_int;\n  LIB_TYPE len;\nint n = sizeof(LIB_TYPE) + f(LIB_TYPE x);\n"
        b"template <typename T> LIB_INLINE auto g() -> int;\n"
    )
    masked = mask_macros(text)
    assert len(masked) == len(text) and masked.count(b"\n") == text.count(b"\n")
    assert masked.split(b"\n")[:3] == text.split(b"\n")[:3]  # directives and their continuations
    assert masked.split(b"\n")[3].strip() == b""  # alone on its line, after a directive
    assert masked.split(b"\n")[4].strip() == b"int run(void);"
    for kept in (b'"LIB_WORD inside"', b"obj.LIB_FIELD", b"  LAST_ONE", b"typedef LIB_TYPE lib_int;"):
        assert kept in masked
    assert b"  LIB_TYPE len;" in masked and b"f(LIB_TYPE x)" in masked  # a type, where a type can stand
    assert b"template <typename T>            auto g()" in masked
    plain = b"int main(void) { return 0; }\n"
    assert mask_macros(plain) is plain  # nothing to blank: no second parse


def test_a_header_wrapped_in_one_parse_error_keeps_the_definitions_inside_it() -> None:
    """An ``#if``/``#else`` pair that opens two class heads makes tree-sitter wrap the whole include guard
    in one ERROR node; the definitions it recovered inside are still chunked as definitions."""
    body = "".join(
        f"int function_{n}_{i}(int x) {{\n  int y = x * {i};\n  y += {i};\n  return x + y;\n}}\n\n"
        for n in (1, 2)
        for i in range(12)
    )
    half = len(body) // 2
    text = f"#ifndef G_H\n#define G_H\n\n{body[:half]}#if A\nclass x {{\n#else\nclass y {{\n#endif\n  int v;\n}};\n\n"
    text += body[half:] + "#endif\n"
    chunks = chunk_file("g.h", text, "cpp")
    names = {s for c in chunks if c.kind == "function" for s in c.symbols}
    assert {"function_1_0", "function_2_11"} <= names, [(c.kind, c.symbols) for c in chunks]
    _assert_covers(text, chunks)


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_small_guarded_header_names_what_it_defines(language: str) -> None:
    """A header short enough to be one chunk is one include guard: that chunk names its definitions."""
    inner = "class Clock {\n public:\n  int now() const;\n};\n" if language == "cpp" else ""
    text = (
        "#ifndef CLOCK_H\n#define CLOCK_H\n\n#include <stdint.h>\n\nstruct tick {\n  uint64_t at;\n};\n\n"
        f"{inner}#ifdef WITH_EXTRA\ntypedef struct extra {{\n  int x;\n}} extra_t;\n#endif\n\n#endif\n"
    )
    chunks = chunk_file("clock.h", text, language)
    assert len(chunks) == 1
    names = set(chunks[0].symbols)
    assert {"tick", "extra_t" if language == "c" else "extra"} & names and "tick" in names, names
    if language == "cpp":
        assert "Clock" in names
    _assert_covers(text, chunks)


def test_required_languages_are_syntax_aware() -> None:
    assert set(SAMPLES) <= supported_languages()


def test_class_members_listed_when_class_fits() -> None:
    text, _ = SAMPLES["python"]
    bar = _by_symbol(chunk_file("a.py", text, "python"), "Bar")
    assert bar.kind == "class" and "m" in bar.symbols


def _big_class(methods: int) -> str:
    body = "".join(
        f"    def method_{i}(self, x):\n" + "".join(f"        x = x + {j}\n" for j in range(8)) + "        return x\n\n"
        for i in range(methods)
    )
    return '# leading comment\nclass Big(Base):\n    """Big doc."""\n\n    LIMIT = 3\n\n' + body


def test_big_class_split_into_methods() -> None:
    text = _big_class(12)
    chunks = chunk_file("big.py", text, "python")
    head = chunks[0]
    assert head.symbols[0] == "Big" and head.kind == "class"
    assert head.start_line == 1  # the comment above the class stays with its header
    assert "LIMIT = 3" in head.content
    for i in range(12):
        method = _by_symbol(chunks, f"method_{i}")
        assert method.kind == "function"
        assert method.content.lstrip().startswith(f"def method_{i}")
    assert all(c.end_line - c.start_line < MAX_LINES + 2 for c in chunks)
    _assert_covers(text, chunks)


def test_a_long_doc_comment_above_a_split_definition_is_cut_in_shorter_windows() -> None:
    """A guide of prose above a macro or class (tokio's `select!`) becomes pieces of COMMENT_LINES lines,
    each about one topic, while the definition's code keeps the full budget."""
    doc = "".join(f"/// line {i} of a long guide to the macro: branches, cancellation, fairness\n" for i in range(100))
    arms = "".join(f"    (@arm{i} $x:expr) => {{ $x + {i} }};\n" for i in range(70))
    text = doc + "macro_rules! pick {\n" + arms + "}\n"
    chunks = chunk_file("m.rs", text, "rust")
    guide = [c for c in chunks if c.end_line <= 100]
    assert guide and all(c.end_line - c.start_line + 1 <= COMMENT_LINES for c in guide), [
        (c.start_line, c.end_line) for c in chunks
    ]
    assert len(guide) > -(-100 // MAX_LINES), "more pieces than windows of a code chunk's budget would make"
    assert all(c.symbols and c.symbols[0] == "pick" for c in guide)  # each window still names the macro
    _assert_covers(text, chunks)


def test_huge_function_split_keeps_name() -> None:
    text = "def huge(a):\n" + "".join(f"    a = a + {i}\n" for i in range(200)) + "    return a\n"
    chunks = chunk_file("h.py", text, "python")
    assert len(chunks) >= 3
    assert all(c.symbols == ("huge",) for c in chunks)
    _assert_covers(text, chunks)


def test_big_rust_impl_split_and_header_kept() -> None:
    methods = "".join(
        f"    pub fn m{i}(&self) -> i32 {{\n" + "        let x = 1;\n" * 8 + "        x\n    }\n\n" for i in range(10)
    )
    text = "struct S;\n\nimpl S {\n" + methods + "}\n"
    chunks = chunk_file("s.rs", text, "rust")
    m0 = next(c for c in chunks if "m0" in c.symbols)
    assert "S" in m0.symbols and m0.start_line == 3  # the bare `impl S {` line joins the first method
    assert _by_symbol(chunks, "m9").end_line == len(split_lines(text)) - 1  # closing brace kept
    _assert_covers(text, chunks)


def test_a_documented_class_header_keeps_code() -> None:
    """A split class's doc comment and ``class X {`` line are no piece of their own: a query for the
    class name would land on a chunk without a line of its code."""
    methods = "".join(f"  m{i}(a) {{\n" + "    a += 1;\n" * 12 + "    return a;\n  }\n\n" for i in range(6))
    doc = "/**\n * Create a new instance of Thing\n *\n * @param {Object} config The config\n */\n"
    ctor = "  constructor(config) {\n" + "".join(f"    this.{k} = null;\n" for k in "cabd") + "  }\n\n"
    text = "import x from './x.js';\n\n" + doc + "class Thing {\n" + ctor
    text += methods + "}\n"
    chunks = chunk_file("thing.js", text, "javascript")
    head = _by_symbol(chunks, "Thing")
    assert head.start_line == 3  # the doc comment
    assert "constructor" in head.symbols and "this.c = null;" in head.content
    _assert_covers(text, chunks)


def test_decorators_and_comments_attach() -> None:
    text = "x = 1\n\n# explains f\n# more\n@a\n@b(1)\ndef f():\n    pass\n"
    f = _by_symbol(chunk_file("d.py", text, "python"), "f")
    assert (f.start_line, f.end_line) == (3, 8)


def test_small_statements_grouped() -> None:
    text = "import a\nimport b\n\nX = 1\nY = 2\n\n\ndef f():\n    pass\n"
    chunks = chunk_file("g.py", text, "python")
    assert [(c.start_line, c.end_line, c.kind) for c in chunks] == [(1, 5, "module"), (8, 9, "function")]


@pytest.mark.parametrize(
    ("name", "language", "text", "bound", "not_bound"),
    [
        ("g.py", "python", "import x\n\ng: Ctx = LocalProxy(x)\n__all__ = ['g']\nself.y = 1\n",
         ["g"], ["__all__", "y"]),
        ("e.go", "go", "package p\n\nvar ErrGone = errors.New(\"gone\")\nvar (\n\ta = 1\n)\nconst Version = \"1\"\n",
         ["ErrGone", "a", "Version"], []),
        ("l.rs", "rust", "pub const MAX_TASKS: usize = 64;\nstatic REGISTRY: Lazy<R> = Lazy::new(R::new);\n",
         ["MAX_TASKS", "REGISTRY"], []),
        ("f.c", "c", "static const struct file_operations ext4_fops = { .read = r };\nint probe(void);\n"
         "extern int seen;\n", ["ext4_fops"], ["probe", "seen"]),
        ("v.rb", "ruby", "VERSION = \"1.0\"\ncount = 0\n", ["VERSION"], ["count"]),
        ("d.kt", "kotlin", "package a\n\npublic val Default: Int = 3\ninternal const val MAX = 4\n",
         ["Default", "MAX"], []),
        ("m.swift", "swift", "let maxCount = 3\nvar registry = [String: Int]()\n", ["maxCount", "registry"], []),
        ("v.php", "php", "<?php\nnamespace A;\nconst VERSION = '1';\n", ["VERSION"], []),
    ],
)  # fmt: skip
def test_module_level_values_are_named_by_the_chunk_that_binds_them(
    name: str, language: str, text: str, bound: list[str], not_bound: list[str]
) -> None:
    """`request = LocalProxy(...)` or a global `file_operations` table is what a search for its name wants,
    though it is no function or class: the chunk holding it lists the name (and stays one chunk)."""
    chunks = chunk_file(name, text, language)
    names = [s for c in chunks for s in c.names]
    assert all(b in names for b in bound) and not any(n in names for n in not_bound), names
    assert len(chunks) == 1 and chunks[0].symbols == (), "a binding is no definition (the repository map ranks those)"


def test_unknown_language_falls_back_to_lines() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    chunks = chunk_file("f.xyz", text, "no-such-language")
    assert [c.kind for c in chunks] == ["lines"] * 3
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 40)
    _assert_covers(text, chunks)


def test_parse_error_falls_back_to_lines() -> None:
    text = ")))) ((( def def class :::: }}}}\n" * 5
    chunks = chunk_file("bad.py", text, "python")
    assert chunks and all(c.kind == "lines" for c in chunks)
    _assert_covers(text, chunks)


def test_local_syntax_error_keeps_structure() -> None:
    text = "def good():\n    return 1\n\n\nx = (\n\n\ndef other():\n    return 2\n"
    chunks = chunk_file("e.py", text, "python")
    _assert_covers(text, chunks)
    assert "good" in {s for c in chunks for s in c.symbols}


def test_empty_and_blank_files() -> None:
    assert chunk_file("e.py", "", "python") == []
    assert chunk_file("e.py", "\n  \n\t\n", "python") == []
    assert line_chunks("e.txt", "\n\n\n", "text") == []


def test_crlf_and_no_trailing_newline() -> None:
    text = "def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2"
    chunks = chunk_file("c.py", text, "python")
    assert [(c.symbols, c.start_line, c.end_line) for c in chunks] == [(("f",), 1, 2), (("g",), 4, 5)]
    assert "\r" not in chunks[0].content


def test_unicode_spans_are_line_based() -> None:
    text = '"""Ünïcødé ✓ 日本語."""\n\n\ndef grüße(名前):\n    return "héllo " + 名前\n\n\nclass Ñ:\n    pass\n'
    chunks = chunk_file("u.py", text, "python")
    f = _by_symbol(chunks, "grüße")
    assert (f.start_line, f.end_line) == (4, 5)
    assert _by_symbol(chunks, "Ñ").start_line == 8
    _assert_covers(text, chunks)


def test_markdown_sections() -> None:
    text = "intro text\n\n# Title\n\nbody\n\n## Install\n\n```sh\n# not a heading\n```\n\nSetext\n======\nmore\n"
    chunks = chunk_file("README.md", text, "markdown")
    assert [(c.symbols, c.start_line, c.end_line) for c in chunks] == [
        ((), 1, 1),
        (("Title",), 3, 5),
        (("Install",), 7, 11),
        (("Setext",), 13, 15),
    ]
    assert all(c.kind == "section" for c in chunks)


def test_long_markdown_section_windows_keep_heading() -> None:
    text = "# Big\n" + "".join(f"para {i}\n" for i in range(150))
    chunks = markdown_chunks("b.md", text)
    assert len(chunks) >= 3 and all(c.symbols == ("Big",) for c in chunks)
    _assert_covers(text, chunks)


def test_deterministic() -> None:
    text = _big_class(6)
    assert chunk_file("a.py", text, "python") == chunk_file("a.py", text, "python")


_line = st.one_of(
    st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\n"), max_size=30),
    st.sampled_from(["def f():", "    return 1", "class A:", "  pass", "}", "{", "# h", "", "   ", "x = (", "@d"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_line, max_size=120), st.sampled_from(["python", "javascript", "rust", "markdown", "text"]))
def test_no_lost_lines(lines: list[str], language: str) -> None:
    text = "\n".join(lines)
    _assert_covers(text, chunk_file("r.txt", text, language))
