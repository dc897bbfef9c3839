"""The `codepith` command: output shapes, exit codes, one-line errors, cache management."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write

from codepith.errors import CodepithError
from codepith.surfaces.cli import main

REPO = {
    "svc/auth.py": (
        "class TokenValidator:\n    def validate(self, token):\n        return token.startswith('Bearer ')\n"
    ),
    "svc/routes.py": "def register_route(app, path, handler):\n    app.routes[path] = handler\n",
    "README.md": "# Service\n\nDocs about tokens.\n",
    "package-lock.json": "{}\n",
    "big.py": "x = 1\n" * 300_000,
}


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, REPO)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_json_shape_and_snippet_control(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "search", "TokenValidator", str(repo), "--format", "json", "-k", "2")
    assert code == 0
    data = json.loads(out)
    assert data["query"] == "TokenValidator"
    first = data["results"][0]
    assert set(first) == {"file_path", "start_line", "end_line", "score", "content"}
    assert first["file_path"] == "svc/auth.py" and first["start_line"] == 1
    assert len(data["results"]) <= 2
    _, out, _ = run(capsys, "search", "TokenValidator", str(repo), "--format", "json", "--max-snippet-lines", "0")
    assert all("content" not in r for r in json.loads(out)["results"])
    _, out, _ = run(capsys, "search", "TokenValidator", str(repo), "--format", "json", "--max-snippet-lines", "1")
    assert all(r["content"].count("\n") == 0 for r in json.loads(out)["results"])


def test_search_text_is_a_bounded_packet(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "search", "validate bearer token", str(repo), "--max-chars", "300")
    assert code == 0
    assert len(out.rstrip("\n")) <= 300
    assert "svc/auth.py" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["search", "x", "/definitely/missing"], "no such"),
        (["search", "   ", "."], "empty query"),
        (["search", "x", "-k", "0", "."], "at least 1"),
        (["read", "../outside.txt", "1", "2"], "outside"),
        (["search", "x", ".", "--content", "nope"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(repo: Path, capsys, monkeypatch, argv, needle) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(repo)
    try:
        code = main(argv)
    except SystemExit as exc:  # argument errors exit from the parser
        code = int(exc.code or 0)
    assert code == 2
    _, err = capsys.readouterr()
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and needle in lines[0].lower(), err
    assert "Traceback" not in err


def test_file_given_as_path(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "search", "x", str(repo / "svc/auth.py"))
    assert code == 2 and "not a folder" in err


def test_no_confident_match_is_said_not_an_error(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "search", "qqqzzzxxx", str(repo), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["confident"] is False and isinstance(data["results"], list)
    code, out, _ = run(capsys, "search", "qqqzzzxxx", str(repo))
    assert code == 0 and out.startswith("no confident match for 'qqqzzzxxx'")
    headers = [ln for ln in out.splitlines() if ln.startswith("FILE ")]
    assert 0 < len(headers) <= 3 and all(h.endswith("(weak)") for h in headers)
    # a real question about this repository is answered plainly
    for query in ("validate bearer token", "TokenValidator", "register a route handler"):
        code, out, _ = run(capsys, "search", query, str(repo))
        assert code == 0 and not out.startswith("no confident match") and "(weak)" not in out, query


def test_index_reports_skips(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "index", str(repo))
    assert code == 0
    assert "2 files" in out
    assert "too-large: 1" in out and "big.py" in out
    assert "lockfile" in out
    code, out, _ = run(capsys, "index", str(repo))
    assert "unchanged 2" in out


AWS_PAIR = "key_id = 'AKIA" + "Z7XQ2LMNOPQRSTUV'\naws_secret_access_key = '" + "a1B2" * 10 + "'\n"


def test_index_counts_only_indexed_files_in_its_columns(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Files skipped when read are reported under skipped, like the walk's skips, not as added."""
    write(tmp_path, {"a.py": "def alpha():\n    return 1\n", "b.py": "x = 1\n\x00\n", "c.py": AWS_PAIR})
    code, out, _ = run(capsys, "index", str(tmp_path))
    assert code == 0
    assert "1 files, 1 chunks (added 1, changed 0, removed 0, unchanged 0)" in out
    assert "skipped 2 files" in out and "binary: 1" in out and "secret: 1" in out
    (tmp_path / "a.py").write_text("x = 1\n\x00\n")  # indexed, now skipped: changed
    code, out, _ = run(capsys, "index", str(tmp_path))
    assert "0 files, 0 chunks (added 0, changed 1, removed 0, unchanged 0)" in out and "binary: 2" in out


