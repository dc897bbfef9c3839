"""Ignore rules: .gitignore semantics, .codepithignore overrides and force-includes, built-in skips."""

from __future__ import annotations

import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from codepith.files import ignore as ignore_module
from codepith.files.ignore import decide, dir_skip_reason, file_skip_reason, parse_ignore_lines
from codepith.files.walk import walk


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def rels(root: Path, content: str = "code") -> set[str]:
    return {f.rel_path for f in walk(root, content=content).files}


CODE = "x = 1\n"


def test_nested_gitignore_applies_to_its_own_subtree_only(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "generated.py\n",
        "sub/.gitignore": "local_*.py\n",
        "generated.py": CODE,
        "sub/generated.py": CODE,
        "local_a.py": CODE,
        "sub/local_a.py": CODE,
        "sub/deeper/local_b.py": CODE,
        "sub/kept.py": CODE,
    })  # fmt: skip
    assert rels(tmp_path) == {"local_a.py", "sub/kept.py"}


def test_negation_re_includes_a_file(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "gen_*.py\n!gen_keep.py\n", "gen_a.py": CODE, "gen_keep.py": CODE})
    assert rels(tmp_path) == {"gen_keep.py"}


def test_deeper_gitignore_overrides_shallower(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "secret_*.py\n",
        "sub/.gitignore": "!secret_ok.py\n",
        "sub/secret_ok.py": CODE,
        "sub/secret_no.py": CODE,
        "secret_ok.py": CODE,
    })  # fmt: skip
    assert rels(tmp_path) == {"sub/secret_ok.py"}


def test_directory_only_pattern_does_not_match_a_file(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "BUILD/\n", "pkg/BUILD": "x", "other/BUILD/x.py": CODE, "other/y.py": CODE})
    assert rels(tmp_path) == {"pkg/BUILD", "other/y.py"}


def test_anchored_patterns(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "/top.py\na/b.py\n",
        "sub/.gitignore": "/only.py\n",
        "top.py": CODE,
        "sub/top.py": CODE,
        "a/b.py": CODE,
        "x/a/b.py": CODE,
        "sub/only.py": CODE,
        "sub/deeper/only.py": CODE,
    })  # fmt: skip
    assert rels(tmp_path) == {"sub/top.py", "x/a/b.py", "sub/deeper/only.py"}


def test_file_under_excluded_folder_cannot_be_re_included(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "gone/\n!gone/keep.py\nstars/*\n!stars/keep.py\nglob/**\n!glob/keep.py\n",
        "gone/keep.py": CODE,
        "gone/other.py": CODE,
        "stars/keep.py": CODE,
        "stars/other.py": CODE,
        "glob/keep.py": CODE,
        "glob/other.py": CODE,
    })  # fmt: skip
    # git: "gone/" excludes the folder itself, so its files stay out; "stars/*" and "glob/**" only
    # exclude the contents, so a later "!" brings a file back.
    assert rels(tmp_path) == {"stars/keep.py", "glob/keep.py"}


def test_ignored_folder_is_pruned_and_counted_once(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "logs/\n", "logs/a.py": CODE, "logs/b.py": CODE, "main.py": CODE})
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["main.py"]
    assert result.skipped.counts["ignored"] == 1
    assert result.skipped.examples["ignored"] == ["logs/"]


def test_git_info_exclude_is_honoured(tmp_path: Path) -> None:
    make(tmp_path, {".git/info/exclude": "scratch.py\n", "scratch.py": CODE, "main.py": CODE})
    assert rels(tmp_path) == {"main.py"}


def test_codepithignore_excludes_after_gitignore(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "a.py\n",
        ".codepithignore": "b.py\nsub/\n",
        "a.py": CODE,
        "b.py": CODE,
        "c.py": CODE,
        "sub/d.py": CODE,
    })  # fmt: skip
    assert rels(tmp_path) == {"c.py"}


def test_codepithignore_force_includes_file_in_always_skipped_folder(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "dist/\n",
        ".codepithignore": "!dist/keep.js\n",
        "dist/keep.js": "let a = 1;\n",
        "dist/other.js": "let b = 1;\n",
        "node_modules/lib/index.js": "let c = 1;\n",
        "src/app.js": "let d = 1;\n",
    })  # fmt: skip
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["dist/keep.js", "src/app.js"]
    assert result.skipped.examples["always-skipped folder"] == ["node_modules/"]
    assert result.skipped.examples["ignored"] == ["dist/"]


