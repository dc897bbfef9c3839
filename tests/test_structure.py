"""Definitions and breadcrumbs: a hit deep inside a long function names it (and its class)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codepith.output.read import mcp_read_call
from codepith.structure.definitions import definitions, enclosing, parse

FILLER = 90  # body lines: long enough that the chunker splits the function and a hit starts mid-body


def _body(indent: str, line: str) -> str:
    return "\n".join(f"{indent}{line}" for _ in range(FILLER))


# language -> (file name, source, class name or None, function name, a line inside the long function)
SOURCES: dict[str, tuple[str, str, str | None, str]] = {
    "c": (
        "follow.c",
        "int follow_redirect(struct request *req,\n                    int limit)\n{\n  int hops = 0;\n"
        + _body("  ", "hops = hops + step(req);")
        + "\n  return hops;\n}\n",
        None,
        "follow_redirect",
    ),
    "python": (
        "follow.py",
        "class Redirector:\n    def follow_redirect(self, limit):\n        hops = 0\n"
        + _body("        ", "hops = hops + self.step()")
        + "\n        return hops\n",
        "Redirector",
        "follow_redirect",
    ),
    "java": (
        "Redirector.java",
        "public class Redirector {\n  public int followRedirect(int limit) {\n    int hops = 0;\n"
        + _body("    ", "hops = hops + step();")
        + "\n    return hops;\n  }\n}\n",
        "Redirector",
        "followRedirect",
    ),
    "go": (
        "follow.go",
        "package web\n\ntype Redirector struct{}\n\nfunc (r *Redirector) FollowRedirect(limit int) int {\n\thops := 0\n"
        + _body("\t", "hops = hops + r.step()")
        + "\n\treturn hops\n}\n",
        "Redirector",
        "FollowRedirect",
    ),
    "rust": (
        "follow.rs",
        "struct Redirector;\nimpl Redirector {\n    fn follow_redirect(&self, limit: u32) -> u32 {\n"
        "        let mut hops = 0;\n" + _body("        ", "hops = hops + self.step();") + "\n        hops\n    }\n}\n",
        "Redirector",
        "follow_redirect",
    ),
    "typescript": (
        "follow.ts",
        "export class Redirector {\n  followRedirect(limit: number): number {\n    let hops = 0;\n"
        + _body("    ", "hops = hops + this.step();")
        + "\n    return hops;\n  }\n}\n",
        "Redirector",
        "followRedirect",
    ),
}


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_enclosing_names_function_and_class(language: str) -> None:
    _, source, cls, func = SOURCES[language]
    tree = parse(source, language)
    assert tree is not None
    names = [d.name for d in enclosing(tree, language, source.encode(), 30)]
    assert names[-1] == func
    if cls is not None and language != "go":  # a Go method names its receiver in the signature instead
        assert names[0] == cls
    inner = enclosing(tree, language, source.encode(), 30)[-1]
    assert func in inner.signature and inner.line < 30 <= inner.end_line
    if language == "go":
        assert "*Redirector" in inner.signature


def test_outside_any_definition_there_is_no_breadcrumb() -> None:
    source = "import os\n\nX = 1\n\n\ndef f():\n    return X\n"
    tree = parse(source, "python")
    assert tree is not None
    assert enclosing(tree, "python", source.encode(), 3) == ()
    assert enclosing(tree, "python", source.encode(), 6) == ()  # the def line itself is not inside
    assert [d.name for d in enclosing(tree, "python", source.encode(), 7)] == ["f"]


def test_file_definitions_nest_and_label_methods() -> None:
    source = (
        "import os\n\n\nclass Store:\n    @property\n    def size(self) -> int:\n        return 1\n\n"
        "    def put(self, key: str,\n            value: bytes) -> None:\n        pass\n\n\ndef main():\n    pass\n"
    )
    tree = parse(source, "python")
    assert tree is not None
    defs = definitions(tree, "python", source.encode())
    rows = [(d.kind, d.name, d.depth, d.line, d.start_line, d.end_line) for d in defs]
    assert rows == [
        ("class", "Store", 0, 4, 4, 11),
        ("method", "size", 1, 6, 5, 7),
        ("method", "put", 1, 9, 9, 11),
        ("function", "main", 0, 14, 14, 15),
    ]
    assert defs[2].signature == "def put(self, key: str, value: bytes) -> None:"
    assert defs[1].parent == 0 and defs[3].parent == -1


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_packet_hit_inside_long_function_names_it(tmp_path: Path, model, language: str) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index
    from codepith.output.packets import render_packet

    name, source, cls, func = SOURCES[language]
    (tmp_path / name).write_text(source)
    index = Index.from_path(tmp_path, model=model)
    later = [c for c in index.chunks if c.start_line > 10]  # a chunk that starts mid-function
    assert later, [c.location for c in index.chunks]
    from codepith.search.result import SearchResult

    results = [SearchResult(later[0], 1.0, lexical_rank=0)]
    text = render_packet("hops step", results, max_chars=4000, read_call=mcp_read_call, enclosing=index.enclosing)
    crumb = next(line for line in text.split("\n") if line.startswith("in: "))
    assert func in crumb and re.search(r" \(\d+\)$", crumb), crumb
    if cls is not None and language != "go":
        assert cls in crumb.split(" > ")[0]
    assert len(text) <= 4000
    plain = render_packet("hops step", results, max_chars=4000, read_call=mcp_read_call)
    assert "in: " not in plain
    # the crumb is paid for: at a budget that fits only the plain packet, the packet still stays inside it
    tight = render_packet(
        "hops step", results, max_chars=len(plain), read_call=mcp_read_call, enclosing=index.enclosing
    )
    assert len(tight) <= len(plain)


def test_search_packet_names_method_of_long_class(tmp_path: Path) -> None:
    import subprocess
    import sys

    _, source, _, _ = SOURCES["python"]
    lines = source.split("\n")
    lines[80] = "        hops = record_audit_trail(hops)"
    (tmp_path / "follow.py").write_text("\n".join(lines))
    out = subprocess.run(
        [sys.executable, "-m", "codepith.surfaces.cli", "search", "record_audit_trail", str(tmp_path), "-k", "1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "in: class Redirector (1) > def follow_redirect(self, limit): (2)" in out, out
    assert "81|         hops = record_audit_trail(hops)" in out


def test_confidence_floor_separates_nonsense_from_real_questions(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index

    (tmp_path / "cache.py").write_text(
        "import os\nimport tempfile\n\n\ndef atomic_write(path, data):\n"
        "    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))\n"
        "    with os.fdopen(fd, 'wb') as f:\n        f.write(data)\n    os.replace(tmp, path)\n"
    )
    index = Index.from_path(tmp_path, model=model)
    for nonsense in ("zzqqxxnotfound", "blorptastic wuzzle fnord", "qwxzvbnm"):
        c = index.confidence(nonsense)
        assert not c.confident, (nonsense, c)
    for real in ("write a file atomically", "atomic_write", "replace the temporary file", "durable storage on disk"):
        c = index.confidence(real)
        assert c.confident, (real, c)
    assert index.confidence("g").confident  # nothing to look up: too short to call it nonsense


FLASK = Path("/work/corpora/flask")


@pytest.mark.skipif(not (FLASK / "src/flask/app.py").is_file(), reason="the dev corpus is not on this machine")
def test_outline_on_flask_lists_the_app_class_and_maps_the_repository(model) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index
    from codepith.output.outline import mcp_outline_call, render_outline

    index = Index.from_path(FLASK, model=model)
    text = render_outline(
        index.outline("src/flask/app.py"), max_chars=20_000, read_call=mcp_read_call, outline_call=mcp_outline_call
    )
    assert re.search(r"^\d+-\d+ class: class Flask\(App\):$", text, re.M), text[:500]
    for method in ("dispatch_request", "make_response", "wsgi_app", "full_dispatch_request"):
        assert re.search(rf"^  \d+-\d+ method: def {method}\(", text, re.M), method
    repo_map = index.outline(".", limit=200)
    for budget in (300, 500, 1000, 2000, 4000, 8000):
        text = render_outline(repo_map, max_chars=budget, read_call=mcp_read_call, outline_call=mcp_outline_call)
        assert len(text) <= budget
        assert text.startswith("MAP .")
    text = render_outline(repo_map, max_chars=4000, read_call=mcp_read_call, outline_call=mcp_outline_call)
    for central in ("class Flask(App)", "class Blueprint(Scaffold)", "class Scaffold:", "def render_template("):
        assert central in text, central
    assert "tests/" not in text.split("... (")[0]  # tests rank below the code they test


def test_outline_never_exceeds_its_budget(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index
    from codepith.output.outline import mcp_outline_call, render_outline

    for i in range(12):
        methods = "".join(
            f"    def method_{j}_{'x' * (j * 7)}(self, value_{j}):\n        return helper_{i}(value_{j})\n\n"
            for j in range(9)
        )
        (tmp_path / f"mod_{i}.py").write_text(
            f"def helper_{i}(value):\n    return value\n\n\nclass Thing{i}:\n{methods}"
        )
    index = Index.from_path(tmp_path, model=model)
    for path in (".", "mod_3.py"):
        outline = index.outline(path, limit=300)
        for budget in range(1, 3000, 37):
            text = render_outline(outline, max_chars=budget, read_call=mcp_read_call, outline_call=mcp_outline_call)
            assert len(text) <= budget, (path, budget)
            if budget >= 300 and "omitted" not in text and "more definitions" not in text:
                whole = render_outline(outline, max_chars=10**6, read_call=mcp_read_call, outline_call=mcp_outline_call)
                assert text == whole, (path, budget)  # nothing left out silently


def test_map_focus_leans_toward_a_query_or_a_file(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index

    (tmp_path / "core.py").write_text("def shared_helper(x):\n    return x\n")
    (tmp_path / "billing.py").write_text(
        "from core import shared_helper\n\n\ndef compute_invoice_total(items):\n    return shared_helper(items)\n"
    )
    (tmp_path / "auth.py").write_text(
        "from core import shared_helper\n\n\ndef verify_password_hash(pw):\n    return shared_helper(pw)\n"
    )
    index = Index.from_path(tmp_path, model=model)

    def first_other(focus: str | None) -> str:
        names = [e.definition.name for e in index.outline(".", focus=focus).entries]
        assert names[0] == "shared_helper", names  # referenced by both: the centre of the map
        return names[1]

    assert first_other("password hashing") == "verify_password_hash"
    assert first_other("invoice totals") == "compute_invoice_total"
    assert first_other("auth.py") == "verify_password_hash"


def test_a_map_never_shows_more_definitions_than_it_counts(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    from codepith.api import Index
    from codepith.output.outline import render_repo_map

    # a companion object shares its class's name, and a member of it brings it into the map as a container
    (tmp_path / "cache.scala").write_text(
        "class LruCache(capacity: Int) {\n  def put(key: String): Unit = {\n    println(key)\n  }\n}\n\n"
        "object LruCache {\n  def apply(capacity: Int): LruCache = new LruCache(capacity)\n}\n"
    )
    index = Index.from_path(tmp_path, model=model)
    repo_map = index.outline(".")
    text = render_repo_map(repo_map, max_chars=4000, outline_call=lambda p: p, read_call=lambda p, a, b: p)
    m = re.match(r"MAP \.  (\d+) of (\d+) definitions", text)
    assert m, text
    assert int(m.group(1)) <= int(m.group(2)), text
    assert "more definitions" not in text, "everything fits: no trailer that counts a negative rest"


def test_structure_parses_only_what_the_index_chunked_with_syntax(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file whose chunking fell back to line windows (its grammar may crash or hang on it) or that changed
    since the index saw it is not parsed again in this process for breadcrumbs or an outline."""
    import os

    import codepith.chunks.chunker as chunker
    import codepith.structure.parsed as parsed
    from codepith.api import Index

    real = chunker.syntax_pieces

    def faulty(root, language):  # type: ignore[no-untyped-def]
        if b"POISON_FOR_THE_GRAMMAR" in (root.text or b""):
            raise RecursionError("maximum recursion depth exceeded")
        return real(root, language)

    monkeypatch.setattr(chunker, "syntax_pieces", faulty)
    monkeypatch.setenv("CODEPITH_WORKERS", "0")
    (tmp_path / "bad.py").write_text("# POISON_FOR_THE_GRAMMAR\ndef windowed():\n    return 1\n")
    (tmp_path / "good.py").write_text("def parsed_fine():\n    return 2\n")
    index = Index.from_path(tmp_path, model=model, use_cache=False)
    seen: list[str] = []
    real_parse = parsed.parse

    def counting(text: str, language: str):  # type: ignore[no-untyped-def]
        seen.append(text)
        return real_parse(text, language)

    monkeypatch.setattr(parsed, "parse", counting)
    assert [d.name for d in index.definitions("good.py", "python")] == ["parsed_fine"]
    assert index.definitions("bad.py", "python") == () and index.enclosing("bad.py", "python", 2) == ()
    assert len(seen) == 1 and "parsed_fine" in seen[0]
    good = tmp_path / "good.py"
    good.write_text("def parsed_fine():\n    return 3  # changed, not yet re-indexed\n")
    os.utime(good, ns=(1, 1))
    assert index.definitions("good.py", "python") == () and len(seen) == 1


