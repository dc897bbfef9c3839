"""Each ranking signal pinned on a small made-up repository: what it should lift, what it should not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write

import codepith
from codepith.chunks.marks import is_wiring
from codepith.index.tokens import query_terms, stem, tokenize
from codepith.search import engine
from codepith.search.query import is_symbol_like, parse_query
from codepith.search.ranking import is_test_path, path_match_ratio, path_penalty_for


def _files(results: list[codepith.SearchResult]) -> list[str]:
    return [r.chunk.file_path for r in results]


def test_symbol_like_queries() -> None:
    for q in ("getUserById", "Foo::bar", "_private", "HTTPError", "Depends", "a.b.c", "$this->handler", "parse_config"):
        assert is_symbol_like(q), q
    for q in ("how are routes registered", "session", "connection pooling"):
        assert not is_symbol_like(q), q
    assert parse_query("Sinatra::Base").names == ("Base", "Sinatra::Base")


def test_stemming_meets_word_forms() -> None:
    assert stem("routes") == stem("routing") == stem("routed") == stem("route")
    assert stem("dependencies") == "dependency"
    assert stem("atomically") == stem("atomic") and stem("lazily") == stem("lazy") and stem("quickly") == "quick"
    assert stem("apply") == "apply" and stem("only") == "only"
    assert stem("status") == "status" and stem("class") == "class"
    # singulars ending in s meet their -es plurals, as 'case' meets 'cases' and 'schema' 'schemas'
    assert stem("alias") == stem("aliases") and stem("bias") == stem("biases") and stem("canvas") == stem("canvases")
    assert stem("case") == stem("cases") and stem("schema") == stem("schemas")
    assert set(query_terms("command aliases")) <= set(tokenize("func (c *Command) HasAlias(s string) bool"))
    assert set(query_terms("how are routes registered")) <= set(tokenize("def register_route(app): ..."))
    # compounds keep their exact spelling for symbol lookups
    assert "parse_config" in tokenize("parse_config()")


@pytest.mark.parametrize(
    "query, path",
    [
        ("usage examples for the client", "examples/client_demo.py"),
        ("a sample configuration", "samples/config.py"),
        ("documentation generation for man pages", "doc/man_docs.go"),
        ("shared test fixtures", "tests/conftest.py"),
    ],
)
def test_a_query_that_asks_for_examples_or_tests_keeps_them(query: str, path: str) -> None:
    assert path_penalty_for(parse_query(query))(path) == 1.0
    assert path_penalty_for(parse_query("how the client sends requests"))(path) < 1.0


def test_an_issue_asks_for_examples_in_its_title_not_its_prose() -> None:
    prose = (
        "Client drops headers on redirect\n\nWhen a request is redirected the Authorization header is lost. "
        "For example, with the snippet below the second request has no header at all, which breaks my "
        "application. A minimal example:\n\n```python\nsession.get(url, headers=h)\n```\n"
    )
    query = parse_query(prose)
    assert query.issue
    assert path_penalty_for(query)("examples/redirects.py") < 1.0
    titled = parse_query("Examples in the docs fail to run\n\n" + prose)
    assert path_penalty_for(titled)("examples/redirects.py") == 1.0


_WIDGET_PARTS = {f"widgets/part_{i}.rb": f"module Widgets\n  PART_{i} = {i}\nend\n" for i in range(4)}


@pytest.mark.parametrize(
    "others, answer, query",
    [
        # `module Widgets` is reopened in four files: the sentence's subject is the dispatching, not the module
        (
            _WIDGET_PARTS,
            (
                "widgets/dispatcher.rb",
                "class Dispatcher\n  def dispatch_request(path)\n    routes.each do |route|\n"
                "      return route.call(path) if route.match?(path)\n    end\n  end\nend\n",
            ),
            "how Widgets dispatch a request to its routes",
        ),
        # a library's class the repository only imports: the module named after it is where to look
        (
            {
                f"pkg/step_{i}.py": "from tokenizers import Tokenizer\n\n\n"
                f"def step_{i}(tok: Tokenizer) -> Tokenizer:\n    return Tokenizer.from_str(tok.to_str())\n"
                for i in range(12)
            },
            (
                "pkg/tokenizer/tokenizer.py",
                "def replace_vocabulary(tok, vocab):\n    data = tok.to_str()\n"
                "    return data.replace('a', vocab[0])\n",
            ),
            "Tokenizer",
        ),
    ],
)
def test_the_answer_outranks_files_that_only_name_the_word(  # type: ignore[no-untyped-def]
    tmp_path: Path, model, others: dict[str, str], answer: tuple[str, str], query: str
) -> None:
    write(tmp_path, {**others, answer[0]: answer[1]})
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search(query)[0].chunk.file_path == answer[0]


def test_a_name_many_files_define_is_still_each_of_them_when_asked_by_name(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, _WIDGET_PARTS)
    index = codepith.Index.from_path(tmp_path, model=model)
    assert {r.chunk.file_path for r in index.search("Widgets", top_k=10)} == set(_WIDGET_PARTS)


@pytest.mark.parametrize(
    ("name", "use", "defining"),
    [
        ("SessionStore", "SessionStore().get({i})",
         "x = 1\n\n\nclass SessionStore:\n    def get(self, key):\n        return None\n"),
        # a value bound at module level (flask's `session = LocalProxy(...)`) is what its users point at
        ("session", "session.get('user_{i}')", "from app.proxy import LocalProxy\n\nsession = LocalProxy('session')\n"),
    ],
)  # fmt: skip
def test_definition_beats_uses(tmp_path: Path, model, name: str, use: str, defining: str) -> None:  # type: ignore[no-untyped-def]
    uses = "\n".join(f"def caller_{i}():\n    return {use.format(i=i)}\n" for i in range(12))
    write(tmp_path, {"app/callers.py": uses, "app/more_callers.py": uses, "app/store.py": defining})
    index = codepith.Index.from_path(tmp_path, model=model)
    top = index.search(name, top_k=3)[0]
    assert top.chunk.file_path == "app/store.py" and name in top.chunk.names


def test_exact_case_definition_wins(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    impls = "\n".join(
        f"impl Serialize for T{i} {{\n    fn serialize(&self) -> u{i} {{\n        {i}\n    }}\n}}\n" for i in range(15)
    )
    write(
        tmp_path,
        {
            "src/impls.rs": impls,
            "src/ser.rs": (
                "/// A data structure that can be serialized.\n"
                "pub trait Serialize {\n    fn serialize(&self) -> u8;\n}\n"
            ),
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search("Serialize", top_k=3)[0].chunk.file_path == "src/ser.rs"


def test_capitalised_word_the_corpus_defines_is_a_name(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    noise = "\n".join(
        f"def visit_{i}(node):\n    # a visitor step for trait objects\n    return node\n" for i in range(10)
    )
    write(
        tmp_path,
        {
            "walk.py": noise,
            "core.py": "class Visitor:\n    def run(self):\n        pass\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search("Visitor trait definitions", top_k=3)[0].chunk.file_path == "core.py"


def test_path_words_lift_the_named_file(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path,
        {
            "middleware/cors.py": "def allow(origin):\n    return origin in ALLOWED\n",
            "app.py": "def setup(app):\n    # cors middleware: the cors middleware is added to the middleware list\n"
            "    app.add(cors_middleware)\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert index.search("CORS middleware", top_k=3)[0].chunk.file_path == "middleware/cors.py"
    assert path_match_ratio("middleware/cors.py", ["cors", "middleware"]) == 1.0
    assert path_match_ratio("dependencies/utils.py", ["dependency"]) > 0


def test_tests_rank_below_code_unless_asked(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path,
        {
            "tests/test_parser.py": "def test_parse_header_line():\n    # parse a header line\n"
            "    assert parse_header('a: b') == ('a', 'b')\n    assert parse_header('c: d') == ('c', 'd')\n"
            "    assert parse_header('line: e') == ('line', 'e')\n",
            "lib/parser.py": (
                "def parse_header(line):\n    key, _, value = line.partition(':')\n    return key, value.strip()\n"
            ),
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("parse header line", top_k=2))[0] == "lib/parser.py"
    assert _files(index.search("tests for parse header", top_k=2))[0] == "tests/test_parser.py"


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_api.py", True),
        ("pkg/api_test.go", True),
        ("src/button.test.tsx", True),
        ("spec/models/user_spec.rb", True),
        ("src/test/java/FooTest.java", True),
        ("libexec/bats-core/test_functions.bash", False),  # a shell project's own code, not a test
        ("src/contest.py", False),
        ("src/latest.rs", False),
        # ecosystems beyond the dev suite (ecosystems.py)
        ("test/Options/ParserSpec.hs", True),
        ("src/Text/ParserSpec.hs", True),
        ("spec/pl/stringx_spec.lua", True),
        ("base/strings/string_util_unittest.cc", True),
        ("Tests/FooTests.cs", True),
        ("src/Illuminate/Support/Str.php", False),
        ("src/Options/Applicative/Builder.hs", False),
        ("pl/stringx.lua", False),
    ],
)
def test_test_paths_follow_each_ecosystem(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_barrels_are_recognised_by_content() -> None:
    assert is_wiring("from .a import b\nfrom .c import (\n    d,\n    e,\n)\nimport os\n")
    assert is_wiring('export * from "./a";\nexport { b } from "./b";\n')
    assert is_wiring("pub mod de;\npub mod ser;\npub use de::Deserialize;\n")
    assert is_wiring('package main\n\nimport (\n\t"fmt"\n\tlog "github.com/x/y"\n)\n')  # Go
    assert is_wiring('const std = @import("std");\npub const fs = @import("fs.zig");\n')  # Zig
    # Elixir forwarding functions, a Haskell module's export list, Lua requires (ecosystems.py)
    assert is_wiring("  alias Foo.Bar\n  defdelegate fetch(map, key), to: Map\n  defdelegate put(m, k, v), to: Map\n")
    assert is_wiring("module Options.Applicative (\n  module X,\n  , long\n  , short\n  ) where\nimport Data.List\n")
    assert is_wiring('local utils = require "pl.utils"\nlocal tablex = require("pl.tablex")\n')
    assert is_wiring('#import "CDVPlugin.h"\n#import <UIKit/UIKit.h>\n@import WebKit;\n@class CDVView;\n')  # ObjC
    assert not is_wiring("def f(x):\n    return x\n\n\nclass A:\n    pass\n")
    real = "  def fetch(map, key) do\n    Map.fetch(map, key)\n  end\n  defdelegate put(m, k, v), to: Map\n"
    assert not is_wiring(real)
    assert not is_wiring('require "x"\nmodule A\n  def f\n    g\n  end\nend\n')
    # names listed under an import, however indented and aliased, are neutral; code lines are not
    assert is_wiring("from .models import (\n" + "        Model as BaseModel,\n" * 3 + "    )\nimport os\n")
    assert not is_wiring("import os\n" + " " * 40 + "await send_keepalive.send(data)\n" * 2)


def test_barrel_ranks_below_the_definition(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path,
        {
            "src/index.ts": "export { refillRate, refillRateLimit } from './limits';\n"
            "export { refillRate as rate, refillRateLimit as limit } from './limits';\nexport * from './other';\n",
            "src/limits.ts": "export function refillRate(b: number): number {\n  return b + 1;\n}\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("refill rate", top_k=2))[0] == "src/limits.ts"


def test_one_file_does_not_take_every_place(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    big = "\n\n".join(f"def retry_step_{i}(request):\n    return retry(request, {i})\n" for i in range(20))
    write(
        tmp_path,
        {
            "retry/big.py": big,
            "retry/policy.py": "def retry_policy(request):\n    return backoff(request)\n",
            "net/client.py": "def send_with_retry(request):\n    return retry(request, 3)\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    top5 = _files(index.search("retry request", top_k=5))
    assert len(set(top5)) >= 3


def test_qualifier_picks_the_method_of_the_named_class(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.search import engine

    callers = "\n".join(f"function caller_{i}($k) {{\n    return $k->gatherMiddleware($i);\n}}\n" for i in range(6))
    write(
        tmp_path,
        {
            "src/Http/Kernel.php": "<?php\nclass Kernel {\n    protected function gatherMiddleware($request) {\n"
            "        return $this->router->gatherMiddleware($request);\n    }\n}\n" + callers,
            "src/Routing/Router.php": "<?php\nclass Router {\n    public function gatherMiddleware($route) {\n"
            "        return array_merge($route->middleware(), []);\n    }\n}\n",
        },
    )
    assert parse_query("Router::gatherMiddleware").qualifier == "Router"
    assert parse_query("stringx.split").qualifier == "stringx"
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("Router::gatherMiddleware", top_k=3))[0] == "src/Routing/Router.php"
    monkeypatch.setattr(engine, "QUALIFIED", 1.0)
    assert _files(index.search("Router::gatherMiddleware", top_k=3))[0] == "src/Http/Kernel.php"


def test_header_brings_its_implementation(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.search import engine
    from codepith.search.companions import companions, unit_key

    others = {f"src/shape_{i}.cpp": f"int shape_{i}(int w) {{\n  return w * {i};\n}}\n" for i in range(20)}
    write(
        tmp_path,
        {
            "include/geo/placement.h": "// Scales a widget to fit its frame, keeping the aspect ratio.\n"
            "class Widget {\n"
            " public:\n  void resize_to(int width, int height);\n};\n",
            "src/placement.cpp": '#include "geo/placement.h"\n\nvoid Widget::resize_to(int w, int h) {\n'
            "  int r = w * 3 / h;\n  apply(r);\n}\n",
            **others,
        },
    )
    assert unit_key("a/foo-inl.h") == unit_key("a/foo.h") == unit_key("b/Foo.cpp")
    assert unit_key("a/CDVPlugin.m") == unit_key("a/CDVPlugin.h")  # Objective-C's halves too
    assert unit_key("a/foo.py") is None
    index = codepith.Index.from_path(tmp_path, model=model)
    assert companions(index.corpus, "include/geo/placement.h") == ["src/placement.cpp"]
    query = "scale to fit the frame keeping the aspect ratio"
    top = _files(index.search(query, top_k=3))  # the definition has none of the words; the declaration all
    assert top[0] == "include/geo/placement.h" and "src/placement.cpp" in top
    monkeypatch.setattr(engine, "COMPANION", 0.0)
    assert "src/placement.cpp" not in _files(index.search(query, top_k=3))


def test_unit_groups_found_in_the_listing_equal_the_unit_map() -> None:
    """The stem search over the joined paths finds each unit's files exactly as splitting every path does
    (case, half markers, dotted stems, a stem that is a prefix or a folder of another path)."""
    from codepith.search import companions as comp

    paths = [
        "Foo.h",
        "src/foo.cpp",
        "src/foo-inl.h",
        "lib/foo_impl.cc",
        "foo/bar.c",
        "foobar.h",
        "a/foo.bar.h",
        "a/foo.bar.cc",
        "b/FOO_IMPL.hpp",
        "b/foo_impl.hpp",
        "c/foo.py",
        "d/foo.",
        "e/xfoo.c",
        "f/foo.c.orig",
        "utils/x.h",
        "utils/x.c",
        "g/x.h",
        "h/x.h",
        "i/x.h",
        "j/x.cpp",
        "k/core.h",
        "k/core.c",
        "core.c",
    ]

    class Fake:
        def __init__(self, files: list[str]) -> None:
            self.files = files
            self.cache: dict[str, object] = {}

        def derived(self, name, compute, *, of_paths=False):  # type: ignore[no-untyped-def]
            if name not in self.cache:
                self.cache[name] = compute(self)
            return self.cache[name]

    fake = Fake(paths)
    by_map = comp._units(fake)  # type: ignore[arg-type]
    assert fake.derived("listing", comp._listing) is not None
    for key, group in by_map.items():
        assert comp._same_unit(fake, key) == group, key  # type: ignore[arg-type]
    assert comp.has_units(fake)  # type: ignore[arg-type]
    assert not comp.has_units(Fake(["a.py", "b/c.rs"]))  # type: ignore[arg-type]


def test_one_word_query_finds_its_definition(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.search import engine

    uses = "\n".join(f"def job_{i}(task):\n    return backoff(task, backoff(task, {i}))\n" for i in range(8))
    write(
        tmp_path,
        {
            "app/jobs.py": uses,
            "app/more_jobs.py": uses,
            "app/policy.py": "LIMIT = 3\n\n\ndef backoff(task, attempt):\n    return min(2 ** attempt, LIMIT)\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("backoff", top_k=3))[0] == "app/policy.py"
    monkeypatch.setattr(engine, "ONE_WORD", 0.0)
    assert _files(index.search("backoff", top_k=3))[0] != "app/policy.py"


def test_a_one_letter_name_finds_its_definition(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``g`` gives BM25 nothing (one letter is not indexed) and the dense side nothing useful: the chunk
    that binds the name is the answer, though retrieval never found it."""
    from codepith.search import engine

    helpers = "\n\n".join(
        f'def helper_{i}(g_value, *args, **kwargs):\n    """Call g with the arguments."""\n'
        f"    kwargs.get('g', {i})\n    return g_value(*args, **kwargs)\n"
        for i in range(60)
    )
    write(
        tmp_path,
        {
            "app/helpers.py": helpers,
            "app/testing.py": helpers.replace("helper_", "client_"),
            "app/views.py": helpers.replace("helper_", "view_"),
            "app/globals.py": "from app.proxy import LocalProxy\n\n_cv = ContextVar('app.context')\n"
            "g = LocalProxy(_cv, 'g', unbound_message='Working outside of the application context.')\n"
            "request = LocalProxy(_cv, 'request')\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("g", top_k=3))[0] == "app/globals.py"
    monkeypatch.setattr(engine, "UNINDEXED_WORD", engine.ONE_WORD)
    assert _files(index.search("g", top_k=3))[0] != "app/globals.py"


def test_interfaces_and_facades_rank_below_the_implementation(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.chunks.marks import is_declaration
    from codepith.search import engine

    write(
        tmp_path,
        {
            "src/Contracts/Mailer.php": "<?php\n\nnamespace App\\Contracts;\n\ninterface Mailer\n{\n"
            "    /** Send a message to the queued mail recipients. */\n    public function send($message);\n}\n",
            "src/Transport/Smtp.php": "<?php\n\nnamespace App\\Mail;\n\nclass SmtpTransport\n{\n"
            "    public function send($message)\n    {\n        foreach ($this->recipients as $to) {\n"
            "            $this->socket->write($to, $message->body());\n        }\n    }\n}\n",
        },
    )
    assert is_declaration("src/Contracts/Mailer.php", "interface Mailer\n{\n")
    facade = "<?php\n\nnamespace F;\n\n/**\n * @see \\M\\Mailer\n */\nclass Mail extends Facade\n{"
    assert is_declaration("F/Mail.php", facade)
    assert not is_declaration("A.java", "public class A {\n    interface Listener { void on(); }\n}")
    assert not is_declaration("src/Transport/Smtp.php", "class SmtpTransport\n{\n")
    assert not is_declaration("src/mailer.ts", "interface Mailer {\n}")  # TypeScript interfaces are types
    assert is_declaration("binding/binding.go", "// Binding binds a request.\ntype Binding interface {\n")
    assert not is_declaration("binding/form.go", "type formBinding struct{}\n")
    index = codepith.Index.from_path(tmp_path, model=model)
    query = "send a message to the mail recipients"
    assert _files(index.search(query, top_k=2))[0] == "src/Transport/Smtp.php"
    monkeypatch.setattr(engine, "DECLARATION", 1.0)
    assert _files(index.search(query, top_k=2))[0] == "src/Contracts/Mailer.php"


def _top_with(index: codepith.Index, query: str, monkeypatch: pytest.MonkeyPatch, constant: str, value: float) -> str:
    """The top file for ``query`` with one engine constant set (the signal switched on or off)."""
    from codepith.search import engine

    monkeypatch.setattr(engine, constant, value)
    return _files(index.search(query, top_k=2))[0]


def test_an_older_copy_of_the_code_ranks_below_the_current_one(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.search.ranking import superseded_folders

    old = "def parse_fields(model):\n    '''Read the declared fields of a model and their constraints.'''\n"
    old += "    return {name: field.constraints for name, field in model.declared_fields.items()}\n"
    new = "def collect_fields(cls):\n    '''Collect fields declared on a model class, with their constraints.'''\n"
    new += "    return {k: v for k, v in vars(cls).items() if isinstance(v, FieldInfo)}\n"
    files = {f"lib/{n}.py": f"def {n}_helper():\n    return {i}\n" for i, n in enumerate(["config", "types", "errors"])}
    files.update({f"lib/v1/{n}.py": f"def {n}_helper():\n    return 0\n" for n in ["config", "types", "errors"]})
    files.update({"lib/fields.py": new, "lib/v1/fields.py": old})
    write(tmp_path, files)
    assert superseded_folders(files) == {"lib/v1"}
    assert superseded_folders(["pkg/v3/a.ts", "pkg/v4/a.ts", "api/v1/users.py", "api/v1/orders.py"]) == {"pkg/v3"}
    index = codepith.Index.from_path(tmp_path, model=model)
    query = "how are model fields declared and constrained"
    assert _top_with(index, query, monkeypatch, "SUPERSEDED", 1.0) == "lib/v1/fields.py"
    assert _top_with(index, query, monkeypatch, "SUPERSEDED", 0.5) == "lib/fields.py"


def test_generated_code_ranks_below_its_source(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.chunks.marks import is_generated

    assert is_generated("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n")
    assert is_generated("/* A Bison parser, made by GNU Bison 3.0.4.  */\n")
    assert is_generated('#line 2 "lexer.c"\n#define X 1\n/* A lexical scanner generated by flex */\n')
    assert not is_generated('MSG = """\nThis file was generated by Bundler; do not edit it.\n"""\n')  # not a comment
    assert not is_generated("def generate_report():\n    return 'generated'\n")
    body = "".join(f"    case {i}: report_location_error(state, {i}); break;\n" for i in range(12))
    write(
        tmp_path,
        {
            "src/parser.c": "/* A Bison parser, made by GNU Bison 3.0.4.  */\n\nvoid yyerror_location(int state) {\n"
            "  /* report a syntax error with its source location */\n  switch (state) {\n" + body + "  }\n}\n",
            "src/locfile.c": "/* Line numbers of a program. */\n\n"
            "void locfile_report_error(struct locfile *l, int pos, const char *msg) {\n"
            '  int line = locfile_line(l, pos);\n  fprintf(stderr, "%s at line %d\\n", msg, line);\n}\n',
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    query = "report a syntax error with the source location of the parser state"
    assert _top_with(index, query, monkeypatch, "GENERATED", 1.0) == "src/parser.c"
    assert _top_with(index, query, monkeypatch, "GENERATED", 0.5) == "src/locfile.c"


def test_a_qualifier_prefers_the_file_named_exactly_after_it(tmp_path: Path) -> None:
    from codepith.search.engine import _qualifier_holds

    method = "    public Elements select(String query) {\n        return null;\n    }\n"
    files = {
        "nodes/Element.java": "class Element {\n" + method + "}\n",
        "select/Elements.java": "class Elements {\n" + method + "}\n",
        "util/Routes.java": "class Routes {\n    void add() {}\n}\n",
    }
    write(tmp_path, files)
    corpus = codepith.Index.from_path(tmp_path, model=None, use_cache=False).corpus
    assert _qualifier_holds(corpus, "nodes/Element.java", "Element")
    assert not _qualifier_holds(corpus, "select/Elements.java", "Element")  # Element.java exists
    assert _qualifier_holds(corpus, "select/Elements.java", "Elements")
    assert _qualifier_holds(corpus, "util/Routes.java", "Route")  # no Route file: the plural stands for it


def test_a_word_in_a_defined_name_counts_more_than_in_a_body(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    talk = "".join(f"    # step {i}: the scheduler may yield the thread so other tasks can run\n" for i in range(3))
    named = 'def yield_thread(task):\n    """Give way to other tasks."""\n    task.suspended = True\n'
    write(
        tmp_path,
        {
            "runtime/scheduler.py": "def schedule(tasks):\n" + talk + "    for t in tasks:\n        t.step()\n",
            "runtime/cooperation.py": named + "    return _suspend(task)\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    query = "yield the thread"
    monkeypatch.setattr(engine, "ALPHA_SPAN", 0.0)  # BM25's field is the signal here, not the fusion's lean by length
    assert _top_with(index, query, monkeypatch, "NAME_FIELD", 0.0) == "runtime/scheduler.py"
    assert _top_with(index, query, monkeypatch, "NAME_FIELD", 3.0) == "runtime/cooperation.py"


def test_the_name_field_leaves_body_scores_alone(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """A term that does not read the name field scores exactly as before the field existed: the field's
    terms have no share in a chunk's length, the number of chunks or any body term's frequency."""
    import math

    from codepith.index.analyze import term_bags
    from codepith.index.lexical import K1, B
    from codepith.store.segment import SIDE_MARK

    write(tmp_path, {"a.py": "def parse_config(path):\n    return load(path)\n", "b.py": "X = parse(1)\nY = 2\n"})
    corpus = codepith.Index.from_path(tmp_path, model=model).corpus
    bodies: list[dict[str, int]] = []  # textbook BM25 over the body terms alone, chunk by chunk
    for path in corpus.files:
        chunks = [corpus.chunks[i] for i in corpus.chunk_indices(path)]
        for bag in term_bags(path, chunks):
            bodies.append({t: n for t, n in zip(bag.terms, bag.counts, strict=True) if not t.startswith(SIDE_MARK)})
    first = corpus.chunks[corpus.chunk_indices("a.py")[0]]
    assert any(t.startswith(SIDE_MARK) for t in term_bags("a.py", [first])[0].terms)  # the field is there
    avg = sum(sum(b.values()) for b in bodies) / len(bodies)
    terms = ["pars", "config", "path"]
    expected = np.zeros(len(bodies))
    for term in terms:
        df = sum(term in b for b in bodies)
        idf = math.log(1.0 + (len(bodies) - df + 0.5) / (df + 0.5))
        for i, b in enumerate(bodies):
            tf = b.get(term, 0)
            expected[i] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * sum(b.values()) / avg))
    assert np.allclose(corpus.bm25.scores(terms), expected, rtol=1e-5)
    assert corpus.bm25.scores(terms, side=3.0)[0] > corpus.bm25.scores(terms)[0]  # a.py defines parse_config


def test_an_issue_reads_the_name_field_for_its_title_words_only(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from codepith.search import engine
    from codepith.search.query import parse_query

    prose = "We upgraded last week and since then the worker pool misbehaves under load in production.\n"
    write(
        tmp_path,
        {
            "runtime/cooperation.py": "def yield_thread(task):\n    task.suspended = True\n    return task\n",
            "runtime/pool.py": "def grow(pool):\n    pool.size += 1\n    return pool\n",
        },
    )
    corpus = codepith.Index.from_path(tmp_path, model=model).corpus
    named = corpus.chunk_indices("runtime/cooperation.py")[0]
    in_title = parse_query("yield_thread never returns\n\n" + prose + "It hangs when many tasks wait.\n")
    in_prose = parse_query("The pool hangs forever\n\n" + prose + "Calling yield_thread never returns.\n")
    assert in_title.issue and in_prose.issue

    def score(query: object, weight: float) -> float:
        monkeypatch.setattr(engine, "ISSUE_NAME_FIELD", weight)
        return float(engine.lexical_scores(corpus, query)[named])  # type: ignore[arg-type]

    assert score(in_title, 1.0) > score(in_title, 0.0) > 0
    assert score(in_prose, 1.0) == score(in_prose, 0.0) > 0  # prose words never read the field


def test_a_symbol_the_repository_only_uses_lifts_the_chunks_that_use_it(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``OAuth2PasswordBearer`` from a library: no chunk defines it, so the few that hold it whole are
    the answer, not the many that talk about passwords and bearers in words."""
    words = "\n".join(
        f"def check_{i}(password, bearer, oauth):\n    # the oauth password bearer flow, step {i}\n"
        f"    return oauth.password(bearer, password, {i})\n"
        for i in range(6)
    )
    write(
        tmp_path,
        {
            "auth/flows.py": words,
            "auth/more_flows.py": words,
            "api/login.py": "from lib.security import OAuth2PasswordBearer\n\n\n"
            "def login_scheme():\n    return OAuth2PasswordBearer(token_url='/token')\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _top_with(index, "OAuth2PasswordBearer", monkeypatch, "USES", 0.5) == "api/login.py"
    assert _top_with(index, "OAuth2PasswordBearer", monkeypatch, "USES", 0.0) != "api/login.py"


def test_a_split_definition_is_found_at_its_declaring_line(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A class under a long comment is split into pieces that all name it; the piece holding
    ``class Engine`` is the one a search for the name should give first."""
    from codepith.search import engine
    from codepith.search.ranking import declares

    doc = "".join(f"  # Engine note {i}: the Engine wraps an application and its Engine config.\n" for i in range(140))
    body = "".join(f"    def step_{i}(x)\n      x + {i}\n    end\n" for i in range(40))
    source = f"module Rails\n{doc}  class Engine < Railtie\n    autoload :Setup\n{body}  end\nend\n"
    write(tmp_path, {"lib/engine.rb": source})
    index = codepith.Index.from_path(tmp_path, model=model)
    pieces = [c for c in index.chunks if "Engine" in c.symbols]
    assert len(pieces) >= 3, "the fixture must split the class"
    head = next(c for c in pieces if "class Engine < Railtie" in c.content)

    def top() -> tuple[int, int]:
        got = index.search("Rails::Engine", top_k=3)[0].chunk
        return got.start_line, got.end_line

    assert top() == (head.start_line, head.end_line)
    monkeypatch.setattr(engine, "PIECE", 1.0)
    assert top() != (head.start_line, head.end_line), "without the rule the comment pieces win"
    assert declares("  class Engine < Railtie\n", "Engine") and declares("func (v *V) Engine() any {", "Engine")
    assert declares("#define ENGINE_MAX 4\n", "ENGINE_MAX")
    assert not declares("  # the class Engine wraps an app\n", "Engine") and not declares("Engine.new(app)\n", "Engine")


def test_a_capitalised_name_finds_the_type_before_a_method_of_that_name(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fields = "".join(f"\tfield{i} int // setting {i} of the router\n" for i in range(30))
    write(
        tmp_path,
        {
            "web.go": f"package web\n\n// Router state.\ntype Engine struct {{\n{fields}}}\n",
            "binding/validator.go": "package binding\n\n// Engine returns the Engine of the Engine validator.\n"
            "func (v *Validator) Engine() any {\n\treturn v.engine\n}\n\n"
            "// lazyinit builds the Engine on first use.\n"
            "func (v *Validator) lazyinit() {\n\tv.engine = newEngine()\n}\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("Engine", top_k=2))[0] == "web.go"
    without = _top_with(index, "Engine", monkeypatch, "TYPE_FIRST", 1.0)
    assert without == "binding/validator.go", "the method wins without it"


def test_a_reexport_module_the_query_names_is_not_ranked_down(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``websockets.py`` only re-exports the framework's WebSocket: a barrel, ranked down as wiring, unless
    the query names that very file; then it is this repository's answer."""
    write(
        tmp_path,
        {
            "app/websockets.py": "from framework.websockets import WebSocket as WebSocket  # noqa\n"
            "from framework.websockets import WebSocketDisconnect as WebSocketDisconnect  # noqa\n",
            "app/routing.py": "def add_api_websocket_route(path, endpoint):\n"
            "    '''Register a websocket endpoint: the handler runs for each websocket connection.'''\n"
            "    return Route(path, endpoint, websocket=True)\n",
        },
    )
    index = codepith.Index.from_path(tmp_path, model=model)
    assert _files(index.search("websocket endpoint implementation", top_k=2))[0] == "app/websockets.py"
    without = _top_with(index, "websocket endpoint implementation", monkeypatch, "NAMED_WIRING", False)
    assert without == "app/routing.py", "as plain wiring it ranks below the code"


def test_a_longer_sentence_leans_on_bm25_a_shorter_one_on_the_dense_side() -> None:
    queries = (
        "error handlers",
        "request context handling",
        "how the timer wheel tracks sleep deadlines",
        "utility methods for parameter parsing and URL encoding across mounted apps",
    )
    values = [engine.dense_share(parse_query(q)) for q in queries]
    assert values == sorted(values, reverse=True) and values[0] > values[-1], values
    assert all(abs(v - engine.ALPHA_WORDS) <= engine.ALPHA_SPAN + 1e-9 for v in values), values
    # a symbol and an issue text keep their own share, whatever their length
    assert engine.dense_share(parse_query("getUserById")) == engine.ALPHA_SYMBOL
    issue = parse_query('Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n' + "words " * 80)
    assert issue.issue and engine.dense_share(issue) == engine.ALPHA_WORDS
    assert engine.dense_share(parse_query("error handlers"), "lexical") == 0.0
    assert engine.dense_share(parse_query("error handlers"), "dense") == 1.0


def test_further_chunks_of_a_listed_file_are_discounted_more_for_a_phrase_than_for_an_issue() -> None:
    scores = {0: 1.0, 1: 0.9, 2: 0.8, 3: 0.4}  # chunks 0-2 in file 0, chunk 3 alone in file 1
    file_of = {0: 0, 1: 0, 2: 0, 3: 1}
    phrase = [i for _, i in engine._select(None, dict(scores), 4, dict(file_of), engine.SATURATION)]  # type: ignore[arg-type]
    issue = [i for _, i in engine._select(None, dict(scores), 4, dict(file_of), engine.ISSUE_SATURATION)]  # type: ignore[arg-type]
    assert phrase == [0, 3, 1, 2], "a search phrase lists the second file before the first file's other pieces"
    assert issue == [0, 1, 3, 2], "an issue's fix spans places of one file: its second piece stays above"


class _Paths:
    """The two things the path boost reads of a corpus: its file paths and a derived table."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self._derived: dict[str, object] = {}

    def derived(self, name: str, compute, *, of_paths: bool = False):  # type: ignore[no-untyped-def]
        return self._derived.setdefault(name, compute(self))


def test_a_query_word_in_most_files_paths_tells_no_file_from_another(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [f"middleware/m{i}.go" for i in range(12)] + ["middleware/strip.go", "mux.go"]
    query = parse_query("path stripping middleware")

    def boosted() -> dict[int, float]:
        scores = {i: 1.0 for i in range(len(files))}
        engine._boost_path_words(_Paths(files), query, scores, 1.0, {i: i for i in range(len(files))})  # type: ignore[arg-type]
        return scores

    scores = boosted()
    assert scores[12] > 1.0, "strip.go is named after a query word"
    assert all(scores[i] == 1.0 for i in range(12)), "`middleware` is in 13 of 14 paths: it lifts none of them"
    assert scores[12] - 1.0 == pytest.approx(engine.PATH_WORDS / 3), "the common word still counts as asked"
    monkeypatch.setattr(engine, "COMMON_PATH_WORD", 1.0)
    assert all(s > 1.0 for s in list(boosted().values())[:13]), "without the rule every middleware/ file gains"


def test_path_word_shares_match_a_scan_of_every_path() -> None:
    from codepith.search.ranking import _word_match, path_word_table, path_words

    files = [
        "routing/router.py", "routing/routes.py", "middleware/cors.py", "middleware/gzip.py", "app.py",
        "registry.py", "utils/url_map.rb", "dependencies/utils.py", "src/handler.rs", "Handler/StreamHandler.php",
        "lib/other.py",
    ]  # fmt: skip
    table = path_word_table(files)
    words = ("route", "routing", "register", "middleware", "util", "utility", "url", "handler", "dependency", "zzz")
    for word in words:
        scan = sum(1 for f in files if any(_word_match(word, w) for w in path_words(f))) / len(files)
        assert table.share(word) == scan, word
    sampled = path_word_table(files * 500, most=1_100)  # every 5th of 5,500 paths: each of the 11 as often
    assert sampled.n_files == 1_100 and all(sampled.share(w) == pytest.approx(table.share(w)) for w in words)