def test_codepithignore_force_includes_gitignored_lockfile_unknown_and_docs(tmp_path: Path) -> None:
    make(tmp_path, {
        ".gitignore": "gen.py\n",
        ".codepithignore": "!gen.py\n!*.lock\n!notes.weird\n!README.md\n",
        "gen.py": CODE,
        "Cargo.lock": "[[package]]\n",
        "notes.weird": "hello\n",
        "other.weird": "hello\n",
        "README.md": "# hi\n",
        "GUIDE.md": "# guide\n",
    })  # fmt: skip
    files = {f.rel_path: (f.language, f.kind) for f in walk(tmp_path, content="code").files}
    assert files == {
        "gen.py": ("python", "code"),
        "Cargo.lock": ("text", "docs"),
        "notes.weird": ("text", "docs"),
        "README.md": ("markdown", "docs"),
    }


def test_codepithignore_reopens_a_skipped_folder_without_forcing_its_files(tmp_path: Path) -> None:
    make(tmp_path, {
        ".codepithignore": "!vendor/\n",
        "vendor/lib/a.go": "package lib\n",
        "vendor/go.sum": "x\n",
        "vendor/notes.weird": "x\n",
    })  # fmt: skip
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["vendor/lib/a.go"]
    assert result.skipped.counts["lockfile"] == 1


def test_unanchored_negation_does_not_open_skipped_folders(tmp_path: Path) -> None:
    make(tmp_path, {".codepithignore": "!*.lock\n", "node_modules/x/yarn.lock": "x\n", "yarn.lock": "x\n"})
    assert rels(tmp_path) == {"yarn.lock"}


def test_parse_ignore_lines_decisions() -> None:
    layer = parse_ignore_lines(["# comment", "", "*.log", "!keep.log", "cache/", "/root.txt"], base="")
    assert layer is not None
    assert decide([layer], "a/b.log", False) is True
    assert decide([layer], "a/keep.log", False) is False
    assert decide([layer], "x/cache", True) is True
    assert decide([layer], "x/cache", False) is None
    assert decide([layer], "root.txt", False) is True
    assert decide([layer], "a/root.txt", False) is None
    assert parse_ignore_lines(["# only a comment", "   "]) is None


def test_nested_layer_patterns_are_relative_to_their_folder() -> None:
    outer = parse_ignore_lines(["*.tmp"], base="")
    inner = parse_ignore_lines(["!keep.tmp", "/anchored.py"], base="pkg/")
    assert outer is not None and inner is not None
    assert decide([outer, inner], "pkg/keep.tmp", False) is False
    assert decide([outer, inner], "keep.tmp", False) is True
    assert decide([outer, inner], "pkg/anchored.py", False) is True
    assert decide([outer, inner], "pkg/sub/anchored.py", False) is None


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("package-lock.json", "lockfile"),
        ("yarn.lock", "lockfile"),
        ("go.sum", "lockfile"),
        ("whatever.lock", "lockfile"),
        ("app.min.js", "minified"),
        ("style.min.css", "minified"),
        ("app.js.map", "source-map"),
        (".env", "secret"),
        (".env.production", "secret"),
        ("id_ed25519", "secret"),
        ("server.pem", "secret"),
        ("cert.p12", "secret"),
        (".netrc", "secret"),
        (".env.example", None),
        ("main.py", None),
        ("app.js", None),
    ],
)
def test_file_skip_reasons(name: str, reason: str | None) -> None:
    assert file_skip_reason(name) == reason


def test_dir_skip_reasons() -> None:
    for name in ("node_modules", ".git", "__pycache__", "vendor", "pkg.egg-info"):
        assert dir_skip_reason(name) == "always-skipped folder"
    for name in ("src", "lib", "env", "tests", "target", "build", "out", "dist"):  # judged by content
        assert dir_skip_reason(name) is None


def test_an_ignore_file_linked_out_of_the_root_is_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "repo"
    outside = tmp_path / "outside-rules"
    outside.write_text("*.py\n")
    make(root, {"a/one.py": CODE, "b/two.py": CODE, "c/three.py": CODE, "rules/local": "three.py\n"})
    (root / "a" / ".gitignore").symlink_to(outside)
    (root / "b" / ".codepithignore").symlink_to(outside)
    (root / "c" / ".gitignore").symlink_to(Path("..") / "rules" / "local")  # inside the root: read
    with caplog.at_level("WARNING", logger="codepith"):
        assert rels(root) == {"a/one.py", "b/two.py"}
    assert sum("leads out of" in r.getMessage() for r in caplog.records) == 2


def test_git_info_exclude_linked_out_of_git_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside-rules"
    outside.write_text("*.py\n")
    root = tmp_path / "repo"
    make(root, {"main.py": CODE, ".git/HEAD": "ref: refs/heads/main\n"})
    (root / ".git" / "info").mkdir()
    (root / ".git" / "info" / "exclude").symlink_to(outside)
    assert rels(root) == {"main.py"}
    (root / ".git" / "info" / "exclude").unlink()
    (root / ".git" / "info").rmdir()
    (root / ".git" / "info").symlink_to(tmp_path)  # the folder leads out
    outside.rename(tmp_path / "exclude")
    assert rels(root) == {"main.py"}


