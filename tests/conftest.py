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


def make_tiny_model(folder: Path, dims: int = 8, seed: int = 0) -> Path:
    """A small but real model2vec-layout folder: WordLevel tokenizer, safetensors table, config."""
    import json

    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[UNK]", "def", "class", "return", "route", "token", "cache", "parse", "alpha", "beta", "gamma"]
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(seed)
    save_file(
        {"embeddings": rng.standard_normal((len(words), dims)).astype(np.float32)}, str(folder / "model.safetensors")
    )
    (folder / "config.json").write_text(json.dumps({"normalize": True, "hidden_dim": dims}))
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from codepith.model.loader import load_model

    return load_model(str(make_tiny_model(tmp_path_factory.mktemp("tiny-model"))))
