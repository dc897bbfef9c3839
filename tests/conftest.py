"""Shared fixtures: the bundled model loaded once, and a private cache folder per test."""

from __future__ import annotations

import os
import sys
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


@pytest.fixture
def forkable() -> None:
    """A test of forked workers runs with no other thread in this process: the helper a service test kept
    is dropped (the next service starts its own) and queues still closing are waited for."""
    from codepith.index import workers
    from codepith.index.forking import can_fork

    workers.drop_helper()
    tqdm = sys.modules.get("tqdm")  # a library's progress monitor thread, started by a benchmark test
    monitor = getattr(getattr(tqdm, "tqdm", None), "monitor", None)
    if monitor is not None:
        monitor.exit()
    if not can_fork():
        pytest.skip("fork is not safe in this process (not Linux, or other threads are running)")