def test_a_c_keyword_read_as_a_name_is_no_definition_and_leads_no_map(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    """``__visible struct {...} x;`` (a macro before an anonymous struct) is read by C's grammar as a
    function named ``struct``: every C file "used" that name, and the kernel's map opened with it."""
    from codepith.api import Index
    from codepith.chunks.chunker import chunk_file

    odd = "__visible struct {\n\tunsigned long offset;\n} bios_entry;\n\nint real_helper(int x)\n{\n\treturn x;\n}\n"
    assert [d.name for d in definitions(parse(odd, "c"), "c", odd.encode())] == ["real_helper"]  # type: ignore[arg-type]
    for language in ("c", "cpp", "objc"):
        assert all("struct" not in c.symbols for c in chunk_file("odd.c", odd, language)), language
    (tmp_path / "odd.c").write_text(odd)
    for i in range(3):
        user = f"struct s{i} {{ int a; }};\nint use{i}(void)\n{{\n\treturn real_helper({i});\n}}\n"
        (tmp_path / f"user{i}.c").write_text(user)
    repo_map = Index.from_path(tmp_path, model=model).outline(".")
    assert repo_map.entries[0].definition.name == "real_helper", [e.definition.name for e in repo_map.entries]


def test_an_outline_says_why_a_file_has_none(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file indexed as line windows was "no definitions found" (it had thousands), and one the index left
    out for its size "nothing indexed under" it, as if it were not there."""
    import codepith.chunks.chunker as chunker
    from codepith.api import Index
    from codepith.errors import PathError
    from codepith.output.outline import render_outline

    monkeypatch.setattr(chunker, "MAX_FILE_CHUNKS", 5)
    monkeypatch.setenv("CODEPITH_WORKERS", "0")
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "2000")
    (tmp_path / "generated.py").write_text("".join(f"def fn_{i}():\n    return {i}\n\n\n" for i in range(40)))
    (tmp_path / "big.py").write_text("def big():\n    return 1\n" + "# padding\n" * 300)
    (tmp_path / "empty_of_defs.py").write_text("X = 1\n")
    index = Index.from_path(tmp_path, model=model, use_cache=False)
    text = render_outline(index.outline("generated.py"), max_chars=4000, read_call=mcp_read_call, outline_call=str)
    assert text == "OUTLINE generated.py  no outline: indexed as line windows (chunker error: more than 5 chunks)"
    text = render_outline(index.outline("empty_of_defs.py"), max_chars=4000, read_call=mcp_read_call, outline_call=str)
    assert text == "OUTLINE empty_of_defs.py  no definitions found (python)"
    with pytest.raises(PathError, match=r"^big\.py is not indexed \(3,024 bytes, over the 2,000 the index takes"):
        index.outline("big.py")
    with pytest.raises(PathError, match="nothing indexed under nope.py"):
        index.outline("nope.py")


def test_a_large_map_renders_in_linear_time() -> None:
    """A 100,000-character map of the kernel (3,333 candidate rows) spent 1.4 s comparing every row left
    out with every row shown, to name the first one left out."""
    import time

    from codepith.output.outline import render_repo_map
    from codepith.structure.definitions import Definition
    from codepith.structure.outline import MapEntry, RepoMap

    entries = tuple(
        MapEntry(f"pkg/m{i // 3}.py", Definition("function", f"fn_{i}", f"def fn_{i}(x):", 3, 3, 4, 0), 1.0 / (i + 1))
        for i in range(20_000)
    )
    repo_map = RepoMap(".", entries, files=20_000 // 3, names=len(entries))
    started = time.perf_counter()
    text = render_repo_map(repo_map, max_chars=100_000, outline_call=lambda p: f"outline({p})", read_call=str)
    assert time.perf_counter() - started < 2.0
    assert len(text) <= 100_000 and "more definitions; e.g. outline(pkg/m" in text.splitlines()[-1]


def test_a_map_of_more_files_than_the_parse_cache_holds_parses_them_once(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import codepith.structure.parsed as parsed
    from codepith.api import Index

    n = parsed.CACHE_FILES + 16
    for i in range(n):
        (tmp_path / f"mod_{i}.py").write_text(f"def helper_number_{i}(x):\n    return x\n")
    calls = "".join(f"    helper_number_{i}(1)\n" for i in range(n))
    (tmp_path / "main.py").write_text(f"def main():\n{calls}")
    index = Index.from_path(tmp_path, model=model)
    seen: list[int] = []
    real = parsed.parse

    def counting(text: str, language: str):  # type: ignore[no-untyped-def]
        seen.append(1)
        return real(text, language)

    monkeypatch.setattr(parsed, "parse", counting)
    first = index.outline(".", limit=500)
    assert len(first.entries) == n + 1 and len(seen) == n + 1
    assert index.outline(".", limit=500) == first and len(seen) == n + 1  # the second map parses nothing


def test_a_breadcrumb_in_a_deep_nest_costs_its_depth_once() -> None:
    """``node.parent`` walks down from the root in tree-sitter: climbing a 40,000-deep nest one parent at a
    time took 17 s for one breadcrumb (a related call on such a file, 137 s)."""
    import time

    depth = 20_000
    source = "int main(void)\n" + "{\n" * depth + "x;\n" + "}\n" * depth
    tree = parse(source, "c")
    assert tree is not None
    started = time.perf_counter()
    chain = enclosing(tree, "c", source.encode(), depth + 2)
    assert time.perf_counter() - started < 2.0
    assert [d.name for d in chain] == ["main"]
