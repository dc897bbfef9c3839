"""Bounded reads: confined to the root, clamped, truncated with a usable 'next part' call."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from codepith.errors import CodepithError, PathError
from codepith.output.read import cli_read_call, format_read, mcp_read_call, read_lines


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    (root / "small.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("do not show\n")
    return root


def test_reads_requested_range(repo: Path) -> None:
    res = read_lines(repo, "src/a.py", 10, 12)
    assert res.rel_path == "src/a.py"
    assert (res.start, res.end, res.total_lines) == (10, 12, 1000)
    assert res.lines == ("line 10", "line 11", "line 12")
    assert not res.truncated and not res.clamped


def test_format_numbers_lines(repo: Path) -> None:
    text = format_read(read_lines(repo, "src/a.py", 41, 42))
    assert text.splitlines() == ["FILE src/a.py  LINES 41-42 of 1000", "  41| line 41", "  42| line 42"]


def test_absolute_path_inside_root_is_fine(repo: Path) -> None:
    res = read_lines(repo, str(repo / "small.txt"), 2, 2)
    assert res.rel_path == "small.txt" and res.lines == ("two",)


def test_dot_dot_escape_refused(repo: Path) -> None:
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, "../secret.txt", 1, 1)
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, "src/../../secret.txt", 1, 1)


def test_absolute_path_outside_refused(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, str(tmp_path / "secret.txt"), 1, 1)
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, "/etc/passwd", 1, 1)


def test_symlink_pointing_out_refused(repo: Path, tmp_path: Path) -> None:
    (repo / "link.txt").symlink_to(tmp_path / "secret.txt")
    (repo / "linkdir").symlink_to(tmp_path)
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, "link.txt", 1, 1)
    with pytest.raises(PathError, match="outside"):
        read_lines(repo, "linkdir/secret.txt", 1, 1)


def test_symlinked_root_and_inner_link_work(repo: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo)
    assert read_lines(alias, "small.txt", 1, 1).lines == ("one",)
    (repo / "inner.txt").symlink_to(repo / "small.txt")
    assert read_lines(repo, "inner.txt", 3, 3).lines == ("three",)


def test_truncates_at_max_lines_and_names_next_call(repo: Path) -> None:
    res = read_lines(repo, "src/a.py", 1, 1000)
    assert res.truncated and (res.start, res.end) == (1, 300) and len(res.lines) == 300
    text = format_read(res)
    note = text.splitlines()[-1]
    match = re.search(r"next part: (.+)\)$", note)
    assert match, note
    argv = shlex.split(match.group(1))
    assert argv[:3] == ["codepith", "read", "src/a.py"]
    nxt = read_lines(repo, argv[2], int(argv[3]), int(argv[4]))
    assert nxt.lines[0] == "line 301" and nxt.end == 600


def test_next_part_stops_at_requested_end(repo: Path) -> None:
    res = read_lines(repo, "src/a.py", 1, 350)
    assert res.truncated and res.end == 300
    assert "codepith read src/a.py 301 350" in format_read(res)
    assert "start_line=301, end_line=350" in format_read(res, read_call=mcp_read_call)


def test_exactly_max_lines_is_not_truncated(repo: Path) -> None:
    res = read_lines(repo, "src/a.py", 1, 300)
    assert not res.truncated and "next part" not in format_read(res)


def test_end_past_eof_is_clamped_with_note(repo: Path) -> None:
    res = read_lines(repo, "small.txt", 2, 50)
    assert res.lines == ("two", "three") and res.end == 3 and res.clamped and not res.truncated
    assert "ends at 3" in format_read(res)


@pytest.mark.parametrize(
    ("start", "end", "pattern"),
    [(0, 2, "1 or more"), (-3, 2, "1 or more"), (3, 2, "before start"), (4, 9, "past the end")],
)
def test_bad_ranges(repo: Path, start: int, end: int, pattern: str) -> None:
    with pytest.raises(CodepithError, match=pattern):
        read_lines(repo, "small.txt", start, end)


def test_path_errors(repo: Path) -> None:
    with pytest.raises(PathError, match="no such file"):
        read_lines(repo, "nope.py", 1, 2)
    with pytest.raises(PathError, match="folder"):
        read_lines(repo, "src", 1, 2)
    with pytest.raises(PathError, match="empty"):
        read_lines(repo, "", 1, 2)
    with pytest.raises(PathError, match="root"):
        read_lines(repo / "missing-root", "a.py", 1, 2)


def test_binary_refused(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"abc\x00\x01\x02\n")
    with pytest.raises(CodepithError, match="binary"):
        read_lines(repo, "blob.bin", 1, 1)


def test_errors_are_one_line(repo: Path) -> None:
    for path, start, end in [("../x", 1, 1), ("nope", 1, 1), ("small.txt", 9, 9), ("small.txt", 2, 1)]:
        with pytest.raises(CodepithError) as info:
            read_lines(repo, path, start, end)
        assert "\n" not in str(info.value)


def test_invalid_utf8_replaced_and_crlf_stripped(repo: Path) -> None:
    (repo / "odd.txt").write_bytes(b"caf\xe9\r\nok\r\n")
    res = read_lines(repo, "odd.txt", 1, 2)
    assert res.lines == ("caf\ufffd", "ok")


def test_cli_call_quotes_paths() -> None:
    call = cli_read_call("dir with space/a.py", 3, 4)
    assert shlex.split(call) == ["codepith", "read", "dir with space/a.py", "3", "4"]
    assert mcp_read_call('a"b.py', 1, 2) == 'read_snippet(path="a\\"b.py", start_line=1, end_line=2)'