def test_index_counts_the_files_a_quick_look_did_not_read_as_unchanged(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A look that reads only what moved (the stat check named it) counted only those files: "9 files
    (added 1, changed 0, removed 0, unchanged 0)" for a tree of 8 untouched files and a new one."""
    import os
    import time

    write(tmp_path, {f"m{i}.py": f"def handler_{i}():\n    return {i}\n" for i in range(3)})
    past = time.time_ns() - 600 * 1_000_000_000
    for p in [tmp_path, *tmp_path.iterdir()]:
        os.utime(p, ns=(past, past))
    run(capsys, "index", str(tmp_path))
    (tmp_path / "new.py").write_text("def fresh_one():\n    return 9\n")
    os.utime(tmp_path / "new.py", ns=(past, past))
    code, out, _ = run(capsys, "index", str(tmp_path))
    assert code == 0 and "4 files, 4 chunks (added 1, changed 0, removed 0, unchanged 3)" in out, out
    (tmp_path / "m0.py").write_text("def handler_zero():\n    return 0\n")
    os.utime(tmp_path / "m0.py", ns=(past + 1, past + 1))
    code, out, _ = run(capsys, "index", str(tmp_path))
    assert "4 files, 4 chunks (added 0, changed 1, removed 0, unchanged 3)" in out, out


def test_several_paths_prefix_results(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "one", {"a.py": "def alpha_handler():\n    pass\n"})
    write(tmp_path / "two", {"b.py": "def beta_handler():\n    pass\n"})
    _, out, _ = run(capsys, "search", "handler", str(tmp_path / "one"), str(tmp_path / "two"), "--format", "json")
    paths = {r["file_path"] for r in json.loads(out)["results"]}
    assert {"one/a.py", "two/b.py"} <= paths


def _indexed_pair(capsys, tmp_path: Path, first: str, second: str) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """Two small folders, each indexed into the test's cache."""
    folders = (tmp_path / first, tmp_path / second)
    for folder in folders:
        write(folder, {f"{folder.name}.py": f"def {folder.name}_handler():\n    pass\n"})
        run(capsys, "index", str(folder))
    return folders


def test_cache_list_and_clear_orphans(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    keep, gone = _indexed_pair(capsys, tmp_path, "keep", "gone")
    _, out, _ = run(capsys, "cache")
    assert str(keep.resolve()) in out and str(gone.resolve()) in out
    for p in gone.iterdir():
        p.unlink()
    gone.rmdir()
    _, out, _ = run(capsys, "cache")
    assert "orphan" in out
    code, out, _ = run(capsys, "clear", "orphans")
    assert code == 0 and "removed 1" in out
    _, out, _ = run(capsys, "cache")
    assert str(keep.resolve()) in out and str(gone.resolve()) not in out
    run(capsys, "clear", "all")
    _, out, _ = run(capsys, "cache")
    assert "no cached indexes" in out


def test_an_index_of_an_older_format_is_listed_and_cleared_as_outdated(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """After an upgrade the old index is only disk space: this version builds its own beside it."""
    from codepith.store import layout

    old, new = _indexed_pair(capsys, tmp_path, "old", "new")
    (entry,) = [e for e in layout.list_cached() if e.root == str(old.resolve())]
    source = json.loads((entry.folder / "source.json").read_text())
    assert source["format"] == layout.FORMAT_VERSION and not entry.outdated
    source["format"] = layout.FORMAT_VERSION - 1  # as an older codepith wrote it
    (entry.folder / "source.json").write_text(json.dumps(source))
    _, out, _ = run(capsys, "cache")
    assert f"outdated: index format {layout.FORMAT_VERSION - 1}" in out
    code, out, _ = run(capsys, "clear", "orphans")
    assert code == 0 and "removed 1 cached index" in out and not entry.folder.exists()
    _, out, _ = run(capsys, "cache")
    assert str(new.resolve()) in out and "outdated" not in out


def test_read_related_savings(repo: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(repo)
    code, out, _ = run(capsys, "read", "svc/auth.py", "2", "3")
    assert code == 0 and "2|" in out.replace(" ", "") and "validate" in out
    code, out, _ = run(capsys, "related", "svc/auth.py", "2", "--format", "json")
    assert code == 0 and all(r["file_path"] != "svc/auth.py" or r["start_line"] > 3 for r in json.loads(out)["results"])
    run(capsys, "search", "register route", ".")
    code, out, _ = run(capsys, "savings")
    assert code == 0 and "search" in out and "read" in out


def test_file_types_and_version(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "file-types")
    assert code == 0 and ".py" in out and "python" in out
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "codepith" in capsys.readouterr().out


def test_console_script_never_prints_a_traceback(tmp_path: Path) -> None:
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "codepith.surfaces.cli", "search", "x", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def test_related_packet_shows_where_the_seed_is_used(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    body = "\n".join(f"    step_{i} = prepare({i})" for i in range(30))
    write(
        tmp_path,
        {
            "lib/hashing.py": "def digest_payload(data):\n    return sha256(data).hexdigest()\n",
            "app/upload.py": f"def handle_upload(data):\n{body}\n    return digest_payload(data)\n",
        },
    )
    code, out, _ = run(capsys, "related", "lib/hashing.py", "1", str(tmp_path), "--max-chars", "700")
    assert code == 0
    assert "app/upload.py" in out
    assert "return digest_payload(data)" in out  # the line that ties the hit to the seed, not just its head


def test_undecodable_file_names_are_printed_as_their_bytes(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / os.fsdecode(b"caf\xe9_rates.py")).write_text("def exchange_rate_lookup(code):\n    return RATES[code]\n")
    for fmt in ("text", "json"):
        proc = subprocess.run(
            [sys.executable, "-m", "codepith.surfaces.cli", "search", "exchange_rate_lookup", str(root), "--format"]
            + [fmt],
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert (b"caf\xe9_rates.py" if fmt == "text" else b"caf\\udce9_rates.py") in proc.stdout


def test_top_k_and_max_chars_limits_are_stated_and_enforced(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from codepith.limits import MAX_TOP_K, MIN_MAX_CHARS

    for argv, needle in (
        (["-k", str(MAX_TOP_K + 1)], f"at most {MAX_TOP_K}"),
        (["--max-chars", "10"], f"at least {MIN_MAX_CHARS}"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["search", "validate", str(repo), *argv])
        assert exc.value.code == 2
        assert needle in capsys.readouterr().err
    code, out, _ = run(capsys, "search", "validate", str(repo), "-k", str(MAX_TOP_K))
    assert code == 0
    # the smallest budget still shows the best hit as numbered code, not only a count
    code, out, _ = run(capsys, "search", "validate bearer token", str(repo), "--max-chars", str(MIN_MAX_CHARS))
    assert code == 0 and len(out.rstrip("\n")) <= MIN_MAX_CHARS
    assert "FILE svc/auth.py" in out and "| " in out, out
    from codepith.api import Index

    with pytest.raises(CodepithError, match="top_k"):
        Index.from_path(repo).search("validate", top_k=MAX_TOP_K + 1)


def test_help_names_every_positional_argument(capsys) -> None:  # type: ignore[no-untyped-def]
    from codepith.surfaces.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, sp in sub.choices.items():  # type: ignore[union-attr]
        for action in sp._actions:
            if not action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.dest} has no help text"


def test_cache_has_headers_and_model_and_clear_all_names_what_it_removes(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from codepith.output.savings import stats_path

    run(capsys, "index", str(repo))
    run(capsys, "search", "validate", str(repo))  # writes the savings log
    assert stats_path().exists()
    _, out, _ = run(capsys, "cache")
    header = out.splitlines()[1].split()
    assert header == ["size", "files", "chunks", "content", "model", "updated", "source"]
    assert "codepith-" in out.splitlines()[2]  # the bundled model's name
    code, out, _ = run(capsys, "clear", "all")
    assert code == 0
    assert f"removed savings log: {stats_path()}" in out
    assert f"removed index of {repo.resolve()}" in out
    assert not stats_path().exists()


def test_read_hint_keeps_root(repo: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    write(repo, {"long.py": "".join(f"x{i} = {i}\n" for i in range(400))})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "read", "long.py", "1", "400", "--root", str(repo))
    assert code == 0
    hint = out.strip().splitlines()[-1]
    assert f"codepith read long.py 301 400 --root {repo.resolve()}" in hint, hint


def test_outline_command_file_folder_and_budget(repo: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(repo)
    code, out, _ = run(capsys, "outline", "svc/auth.py")
    assert code == 0
    assert out.splitlines() == [
        "OUTLINE svc/auth.py  2 definitions",
        "1-3 class: class TokenValidator:",
        "  2-3 method: def validate(self, token):",
    ]
    code, out, _ = run(capsys, "outline", ".", "--max-chars", "300")
    assert code == 0 and out.startswith("MAP .") and len(out.rstrip("\n")) <= 300
    assert "TokenValidator" in out or "register_route" in out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, _ = run(capsys, "outline", str(repo))  # a folder outside the working folder is its own repo
    assert code == 0 and out.startswith("MAP .") and "\nsvc/auth.py\n" in out
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "outline", "repo/svc")  # one inside it is mapped within the working folder
    assert code == 0 and out.startswith("MAP repo/svc") and "\nrepo/svc/auth.py\n" in out
    code, _, err = run(capsys, "outline", "../../etc/passwd", "--root", str(repo))
    assert code == 2 and "outside" in err


def test_readme_demo_finds_its_answer(capsys) -> None:  # type: ignore[no-untyped-def]
    """The README's first command, run on this checkout, puts the module it names first."""
    import re

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    command = re.search(r'codepith search "([^"]+)" \.', readme)
    answer = re.search(r"its\s+first hit is `([^`]+)`", readme)
    assert command and answer
    code, out, _ = run(capsys, "search", command.group(1), str(root / "src"), "--format", "json")
    assert code == 0
    first = json.loads(out)["results"][0]["file_path"]
    assert "src/" + first == answer.group(1) or first == answer.group(1), first


def exit_code(entry: Callable[[list[str]], int], argv: list[str]) -> int | str | None:
    """``entry(argv)``'s status, returned or raised as SystemExit (argparse's own errors exit)."""
    try:
        return entry(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "{root}", "-k=--"],
        ["search", "q", "{root}", "--max-chars=--"],
        ["search", "q", "{root}", "--format=--"],
        ["read", "a.py", "1", "2", "--root", "{root}", "--max-chars=--"],
        ["outline", "a.py", "--root", "{root}", "--max-chars=--"],
        ["mcp", "{root}", "--allow=--"],
        ["install", "--agent=--", "--dry-run"],
    ],
)
def test_an_option_given_as_two_dashes_is_judged_as_that_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """argparse (Python 3.11) stores ``--opt=--`` as [] without calling the option's type: every command
    met a list where it checks a value (internal errors). Python 3.13's argparse judges it itself and
    exits through the parser's error: the same line, the same status."""
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    assert exit_code(main, [a.format(root=tmp_path) for a in argv]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("codepith: error: ") and "--" in line.removeprefix("codepith: error: "), line


def test_options_left_out_keep_their_defaults(tmp_path: Path) -> None:
    """The --opt=-- repair must not touch an option not given: `mcp` with no --allow is not `--allow --`."""
    from codepith.surfaces.cli import _restore_dropped_values, build_parser

    parser = build_parser()
    for argv in (["mcp"], ["mcp", str(tmp_path)], ["install", "--dry-run"], ["search", "q", str(tmp_path)]):
        args = parser.parse_args(argv)
        before = dict(vars(args))
        _restore_dropped_values(parser, args)
        assert vars(args) == before, argv
    args = parser.parse_args(["mcp", "--allow=--", "--allow", str(tmp_path)])
    _restore_dropped_values(parser, args)
    assert args.allow == ["--", str(tmp_path)]


def test_a_first_build_that_stopped_is_unfinished_not_an_orphan(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A first build killed before its generation completed has no source.json yet: it was listed as
    'orphan: source gone' (its source there all along) and 'clear orphans' deleted what resume needs."""
    from codepith.store import layout

    keep, debris = _indexed_pair(capsys, tmp_path, "keep", "debris")
    entries = {e.root: e for e in layout.list_cached()}
    (entries[str(keep.resolve())].folder / "source.json").unlink()  # as before the first generation completed
    damaged = entries[str(debris.resolve())].folder
    (damaged / "source.json").unlink()
    for part in damaged.glob("manifest.sqlite*"):  # no manifest either: debris
        part.unlink()
    _, out, _ = run(capsys, "cache")
    line = next(x for x in out.splitlines() if str(keep.resolve()) in x)
    assert "unfinished" in line and "orphan" not in line, out
    code, out, _ = run(capsys, "clear", "orphans")
    assert code == 0 and "removed 1 cached index" in out
    assert entries[str(keep.resolve())].folder.exists() and not damaged.exists()


def test_clear_all_removes_clones_and_cache_lists_them(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import subprocess as sp

    from codepith.service.repos import ALLOW_FILE_URLS_ENV

    src = tmp_path / "src"
    write(src, {"x.py": "def cloned_here():\n    return 1\n"})
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    sp.run([*git, "init", "-q", str(src)], check=True)
    sp.run([*git, "-C", str(src), "add", "."], check=True)
    sp.run([*git, "-C", str(src), "commit", "-qm", "x"], check=True)
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    url = src.as_uri()
    assert run(capsys, "index", url)[0] == 0
    _, out, _ = run(capsys, "cache")
    assert "1 cloned repository" in out and url in out
    code, out, _ = run(capsys, "clear", "all")
    assert code == 0 and f"removed clone of {url}" in out
    _, out, _ = run(capsys, "cache")
    assert "cloned" not in out


def test_outline_of_a_name_past_the_file_system_limit_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, {"a.py": "def a():\n    return 1\n"})
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "outline", "a" * 300)
    assert code == 2 and err.count("\n") == 1 and "internal error" not in err and len(err) < 400, err
