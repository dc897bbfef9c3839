"""Language tables beyond the dev suite's (the sixth tuning set, issue 13): each language's definitions,
their names and the chunk boundaries they give, on small inline sources. Without a table these files
are cut into blind line windows with no names at all."""

from __future__ import annotations

import re

from codepith.chunks.chunk import Chunk
from codepith.chunks.chunker import chunk_file, supported_languages
from codepith.chunks.ecosystems import test_file_pattern as _test_file_pattern
from codepith.chunks.lines import split_lines


def _covers(text: str, chunks: list[Chunk]) -> None:
    lines = split_lines(text)
    seen = [0] * len(lines)
    for c in chunks:
        assert c.content == "\n".join(lines[c.start_line - 1 : c.end_line])
        for row in range(c.start_line - 1, c.end_line):
            seen[row] += 1
    assert all(n == 1 for n, ln in zip(seen, lines, strict=True) if ln.strip())


def _spans(chunks: list[Chunk]) -> dict[str, tuple[int, int, str]]:
    """First symbol -> (start, end, kind) of the chunk it names first."""
    out: dict[str, tuple[int, int, str]] = {}
    for c in chunks:
        if c.symbols:
            out.setdefault(c.symbols[0], (c.start_line, c.end_line, c.kind))
    return out


def _chunks(path: str, text: str, language: str) -> list[Chunk]:
    chunks = chunk_file(path, text, language)
    _covers(text, chunks)
    return chunks


def _body(n: int, indent: str = "  ", line: str = "x{i} <- {i}") -> str:
    return "".join(f"{indent}{line.format(i=i)}\n" for i in range(n))


def test_the_new_languages_are_syntax_aware() -> None:
    assert {"r", "ocaml", "erlang", "solidity"} <= supported_languages()


# -- R ----------------------------------------------------------------------------------------------


def test_r_functions_are_named_by_what_they_are_assigned_to() -> None:
    text = (
        "#' Add one\n#' @export\nadd_one <- function(x) {\n  x + 1\n}\n\n"
        "`+.gg` <- function(e1, e2) e1\n\nscale = function(x) x * 2\n"
    )
    spans = _spans(_chunks("R/add.R", text, "r"))
    assert spans["add_one"] == (1, 5, "function")  # the roxygen block attaches
    assert spans["+.gg"][:2] == (7, 7)
    assert spans["scale"][:2] == (9, 9)


def test_r_an_object_of_methods_is_a_class_and_splits_into_named_methods() -> None:
    text = (
        'GeomThing <- ggproto("GeomThing", Geom,\n'
        '  required_aes = c("x", "y"),\n'
        f"  setup_data = function(data, params) {{\n{_body(30, '    ')}    data\n  }},\n"
        f"  draw_panel = function(self, data, panel_params, coord) {{\n{_body(30, '    ')}    data\n  }}\n"
        ")\n"
    )
    head, *rest = _chunks("R/geom-thing.r", text, "r")
    # the object's first lines join its first method (a bare header is not a chunk of its own)
    assert (head.start_line, head.symbols[:2], head.kind) == (1, ("GeomThing", "setup_data"), "method")
    assert [(c.start_line, c.symbols[0], c.kind) for c in rest] == [(36, "draw_panel", "method")]
    small = 'Counter <- R6Class("Counter", public = list(\n  add = function(n) {\n    n\n  }\n))\n'
    (chunk,) = _chunks("R/counter.R", small, "r")
    assert chunk.kind == "class" and chunk.symbols == ("Counter", "add")


def test_r_s4_definitions_and_file_level_values() -> None:
    text = (
        'setClass("Person", representation(name = "character"))\n\n'
        'setGeneric("greet", function(obj) standardGeneric("greet"))\n\n'
        'setMethod("greet", "Person", function(obj) {\n  cat(obj@name)\n})\n\n'
        "default_width <- 0.9\n"
    )
    chunks = _chunks("R/s4.R", text, "r")
    spans = _spans(chunks)
    assert spans["Person"][2] == "class"
    assert spans["greet"][:2] == (3, 3)
    assert any(c.start_line == 5 and c.symbols == ("greet",) for c in chunks)
    assert any("default_width" in c.binds for c in chunks)


def test_r_test_files_follow_testthat() -> None:
    tests = re.compile(_test_file_pattern())
    assert tests.search("tests/testthat/test-geom-point.R")
    assert tests.search("tests/testthat/test_utils.r")
    assert not tests.search("R/geom-test.r")


