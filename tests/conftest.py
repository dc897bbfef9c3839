"""Shared fixtures: the bundled model loaded once, and a private cache folder per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def model():  # type: ignore[no-untyped-def]
    from codepith.model.loader import load_model

    return load_model(None)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("CODEPITH_CACHE_DIR", str(cache))
    monkeypatch.delenv("CODEPITH_MODEL", raising=False)
    return cache


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