def test_a_worktree_reads_the_exclude_file_of_its_repository(tmp_path: Path) -> None:
    common = tmp_path / "main" / ".git"
    make(tmp_path, {"main/.git/HEAD": "ref: refs/heads/main\n", "main/.git/info/exclude": "scratch.py\n"})
    (common / "objects").mkdir()
    make(tmp_path, {"main/.git/worktrees/wt/commondir": "../..\n", "wt/scratch.py": CODE, "wt/main.py": CODE})
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    assert rels(tmp_path / "wt") == {"main.py"}
    # a .git file naming a folder that is not a git repository: its info/exclude is not read
    make(tmp_path, {"elsewhere/info/exclude": "main.py\n"})
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere'}\n")
    assert rels(tmp_path / "wt") == {"main.py", "scratch.py"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_ignore_files_that_are_fifos_or_devices_are_not_opened(tmp_path: Path) -> None:
    make(tmp_path, {"main.py": CODE, "sub/two.py": CODE, ".git/HEAD": "ref: refs/heads/main\n"})
    (tmp_path / ".git" / "info").mkdir()
    os.mkfifo(tmp_path / ".git" / "info" / "exclude")
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / ".codepithignore")
    (tmp_path / "sub" / ".gitignore").symlink_to("/dev/zero")  # endless: it filled memory before
    src = Path(__file__).resolve().parents[1] / "src"
    code = "import sys; from pathlib import Path; from codepith.files.walk import walk; " + (
        "print(sorted(f.rel_path for f in walk(Path(sys.argv[1])).files))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, timeout=120
    )  # the timeout is a hang guard only
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['main.py', 'sub/two.py']"


def test_an_ignore_file_over_the_cap_uses_its_first_lines_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(ignore_module, "MAX_IGNORE_BYTES", 64)
    filler = "".join(f"nothing{i:02d}.py\n" for i in range(4))  # 48 bytes
    make(tmp_path, {".gitignore": filler + "early.py\nlate.py\n", "early.py": CODE, "late.py": CODE, "ok.py": CODE})
    with caplog.at_level("WARNING", logger="codepith"):
        assert rels(tmp_path) == {"late.py", "ok.py"}  # "late.py" ends past byte 64: not used
    assert any("larger than 64 bytes" in r.getMessage() for r in caplog.records)


def _git_ignored(root: Path, names: list[str]) -> set[str]:
    listed = "\0".join("./" + n for n in names) + "\0"  # "./": a name starting with ':' is not pathspec magic
    out = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "-z", "--stdin"], input=listed.encode(), capture_output=True
    ).stdout
    return {x.decode().removeprefix("./") for x in out.split(b"\0") if x}


POSIX_PATTERNS = [
    "[[:digit:]]*.py", "[[:alpha:]]x.py", "[[:alnum:]]x.py", "[[:blank:]]x.py", "[[:cntrl:]]x.py",
    "[[:graph:]]x.py", "[[:lower:]]x.py", "[[:print:]]x.py", "[[:punct:]]x.py", "[[:space:]]x.py",
    "[[:upper:]]x.py", "[[:xdigit:]]x.py", "[![:digit:]]x.py", "[^[:alpha:]]x.py", "[a[:digit:]]x.py",
    "[[:digit:][:upper:]]x.py", "[[:digit:]-z]x.py", "[]a[:digit:]]x.py", "[a-c[:digit:]]x.py",
    "[![:punct:][:space:]]x.py", "[[:nosuch:]]x.py", "[[:digit]x.py", "[[]x.py",
]  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_posix_classes_in_brackets_match_what_git_ignores(tmp_path: Path) -> None:
    names = [c + "x.py" for c in string.printable if c not in "/\n\r\x0b\x0c"] + ["\x01x.py", "\x7fx.py"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in names:
        (tmp_path / name).write_text(CODE)
    for pattern in POSIX_PATTERNS:
        (tmp_path / ".gitignore").write_text(pattern + "\n")
        layer = parse_ignore_lines([pattern])
        ours = {n for n in names if layer is not None and layer.decide(n, False)}
        assert ours == _git_ignored(tmp_path, names), pattern
    (tmp_path / "d]x.py").write_text(CODE)  # hidden before: the class's ']' was read as a literal
    (tmp_path / ".gitignore").write_text("[[:digit:]]*.py\n")
    kept = rels(tmp_path)
    assert "1x.py" not in kept and "d]x.py" in kept and "ax.py" in kept


def test_bracket_patterns_compile_without_warnings() -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    code = (
        "from codepith.files.ignore import parse_ignore_lines; "
        "parse_ignore_lines(['[[:digit:]]*.py', '[[]x.py', '[a--]b', 'x[&&]y', '[[:punct:]]'])"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
