"""Reading files as text: binaries, bad bytes, BOMs, minified bundles, unreadable files."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from codepith.files.read import read_text


def test_plain_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("déf = 'ü'\n", encoding="utf-8")
    assert read_text(path) == ("déf = 'ü'\n", None)


def test_invalid_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = '\xff\xfe'\n")
    text, reason = read_text(path)
    assert reason is None and text == "x = '\ufffd\ufffd'\n"


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(codecs.BOM_UTF8 + b"x = 1\n")
    assert read_text(path) == ("x = 1\n", None)


def test_utf16_with_bom_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "a.cs"
    path.write_bytes("class A {}\n".encode("utf-16"))
    assert read_text(path) == ("class A {}\n", None)


def test_nul_byte_in_first_8k_means_binary(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n" + b"\x00\x01\x02" + b"y" * 100)
    assert read_text(path) == (None, "binary")


def test_nul_byte_after_first_8k_is_not_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n" * 2000 + b"\x00")
    text, reason = read_text(path)
    assert reason is None and text is not None and text.startswith("x = 1\n")


def test_minified_javascript(tmp_path: Path) -> None:
    path = tmp_path / "bundle.js"
    path.write_text("var a=1;" * 2000 + "\n")
    assert read_text(path) == (None, "minified")
    normal = tmp_path / "normal.js"
    normal.write_text("var a = 1;\n" * 2000)
    assert read_text(normal)[1] is None


def test_long_lines_in_docs_are_not_minified(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    text = ("word " * 400 + "\n\n") * 5
    path.write_text(text)
    assert read_text(path) == (text, None)


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    assert read_text(tmp_path / "gone.py") == (None, "unreadable")
    assert read_text(tmp_path) == (None, "unreadable")  # a folder


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_permission_denied_is_unreadable(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: permission bits do not stop reads")
    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")
    path.chmod(0)
    try:
        assert read_text(path) == (None, "unreadable")
    finally:
        path.chmod(0o644)


def test_read_source_says_when_the_path_no_longer_leads_to_the_listed_file(tmp_path: Path) -> None:
    """What a look reads may have moved since it was listed: each such path is unreadable *for now*
    (``moved``), never opened in a way that blocks, and never read outside the root."""
    from codepith.files.read import read_source

    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "out.py").write_text("def outside():\n    pass\n")
    (root / "in.py").write_text("def inside():\n    pass\n")
    os.mkfifo(root / "pipe.py")
    (root / "dir.py").mkdir()
    os.symlink(tmp_path / "out.py", root / "out_link.py")
    os.symlink(root / "in.py", root / "in_link.py")
    os.symlink("loop.py", root / "loop.py")
    within = os.path.realpath(root)
    assert read_source(root / "in.py", within) == ("def inside():\n    pass\n", None, False)
    assert read_source(root / "in_link.py", within).text == "def inside():\n    pass\n"
    for name in ("pipe.py", "dir.py", "out_link.py", "loop.py", "gone.py"):
        assert read_source(root / name, within) == (None, "unreadable", True), name
    assert read_source(root / "out_link.py").text is not None  # no root named: any regular file is read


def test_read_source_reads_no_more_than_the_size_limit(tmp_path: Path) -> None:
    """A file listed under the size limit that grew past it before it was read (a dump being written, a
    sparse file swapped in) was read whole, however large: now at most the limit and one byte."""
    from codepith.files import read

    path = tmp_path / "grown.py"
    path.write_text("x = 1\n" * 1000)
    assert read.read_source(path, limit=6000).text is not None
    assert read.read_source(path, limit=5999) == (None, "too-large", True)
    with open(path, "wb") as out:
        out.truncate(1 << 40)  # a terabyte, sparse: reading it whole would never end
    assert read.read_source(path, limit=1_000_000) == (None, "too-large", True)