# -- OCaml --------------------------------------------------------------------------------------------


def test_ocaml_lets_types_and_modules() -> None:
    text = (
        "(* char sets *)\ntype c = int\n\nlet rec union l l' =\n  match l, l' with\n  | _, [] -> l\n"
        "  | [], _ -> l'\n  | _ -> l\n\nlet empty = []\n\nmodule Set = struct\n  let add x s = x :: s\nend\n"
        "\nexception Parse_error\n"
    )
    spans = _spans(_chunks("lib/cset.ml", text, "ocaml"))
    assert spans["c"] == (1, 2, "type")
    assert spans["union"] == (4, 8, "function")
    assert spans["empty"] == (10, 10, "value")
    assert spans["Set"][:3] == (12, 14, "module")
    assert spans["Parse_error"][2] == "type"


def test_ocaml_interface_values_are_named_by_their_value_not_their_type() -> None:
    text = 'type t\n\nval empty : t\n\nval union : t -> t -> t\n\nexternal length : string -> int = "%len"\n'
    spans = _spans(_chunks("lib/cset.mli", text, "ocaml"))
    assert spans["t"] == (1, 1, "type")
    assert spans["empty"] == (3, 3, "function")
    assert spans["union"] == (5, 5, "function")
    assert spans["length"] == (7, 7, "function")


def test_ocaml_a_long_module_splits_into_its_functions() -> None:
    lets = "".join(f"  let f{i} x =\n{_body(20, '    ', 'let y{i} = x + {i} in')}    x\n\n" for i in range(3))
    text = f"module Engine = struct\n{lets}end\n"
    chunks = _chunks("lib/engine.ml", text, "ocaml")
    assert [c.symbols[:2] for c in chunks] == [("Engine", "f0"), ("f1",), ("f2",)]
    assert [c.start_line for c in chunks] == [1, 25, 48]
    assert {c.kind for c in chunks} == {"function"}


# -- Erlang --------------------------------------------------------------------------------------------


def test_erlang_functions_with_their_specs_and_records() -> None:
    text = (
        "-module(chunk).\n-export([decode/1]).\n\n-record(state, {size = 0, body = <<>>}).\n\n"
        "%% Decodes one chunk.\n-spec decode(binary()) -> {ok, binary()}.\ndecode(<<>>) ->\n    {ok, <<>>};\n"
        "decode(Bin) ->\n    {ok, Bin}.\n\n-define(MAX, 10).\n"
    )
    spans = _spans(_chunks("src/chunk.erl", text, "erlang"))
    assert spans["decode"] == (6, 11, "function")  # comment, spec and both clauses
    assert spans["state"][2] == "type"
    assert spans["MAX"][2] == "macro"


# -- Solidity ------------------------------------------------------------------------------------------


def test_solidity_contracts_and_their_members() -> None:
    text = (
        "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n\n"
        "/// @dev Guards against reentry.\nabstract contract Guard {\n    uint256 private _status;\n\n"
        "    error Reentered();\n\n    modifier nonReentrant() {\n        _;\n    }\n}\n\n"
        "interface IToken {\n    event Transfer(address from, address to);\n"
        "    function transfer(address to) external returns (bool);\n}\n"
    )
    chunks = _chunks("utils/Guard.sol", text, "solidity")
    spans = _spans(chunks)
    assert spans["Guard"][:3] == (4, 13, "class")
    guard = next(c for c in chunks if c.symbols and c.symbols[0] == "Guard")
    assert {"Reentered", "nonReentrant"} <= set(guard.symbols)
    assert spans["IToken"][2] == "interface"


def test_solidity_a_long_contract_splits_into_named_functions() -> None:
    fns = "".join(
        f"    /// @dev step {i}\n    function step{i}(uint256 a) public returns (uint256) {{\n"
        f"{_body(25, '        ', 'a += {i};')}        return a;\n    }}\n\n"
        for i in range(3)
    )
    text = f"pragma solidity ^0.8.20;\n\ncontract Steps {{\n{fns}}}\n"
    chunks = _chunks("Steps.sol", text, "solidity")
    assert [c.symbols[:2] for c in chunks[1:]] == [("Steps", "step0"), ("step1",), ("step2",)]
    assert [c.start_line for c in chunks[1:]] == [3, 34, 64]  # each function's doc comment attaches
