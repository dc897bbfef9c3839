"""The `codepith` command: output shapes, exit codes, one-line errors, cache management."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write

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


def test_no_match_is_empty_not_error(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "search", "qqqzzzxxx", str(repo), "--format", "json")
    assert code == 0
    # dense retrieval may still return neighbours; a purely lexical miss must not be an error
    assert isinstance(json.loads(out)["results"], list)


def test_index_reports_skips(repo: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "index", str(repo))
    assert code == 0
    assert "2 files" in out
    assert "too-large: 1" in out and "big.py" in out
    assert "lockfile" in out
    code, out, _ = run(capsys, "index", str(repo))
    assert "unchanged 2" in out


def test_several_paths_prefix_results(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "one", {"a.py": "def alpha_handler():\n    pass\n"})
    write(tmp_path / "two", {"b.py": "def beta_handler():\n    pass\n"})
    _, out, _ = run(capsys, "search", "handler", str(tmp_path / "one"), str(tmp_path / "two"), "--format", "json")
    paths = {r["file_path"] for r in json.loads(out)["results"]}
    assert {"one/a.py", "two/b.py"} <= paths


def test_cache_list_and_clear_orphans(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    keep, gone = tmp_path / "keep", tmp_path / "gone"
    write(keep, {"k.py": "def keep():\n    pass\n"})
    write(gone, {"g.py": "def gone():\n    pass\n"})
    run(capsys, "index", str(keep))
    run(capsys, "index", str(gone))
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
