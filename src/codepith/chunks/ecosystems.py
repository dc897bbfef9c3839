"""Each ecosystem's own conventions, as data: which files are tests, which lines only wire modules
together. ``chunks/marks.py`` compiles these tables into its content checks (made once, at build time)
and ``search/ranking.py`` into its path checks, so a new language is a new row here rather than a new
rule in the ranking code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ecosystem:
    extensions: tuple[str, ...]  # file extensions (regex fragments, no dot)
    test_prefixes: tuple[str, ...] = ()  # file-name prefixes a test runner of this language collects
    test_suffixes: tuple[str, ...] = ()  # stem suffixes (``_test``, ``Spec``), before the extension
    test_names: tuple[str, ...] = ()  # whole file names (``conftest.py``)
    wiring: tuple[str, ...] = ()  # line patterns (regex, matched at the line start) that only import/re-export
    # one unit split over several files: declaration and definition (``foo.h`` / ``foo.cpp`` / ``foo-inl.h``)
    unit_extensions: tuple[str, ...] = ()  # extensions (literal, no dot) whose files pair up by stem
    # a chunk whose first code line only declares or forwards (an interface, a Laravel facade): the code
    # is elsewhere
    declaration: tuple[str, ...] = ()  # regexes matched at the start of that line
    unit_suffixes: tuple[str, ...] = ()  # stem endings that mark the other half (``-inl``, ``_impl``)


_XUNIT = ("Test", "Tests", "Spec", "Suite")  # JUnit, XCTest, NUnit, PHPUnit, ScalaTest naming

ECOSYSTEMS: dict[str, Ecosystem] = {
    "python": Ecosystem(("py",), ("test_",), ("_test",), (r"conftest\.py",), (r"import\b", r"from\s+\S+\s+import\b")),
    "javascript": Ecosystem(
        (r"[cm]?[jt]sx?",),
        test_suffixes=(r"\.test", r"\.spec"),
        wiring=(
            r"import\b",
            r"export\s+(?:\*|\{|default\s+\w+;?$|type\s+\{)",
            r"(?:const|let|var)\s+[\w{}\s,]+=\s*require\(",
            r"module\.exports\s*=\s*require",
            r"require\b",
        ),
    ),
    # Go: an interface is satisfied implicitly by types elsewhere, so it declares, like Java's
    "go": Ecosystem(
        ("go",),
        test_suffixes=("_test",),
        wiring=(r"package\s", r"import\b"),
        declaration=(r"type\s+\w+\s+interface\b",),
    ),
    "rust": Ecosystem(("rs",), test_suffixes=("_test",), wiring=(r"(?:pub\s+)?use\s", r"(?:pub\s+)?mod\s+\w+;")),
    "ruby": Ecosystem(("rb",), test_suffixes=("_test", "_spec"), wiring=(r"require(?:_relative)?\b",)),
    "c": Ecosystem(("c", "h"), ("test_",), ("_test", "_tests", "_unittest"), wiring=(r"#include\b",)),
    "cpp": Ecosystem(
        ("cc", "cpp", "cxx", "hpp", "hh"),
        ("test_",),
        ("_test", "_tests", "_unittest"),
        wiring=(r"#include\b", r"using\s"),
        unit_extensions=("h", "hh", "hpp", "hxx", "cc", "cpp", "cxx", "c", "ipp", "tpp", "inl", "m", "mm"),
        unit_suffixes=("-inl", "_inl", "-impl", "_impl"),
    ),
    # Objective-C: its `.m` pairs with its `.h` as C's and C++'s files do (the unit extensions above)
    "objc": Ecosystem(("m", "mm"), test_suffixes=_XUNIT, wiring=(r"#import\b", r"@import\b", r"@class\s")),
    "dart": Ecosystem(("dart",), ("test_",), ("_test",), wiring=(r"import\b", r"export\s+['\"]")),
    "jvm": Ecosystem(
        ("java", "kt", "scala"),
        test_suffixes=_XUNIT,
        wiring=(r"package\s", r"import\b"),
        declaration=(r"(?:public\s+)?(?:sealed\s+)?interface\s+\w+",),
    ),
    "swift": Ecosystem(("swift",), test_suffixes=_XUNIT, wiring=(r"import\b",)),
    "csharp": Ecosystem(
        ("cs",),
        test_suffixes=_XUNIT,
        wiring=(r"using\s", r"namespace\s+[\w.]+;"),
        declaration=(r"(?:public\s+|internal\s+)?(?:partial\s+)?interface\s+\w+",),
    ),
    "php": Ecosystem(
        ("php",),
        test_suffixes=_XUNIT,
        wiring=(r"namespace\s+[\w\\]+;", r"use\s", r"require(?:_once)?\b"),
        declaration=(r"interface\s+\w+", r"(?:final\s+)?class\s+\w+\s+extends\s+(?:\\?[\w\\]*\\)?Facade\b"),
    ),
    # Elixir: ``alias``/``import``/``require`` lines, and ``defdelegate`` (a function that only forwards)
    "elixir": Ecosystem(
        ("ex", "exs"),
        test_suffixes=("_test",),
        wiring=(r"alias\s+[\w.]+", r"import\s+[A-Z]", r"require\s+[A-Z]", r"defdelegate\s"),
    ),
    # Haskell: imports and a module header's export list (``module A.B (x, y) where``, ``, z``)
    "haskell": Ecosystem(
        ("hs",),
        test_suffixes=("Spec", "Test", "Tests"),
        wiring=(r"import\s", r"module\s+[\w.]+\s*(?:\(|where\b)", r",\s*(?:module\s+)?[\w.']+(?:\([^)]*\))?\s*$"),
    ),
    "lua": Ecosystem(("lua",), test_suffixes=("_spec", "_test"), wiring=(r"local\s+[\w,\s]+=\s*require\b",)),
    "zig": Ecosystem(("zig",), wiring=(r"(?:pub\s+)?(?:const|let|var)\s+\w+\s*=\s*@import\(",)),
    "bash": Ecosystem(("bats",), test_suffixes=("",)),
    # R: testthat's ``tests/testthat/test-name.R``; ``library(pkg)`` lines only attach packages
    "r": Ecosystem(("[rR]",), test_prefixes=("test-", "test_"), wiring=(r"library\(",)),
}


def test_file_pattern() -> str:
    """One regex (anchored on the file name) for every ecosystem's test-file convention."""
    alts: list[str] = []
    for eco in ECOSYSTEMS.values():
        ext = "(?:" + "|".join(eco.extensions) + ")"
        for p in eco.test_prefixes:
            alts.append(rf"{p}[^/]*\.{ext}")
        for s in eco.test_suffixes:
            alts.append(rf"[^/]*{s}\.{ext}")
        alts.extend(eco.test_names)
    return r"(^|/)(?:" + "|".join(alts) + r")$"


def wiring_pattern() -> str:
    """One regex for every ecosystem's import/re-export lines (chunks are judged by content alone)."""
    alts = dict.fromkeys(p for eco in ECOSYSTEMS.values() for p in eco.wiring)
    return r"^\s*(?:" + "|".join(alts) + ")"


def unit_tables() -> tuple[dict[str, str], tuple[str, ...]]:
    """Extension -> family name for languages that split a unit over files, and the stem endings
    that mark a half (longest first)."""
    family: dict[str, str] = {}
    suffixes: set[str] = set()
    for name, eco in ECOSYSTEMS.items():
        for ext in eco.unit_extensions:
            family.setdefault(ext, name)
        suffixes.update(eco.unit_suffixes)
    return family, tuple(sorted(suffixes, key=len, reverse=True))


def declaration_patterns() -> dict[str, str]:
    """Extension -> one regex for a first code line that only declares or forwards."""
    out: dict[str, str] = {}
    for eco in ECOSYSTEMS.values():
        if eco.declaration:
            for ext in eco.extensions:
                out[ext] = "(?:" + "|".join(eco.declaration) + ")"
    return out
