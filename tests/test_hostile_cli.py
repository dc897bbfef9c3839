"""Empty indexes explain themselves, long queries are bounded, `clear` tells the truth: real CLI
subprocesses and the real MCP server over stdio."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write
from test_mcp import ok, run, session

import codepith
from codepith.search.query import MAX_QUERY_CHARS, bound_query

SRC = Path(__file__).resolve().parents[1] / "src"
DEBIAN_GITIGNORE = Path("/work/kernel/gitignore.debian")


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ, CODEPITH_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


def _cli(env: dict[str, str], *argv: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "codepith.surfaces.cli", *argv],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _debian_kernel(root: Path) -> Path:
    """A small tree under Debian's kernel .gitignore (its line 159 is '/*')."""
    gitignore = DEBIAN_GITIGNORE.read_text() if DEBIAN_GITIGNORE.is_file() else "*.o\n*.ko\n/*.spec\n/*\n"
    write(root, {
        ".gitignore": gitignore,
        "Makefile": "obj-y += kernel/\n",
        "kernel/sched/core.c": "void schedule_tail_marker(void) { }\n",
        "arch/x86/boot/main.c": "void boot_main(void) { }\n",
    })  # fmt: skip
    return root


def _slash_star_line(root: Path) -> int:
    return (root / ".gitignore").read_text().splitlines().index("/*") + 1


def test_index_and_search_name_the_rule_that_hid_everything(tmp_path: Path) -> None:
    root = _debian_kernel(tmp_path / "linux")
    line = _slash_star_line(root)
    env = _env(tmp_path / "cache")
    proc = _cli(env, "index", str(root))
    assert proc.returncode == 0, proc.stderr
    assert ": 0 files" in proc.stdout
    assert f".gitignore line {line} '/*' hid 4 (e.g. .gitignore, Makefile, arch/)" in proc.stdout
    assert "add the line '!/*' to .codepithignore" in proc.stdout
    found = _cli(env, "search", "schedule tail", str(root))
    assert found.returncode == 0
    assert "note: the index is empty:" in found.stdout
    assert f".gitignore line {line} '/*'" in found.stdout
    assert found.stdout.rstrip().endswith("no results for 'schedule tail'")
    data = json.loads(_cli(env, "search", "schedule tail", str(root), "--format", "json").stdout)
    assert data["results"] == [] and any(f"line {line} '/*'" in n for n in data["notes"])

    (root / ".codepithignore").write_text("!/*\n")  # the advice works as given
    proc = _cli(env, "index", str(root))
    assert "ignore rules hid" not in proc.stdout
    found = _cli(env, "search", "schedule_tail_marker", str(root), "-k", "1")
    assert "FILE kernel/sched/core.c" in found.stdout and "note:" not in found.stdout


def test_force_including_everything_never_opens_git(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root = _debian_kernel(tmp_path / "linux")
    write(root, {".codepithignore": "!/*\n", ".git/config": "[remote]\n url = https://token@host/x\n"})
    index = codepith.Index.from_path(root, content="all", model=model, cache_dir=tmp_path / "c")
    assert not [c for c in index.chunks if c.file_path.startswith(".git/")]
    assert index.status().skipped.examples["always-skipped folder"] == [".git/"]


def test_nearly_everything_hidden_is_explained_and_a_normal_gitignore_is_not(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "r"
    write(root, {
        ".gitignore": "# generated\n/*\n!/README.py\n",
        "README.py": "x = 1\n", "a/one.py": "a = 1\n", "b/two.py": "b = 2\n", "c/three.py": "c = 3\n",
    })  # fmt: skip
    notes = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "c").status().notes
    assert notes[0] == "ignore rules hid 4 files and folders, more than the 1 files indexed:"
    assert notes[1] == "  .gitignore line 2 '/*' hid 4 (e.g. .gitignore, a/, b/)"
    normal = tmp_path / "n"
    write(normal, {".gitignore": "*.log\nbuild/\n", "app.py": "a = 1\n", "lib.py": "b = 2\n", "x.log": "log\n"})
    index = codepith.Index.from_path(normal, model=model, cache_dir=tmp_path / "c")
    assert index.status().notes == () and index.search_notes("app") == []


def test_empty_index_without_ignore_rules_says_why(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "docs-only"
    write(root, {"guide.md": "# Guide\n", "notes.txt": "notes\n"})
    index = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "c")
    notes = index.search_notes("guide")
    assert notes[0] == "the index is empty:"
    assert notes[1] == "all 2 files and folders found were skipped:"
    assert any("--content all" in n for n in notes)


def test_mcp_search_and_status_explain_the_empty_index(tmp_path: Path) -> None:
    root = _debian_kernel(tmp_path / "linux")
    line = _slash_star_line(root)

    async def go() -> None:
        async with session(root) as s:
            status = await ok(s, "index_status", {})
            assert "files: 0" in status and f".gitignore line {line} '/*' hid 4" in status
            assert "'!/*' to .codepithignore" in status
            text = await ok(s, "search", {"query": "scheduler"})
            assert text.startswith("note: the index is empty:") and f"line {line} '/*'" in text

    run(go)


def test_long_queries_are_cut_with_a_note_and_cost_bounded_time(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"billing.py": "def compute_invoice_total(items):\n    return sum(items)\n"})
    env = _env(tmp_path / "cache")
    words = "compute invoice total for the items " * 20
    huge = words + "padding words that say nothing " * (5_000_000 // 31)  # ~5 MB, an issue text gone wild
    qfile = tmp_path / "q.txt"
    qfile.write_text(huge)
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys; from codepith.surfaces.cli import main; "
         "sys.exit(main(['search', open(sys.argv[1]).read(), sys.argv[2], '-k', '1', '--max-chars', '2000']))",
         str(qfile), str(root)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(
        rf"note: query cut to its first 9,9\d\d of {len(huge):,} characters \(queries are limited to 10,000; .*\)",
        lines[0],
    )
    assert "FILE billing.py" in proc.stdout and len(proc.stdout.rstrip("\n")) <= 2000
    cut, note = bound_query(huge)
    assert len(cut) <= MAX_QUERY_CHARS and huge.startswith(cut) and note is not None
    assert bound_query("short query") == ("short query", None)
    one_word = "x" * (MAX_QUERY_CHARS * 2)
    assert len(bound_query(one_word)[0]) == MAX_QUERY_CHARS  # no space to cut at: cut mid-word


def test_a_huge_query_reaches_no_step_of_a_search_uncut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search cut the query, but the packet's evidence scan and the confidence check were given it
    whole: a 9 MB query of calls took 23 s over MCP where the JSON reply took 0.2."""
    from codepith.output import packets
    from codepith.search import query as query_module
    from codepith.service.tools import ToolService

    root = tmp_path / "repo"
    write(root, {"billing.py": "def compute_invoice_total(items):\n    return sum(items)\n"})
    seen: list[int] = []
    gather, parse = packets.gather, query_module.parse_query
    monkeypatch.setattr(packets, "gather", lambda q: seen.append(len(q)) or gather(q))
    monkeypatch.setattr(query_module, "parse_query", lambda q: seen.append(len(q)) or parse(q))
    huge = "compute_invoice_total(items) " * (3 * MAX_QUERY_CHARS // 29)
    service = ToolService(root)
    text = service.search(huge, top_k=3, max_chars=2000)
    assert text.startswith("note: query cut to its first") and "billing.py" in text
    assert seen and max(seen) <= MAX_QUERY_CHARS, seen


def test_clear_on_a_cache_path_that_is_a_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache-file"
    cache.write_text("not a folder\n")
    env = _env(cache)
    for what in ("index", "orphans", "all"):
        proc = _cli(env, "clear", what)
        assert proc.returncode == 2
        assert proc.stderr.strip() == f"codepith: error: cache folder {cache} is not a folder; nothing removed"
        assert "internal error" not in proc.stderr
    assert _cli(env, "cache").returncode == 0


def _read_only(cache: Path) -> tuple[str, ...] | None:
    """A command prefix that runs the CLI with ``cache`` read-only, or None where that cannot be done."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        for p in [cache, *cache.rglob("*")]:
            if p.is_dir():
                p.chmod(0o555)
        return ()
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", f"mount --bind '{cache}' '{cache}' && mount -o remount,bind,ro '{cache}'"],
        capture_output=True,
    )
    if probe.returncode != 0:
        return None
    script = f"mount --bind '{cache}' '{cache}' && mount -o remount,bind,ro '{cache}' && exec \"$@\""
    return (unshare, "-m", "sh", "-c", script, "sh")


def test_clear_on_a_read_only_cache_reports_what_stayed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"a.py": "def a():\n    return 1\n"})
    cache = tmp_path / "cache"
    env = _env(cache)
    assert _cli(env, "index", str(root)).returncode == 0
    folders = [p for p in (cache / "indexes").iterdir() if p.is_dir()]  # (not its CACHEDIR.TAG)
    assert len(folders) == 1
    prefix = _read_only(cache)
    if prefix is None:
        pytest.skip("cannot make a read-only folder here")
    try:
        proc = _cli(env, "clear", "index", prefix=prefix)
    finally:
        for p in [cache, *cache.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
    assert proc.returncode == 1
    assert proc.stdout.strip() == "removed 0 cached indexes"
    assert f"codepith: could not remove {folders[0]}: " in proc.stderr
    assert "internal error" not in proc.stderr
    assert folders[0].is_dir()
    proc = _cli(env, "clear", "index")  # writable again: now it goes
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == "removed 1 cached index"
    assert f"removed index of {root.resolve()} (code, " in proc.stdout  # clear names what it removes
    assert not folders[0].exists()


def test_the_exact_line_of_a_long_ignore_file_is_named(tmp_path: Path) -> None:
    from codepith.files.explain import explain_hidden
    from codepith.files.walk import walk

    write(tmp_path, {
        ".gitignore": "*.o\n*.log\n*.c\n*.tmp\n",
        "sub/.codepithignore": "*.h\n",
        "a.c": "int a;\n", "b.c": "int b;\n", "sub/c.c": "int c;\n", "sub/d.h": "int d;\n", "main.py": "x = 1\n",
    })  # fmt: skip
    result = walk(tmp_path)
    assert [f.rel_path for f in result.files] == ["main.py"]
    by_line = {(h.source, h.line, h.rule): (h.count, h.examples) for h in result.hidden}
    assert by_line[(".gitignore", 3, "*.c")] == (3, ("a.c", "b.c", "sub/c.c"))
    assert by_line[("sub/.codepithignore", 1, "*.h")] == (1, ("sub/d.h",))
    lines = explain_hidden(result.hidden, 1)
    assert "  .gitignore line 3 '*.c' hid 3 (e.g. a.c, b.c, sub/c.c)" in lines
    assert "    to index them, remove or change line 1 of sub/.codepithignore" in lines


def test_a_path_deeper_than_the_system_limit_is_shown_short_in_reports(tmp_path: Path, capsys, model) -> None:  # type: ignore[no-untyped-def]
    """250 folders of 19 characters (a 5,000-character path, past PATH_MAX): the folder the system cannot
    list is skipped as unreadable, and the report printed its whole path, 5,000 characters on one line
    (in `codepith index` and in MCP `index_status`). Examples keep their head and tail now."""
    from codepith.output.status import format_status
    from codepith.surfaces.cli import main

    root = tmp_path / "repo"
    write(root, {"top.py": "def top_level():\n    return 1\n"})
    fd = os.open(root, os.O_RDONLY)
    try:
        for i in range(250):  # made relative to a folder fd: the path as a whole is too long for the system
            os.mkdir(f"d{i:018d}", dir_fd=fd)
            sub = os.open(f"d{i:018d}", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = sub
    finally:
        os.close(fd)
    assert main(["index", str(root)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "unreadable:" in ln)
    assert len(line) < 300 and "..." in line and line.endswith("/)"), line
    status = format_status(codepith.Index.from_path(root, model=model).status())
    assert max(len(ln) for ln in status.splitlines()) < 300, status
