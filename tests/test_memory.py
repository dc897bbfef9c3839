"""numpy's huge-page advice is off in a process that makes an index, unless the user chose it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codepith import memory
from codepith.api import Index

toggle = np._core.multiarray._set_madvise_hugepage  # returns the setting it replaces


def test_prefer_small_pages_turns_the_advice_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.ENV, raising=False)
    before = toggle(True)
    try:
        assert memory.prefer_small_pages()
        assert toggle(True) is False
    finally:
        toggle(before)


def test_a_user_who_set_numpy_s_switch_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(memory.ENV, "1")
    before = toggle(True)
    try:
        assert not memory.prefer_small_pages()
        assert toggle(True) is True
    finally:
        toggle(before)


def test_making_an_index_applies_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memory.ENV, raising=False)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    before = toggle(True)
    try:
        Index.from_path(tmp_path / "repo", cache_dir=tmp_path / "cache").close()
        assert toggle(True) is False
    finally:
        toggle(before)
