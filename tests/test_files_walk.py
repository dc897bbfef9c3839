"""The walk: content selection, skip report, size limits, odd names, symlinks, bad roots; file types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codepith.errors import CodepithError, PathError
from codepith.files.types import CONTENT_TYPES, classify, file_types_table, selected, shebang_language
from codepith.files.walk import walk


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


MIXED = {
    "src/app.py": "x = 1\n",
    "src/util.ts": "export const a = 1;\n",
    "README.md": "# readme\n",
    "docs/guide.rst": "Guide\n=====\n",
    "pyproject.toml": "[project]\n",
    "config/app.yaml": "a: 1\n",
    "Makefile": "all:\n\techo hi\n",
    "image.png": "not really\n",
}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("code", {"src/app.py", "src/util.ts", "Makefile"}),
        ("docs", {"README.md", "docs/guide.rst"}),
        ("config", {"pyproject.toml", "config/app.yaml"}),
        ("all", {"src/app.py", "src/util.ts", "Makefile", "README.md", "docs/guide.rst", "pyproject.toml",
                 "config/app.yaml"}),
    ],
)  # fmt: skip
def test_content_selection(tmp_path: Path, content: str, expected: set[str]) -> None:
    make(tmp_path, MIXED)
    result = walk(tmp_path, content=content)
    assert {f.rel_path for f in result.files} == expected
    assert result.skipped.counts["unsupported-type"] == len(MIXED) - len(expected)


def test_default_content_is_code(tmp_path: Path) -> None:
    make(tmp_path, MIXED)
    assert {f.rel_path for f in walk(tmp_path).files} == {"src/app.py", "src/util.ts", "Makefile"}


def test_unknown_content_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(CodepithError) as err:
        walk(tmp_path, content="sourcecode")
    assert "\n" not in str(err.value) and "sourcecode" in str(err.value)


def test_source_file_fields_and_sorted_order(tmp_path: Path) -> None:
    make(
        tmp_path,
        {"b.py": "b = 2\n", "a/z.go": "package a\n", "a/b.rs": "fn main() {}\n", "A.java": "class A {}\n"},
    )
    files = walk(tmp_path).files
    assert [f.rel_path for f in files] == sorted(f.rel_path for f in files)
    assert [f.rel_path for f in files] == ["A.java", "a/b.rs", "a/z.go", "b.py"]
    rs = files[1]
    assert (rs.language, rs.kind, rs.size) == ("rust", "code", len("fn main() {}\n"))
    assert rs.path.is_absolute() and rs.path == tmp_path / "a" / "b.rs"
    assert rs.mtime_ns == os.stat(rs.path).st_mtime_ns


def test_skip_report_counts_and_examples(tmp_path: Path) -> None:
    make(tmp_path, {
        "big.py": "x = 1\n" * 100,
        "small.py": "x = 1\n",
        "empty.py": "",
        "package-lock.json": "{}\n",
        "yarn.lock": "x\n",
        ".env": "TOKEN=abc\n",
        "id_rsa": "-----BEGIN-----\n",
        "app.min.js": "a\n",
        "app.js.map": "{}\n",
        "node_modules/x/index.js": "a\n",
        "node_modules/y/index.js": "a\n",
    })  # fmt: skip
    result = walk(tmp_path, max_file_bytes=100)
    assert [f.rel_path for f in result.files] == ["small.py"]
    report = result.skipped
    assert report.counts["too-large"] == 1 and report.examples["too-large"] == ["big.py"]
    assert report.counts["lockfile"] == 2
    assert set(report.examples["lockfile"]) == {"package-lock.json", "yarn.lock"}
    assert report.counts["secret"] == 2 and set(report.examples["secret"]) == {".env", "id_rsa"}
    assert report.counts["minified"] == 1 and report.counts["source-map"] == 1
    assert report.counts["empty"] == 1
    assert report.examples["always-skipped folder"] == ["node_modules/"]
    assert report.total == sum(report.counts.values())


def test_default_limit_is_one_megabyte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEPITH_MAX_FILE_BYTES", raising=False)
    make(tmp_path, {"under.py": "#" * 999_999 + "\n", "over.py": "#" * 1_000_000 + "\n"})
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["under.py"]
    assert result.skipped.examples["too-large"] == ["over.py"]


def test_env_overrides_limit_and_argument_overrides_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, {"a.py": "x" * 50 + "\n", "b.py": "x" * 500 + "\n"})
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "100")
    assert [f.rel_path for f in walk(tmp_path).files] == ["a.py"]
    assert [f.rel_path for f in walk(tmp_path, max_file_bytes=10_000).files] == ["a.py", "b.py"]
    assert [f.rel_path for f in walk(tmp_path, max_file_bytes=10).files] == []
    monkeypatch.setenv("CODEPITH_MAX_FILE_BYTES", "lots")
    with pytest.raises(CodepithError, match="CODEPITH_MAX_FILE_BYTES"):
        walk(tmp_path)


def test_virtualenv_folder_is_skipped_but_plain_env_folder_is_not(tmp_path: Path) -> None:
    make(tmp_path, {
        "env/pyvenv.cfg": "home = /usr\n",
        "env/lib/site.py": "x = 1\n",
        "myenv/pyvenv.cfg": "home = /usr\n",
        "myenv/x.py": "x = 1\n",
        "deploy/env/settings.py": "x = 1\n",
    })  # fmt: skip
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["deploy/env/settings.py"]
    assert set(result.skipped.examples["always-skipped folder"]) == {"env/", "myenv/"}


@pytest.mark.skipif(os.name != "posix" or os.uname().sysname == "Darwin", reason="needs byte file names")
def test_non_utf8_names_are_preserved_exactly(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path)
    os.mkdir(os.path.join(root, b"d\xff"))
    for name in (b"caf\xe9.py", b"d\xff/m\xfcnchen.py"):
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(b"x = 1\n")
    files = walk(tmp_path).files
    assert [os.fsencode(f.rel_path) for f in files] == [b"caf\xe9.py", b"d\xff/m\xfcnchen.py"]
    for f in files:
        assert os.fsencode(f.path) == os.path.join(root, os.fsencode(f.rel_path))
        assert f.path.read_bytes() == b"x = 1\n"


def test_symlink_loop_is_survived_without_duplicates(tmp_path: Path) -> None:
    make(tmp_path, {"pkg/a.py": "x = 1\n", "pkg/sub/b.py": "y = 2\n"})
    os.symlink("..", tmp_path / "pkg" / "sub" / "up")
    os.symlink(".", tmp_path / "self")
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["pkg/a.py", "pkg/sub/b.py"]
    assert result.skipped.counts["symlink-loop"] == 2


def test_symlinked_dir_inside_root_is_walked_once_under_its_real_path(tmp_path: Path) -> None:
    make(tmp_path, {"zreal/a.py": "x = 1\n"})
    os.symlink("zreal", tmp_path / "alias")
    os.symlink("zreal/a.py", tmp_path / "link.py")
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["zreal/a.py"]
    assert result.skipped.counts["symlink-duplicate"] == 2


def test_symlink_into_unwalked_part_of_root_is_followed(tmp_path: Path) -> None:
    make(tmp_path, {"node_modules/mylib/index.js": "let a = 1;\n"})
    os.symlink("node_modules/mylib", tmp_path / "lib")
    assert [f.rel_path for f in walk(tmp_path).files] == ["lib/index.js"]


def test_symlink_pointing_outside_root_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    make(root, {"main.py": "x = 1\n"})
    make(outside, {"secret_code.py": "y = 2\n"})
    os.symlink(outside, root / "out_dir")
    os.symlink(outside / "secret_code.py", root / "out_file.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    result = walk(root)
    assert [f.rel_path for f in result.files] == ["main.py"]
    assert set(result.skipped.examples["symlink-outside-root"]) == {"out_dir/", "out_file.py"}
    assert result.skipped.examples["broken-symlink"] == ["dangling.py"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_unreadable_file_and_folder_are_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: permission bits do not stop reads")
    make(tmp_path, {"ok.py": "x = 1\n", "locked.py": "y = 2\n", "shut/inner.py": "z = 3\n"})
    (tmp_path / "locked.py").chmod(0)
    (tmp_path / "shut").chmod(0)
    try:
        result = walk(tmp_path)
    finally:
        (tmp_path / "locked.py").chmod(0o644)
        (tmp_path / "shut").chmod(0o755)
    assert [f.rel_path for f in result.files] == ["ok.py"]
    assert set(result.skipped.examples["unreadable"]) == {"locked.py", "shut/"}


def test_missing_root_and_file_root_are_path_errors(tmp_path: Path) -> None:
    with pytest.raises(PathError) as err:
        walk(tmp_path / "nope")
    assert "\n" not in str(err.value)
    (tmp_path / "f.py").write_text("x = 1\n")
    with pytest.raises(PathError, match="not a folder"):
        walk(tmp_path / "f.py")


def test_walk_is_deterministic(tmp_path: Path) -> None:
    make(tmp_path, {f"d{i % 7}/f{i}.py": "x = 1\n" for i in range(60)})
    first, second = walk(tmp_path), walk(tmp_path)
    assert first.files == second.files
    assert first.skipped.to_dict() == second.skipped.to_dict()


# --- file types -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel_path", "expected"),
    [
        ("a/run.sh", ("bash", "code")), ("t/x.bats", ("bash", "code")), ("rc.zsh", ("bash", "code")),
        ("x.h", ("c", "code")), ("x.hpp", ("cpp", "code")), ("x.h++", ("cpp", "code")),
        ("x.tpp", ("cpp", "code")),
        ("x.cs", ("csharp", "code")), ("x.exs", ("elixir", "code")), ("x.go", ("go", "code")),
        ("x.hs", ("haskell", "code")), ("X.java", ("java", "code")), ("x.cjs", ("javascript", "code")),
        ("x.kts", ("kotlin", "code")), ("x.lua", ("lua", "code")), ("x.php", ("php", "code")),
        ("x.pyi", ("python", "code")), ("x.gemspec", ("ruby", "code")), ("t/a.rake", ("ruby", "code")),
        ("Rakefile", ("ruby", "code")), ("sub/Gemfile", ("ruby", "code")), ("config.ru", ("ruby", "code")),
        ("x.rs", ("rust", "code")), ("x.scala", ("scala", "code")), ("x.swift", ("swift", "code")),
        ("x.mts", ("typescript", "code")), ("x.tsx", ("tsx", "code")), ("x.zig", ("zig", "code")),
        ("x.m", ("objc", "code")), ("x.sol", ("solidity", "code")), ("x.vue", ("vue", "code")),
        ("Makefile", ("make", "code")), ("Dockerfile", ("dockerfile", "code")),
        ("Dockerfile.dev", ("dockerfile", "code")), ("X.R", ("r", "code")),
        ("README.md", ("markdown", "docs")), ("x.mdx", ("markdown", "docs")), ("x.rst", ("rst", "docs")),
        ("x.adoc", ("asciidoc", "docs")), ("x.txt", ("text", "docs")), ("x.org", ("org", "docs")),
        ("x.json", ("json", "config")), ("x.yml", ("yaml", "config")), ("x.toml", ("toml", "config")),
        ("setup.cfg", ("ini", "config")), ("pom.xml", ("xml", "config")),
        ("gen/model.rb.tt", ("ruby", "code")), ("config.h.in", ("c", "code")), ("x.pyx", ("cython", "code")),
        ("x.png", None), (".gitignore", None), ("LICENSE-MIT", None), ("noext", None), ("a.tt", None),
    ],
)  # fmt: skip
def test_classify(rel_path: str, expected: tuple[str, str] | None) -> None:
    assert classify(rel_path) == expected


# Languages in the table that have no bundled tree-sitter grammar (chunked without one).
NO_GRAMMAR = {
    "ada", "assembly", "awk", "crystal", "elisp", "elm", "fish", "fsharp", "gleam", "glsl", "less", "lisp",
    "nim", "pascal", "purescript", "rescript", "tcl", "verilog", "vhdl", "visualbasic", "text", "gomod",
    "dotenv", "cython",
}  # fmt: skip


@pytest.mark.parametrize(
    ("line", "language"),
    [
        ("#!/bin/bash", "bash"), ("#!/usr/bin/env bash", "bash"), ("#!/usr/bin/env -S python3 -u", "python"),
        ("#!/usr/bin/python3.12", "python"), ("#!/usr/bin/env node", "javascript"),
        ("#! /usr/bin/ruby", "ruby"),
        ("#!/usr/bin/env", None), ("# just a comment", None), ("#!/usr/bin/awesome", None),
    ],
)  # fmt: skip
def test_shebang_language(line: str, language: str | None) -> None:
    assert shebang_language(line) == language


def test_extensionless_scripts_are_classified_by_shebang(tmp_path: Path) -> None:
    make(tmp_path, {
        "bin/tool": "#!/usr/bin/env bash\necho hi\n",
        "libexec/helper": "#!/usr/bin/python3\nprint(1)\n",
        "LICENSE": "MIT License\n",
    })  # fmt: skip
    files = {f.rel_path: f.language for f in walk(tmp_path).files}
    assert files == {"bin/tool": "bash", "libexec/helper": "python"}


def test_language_names_match_grammar_names() -> None:
    grammars = pytest.importorskip("semble_grammars")
    available = set(grammars.available_languages())
    languages = {lang for _, lang, _ in file_types_table()}
    assert languages - NO_GRAMMAR <= available, sorted(languages - NO_GRAMMAR - available)
    assert not (NO_GRAMMAR & available)


def test_file_types_table_rows() -> None:
    rows = file_types_table()
    assert ("py", "python", "code") not in rows and (".py", "python", "code") in rows
    assert ("Gemfile", "ruby", "code") in rows
    assert {kind for _, _, kind in rows} == {"code", "docs", "config"}
    keys = [key for key, _, _ in rows]
    assert len(keys) == len(set(keys))
    for key, lang, kind in rows:
        if key.startswith("#!"):
            assert shebang_language(key) == lang
            continue
        name = key.replace("*", "prod")
        assert (lang, kind) in (classify("dir/" + name), classify("dir/f" + name)), key


def test_selected() -> None:
    assert CONTENT_TYPES == ("code", "docs", "config", "all")
    assert selected("code", "code") and not selected("docs", "code")
    assert all(selected(kind, "all") for kind in ("code", "docs", "config"))
    with pytest.raises(CodepithError):
        selected("code", "everything")


def walk_in_child(root: Path, content: str = "code") -> dict[str, object]:
    """``walk`` in a child process, so a walk that blocks fails the test instead of hanging it."""
    src = Path(__file__).resolve().parents[1] / "src"
    code = (
        "import json, sys; from pathlib import Path; from codepith.files.walk import walk; "
        "r = walk(Path(sys.argv[1]), content=sys.argv[2]); "
        "print(json.dumps({'files': [f.rel_path for f in r.files], 'skipped': r.skipped_paths}))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", code, str(root), content], capture_output=True, text=True, env=env, timeout=120
    )  # the timeout is a hang guard only
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("content", ["code", "all"])
def test_fifos_and_devices_are_never_opened(tmp_path: Path, content: str) -> None:
    make(tmp_path, {"bin/tool": "#!/bin/sh\necho hi\n", "app.py": "x = 1\n", ".codepithignore": "!forced\n"})
    os.mkfifo(tmp_path / "bin" / "runme")  # extensionless: its first line was read for a '#!'
    os.mkfifo(tmp_path / "forced")  # force-included: sniffed too
    os.mkfifo(tmp_path / "x.py")
    (tmp_path / "bin" / "tty").symlink_to("/dev/tty")  # a device reached through a link
    (tmp_path / "bin" / "pipe").symlink_to("runme")
    result = walk_in_child(tmp_path, content)
    assert set(result["files"]) == {"app.py", "bin/tool"}  # type: ignore[arg-type]
    skipped = result["skipped"]
    assert isinstance(skipped, dict)
    for rel in ("bin/runme", "forced", "x.py", "bin/pipe"):
        assert skipped[rel] == "not-a-regular-file", (rel, skipped)
    assert skipped["bin/tty"] in ("not-a-regular-file", "symlink-outside-root", "broken-symlink")


def test_a_link_to_a_secret_named_file_is_skipped_as_a_secret(tmp_path: Path) -> None:
    make(tmp_path, {".env": "A=1\n", "keys/id_rsa": "key\n", "ok.py": "x = 1\n", "real.py": "y = 2\n"})
    (tmp_path / "settings.py").symlink_to(".env")
    (tmp_path / "conf.py").symlink_to(Path("keys") / "id_rsa")
    (tmp_path / "alias.py").symlink_to("real.py")  # an ordinary link is still followed
    for content in ("code", "all"):
        result = walk(tmp_path, content=content)
        assert {f.rel_path for f in result.files} == {"ok.py", "real.py"}
        assert result.skipped_paths["settings.py"] == "secret"
        assert result.skipped_paths["conf.py"] == "secret"
        assert result.skipped_paths["alias.py"] == "symlink-duplicate"
