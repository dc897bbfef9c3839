"""The embedding model loader: bundled default offline, local folders, hub errors, encoding maths."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file
from test_model_words import pooled_reference
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from codepith.errors import ModelError
from codepith.model import loader
from codepith.model.loader import (
    DEFAULT_MODEL_NAME,
    ModelInfo,
    StaticModel,
    load_model,
    resolve_model_spec,
)

WORDS = ["[UNK]", "hello", "world", "foo", "bar", "baz"]


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("CODEPITH_MODEL", raising=False)
    loader._clear_cache()
    yield
    loader._clear_cache()


def make_model(
    folder: Path,
    vectors: np.ndarray,
    *,
    normalize: bool = True,
    weights: np.ndarray | None = None,
    mapping: np.ndarray | None = None,
) -> Path:
    """A tiny model2vec-layout folder: WordLevel tokenizer over WORDS, given vectors."""
    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    tensors = {"embeddings": vectors}
    if weights is not None:
        tensors["weights"] = weights
    if mapping is not None:
        tensors["mapping"] = mapping
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": normalize}))
    return folder


def table(dims: int = 4, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(len(WORDS), dims)).astype(np.float32)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any socket connection or hub download fails loudly."""

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("network access attempted")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    try:
        import huggingface_hub
    except ImportError:
        return
    monkeypatch.setattr(huggingface_hub, "snapshot_download", refuse)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)


# --- bundled default -------------------------------------------------------------------------


def test_bundled_model_loads_offline(no_network: None) -> None:
    model = load_model()
    assert model.info.name == DEFAULT_MODEL_NAME
    assert model.info.dims > 0 and len(model.info.digest) == 64
    vecs = model.encode(["def parse_config(path):\n    return json.load(open(path))", "http client session"])
    assert vecs.shape == (2, model.info.dims) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_bundled_folder_ships_licence_and_provenance() -> None:
    data = loader.DATA_DIR
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "MODEL_INFO.json",
        "LICENSE",
        "NOTICE",
    ):
        assert (data / name).is_file(), name
    info = json.loads((data / "MODEL_INFO.json").read_text())
    assert info["base_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "Apache License" in (data / "LICENSE").read_text()
    assert "all-MiniLM-L6-v2" in (data / "NOTICE").read_text()
    size = sum(f.stat().st_size for f in data.iterdir() if f.is_file())
    assert size <= 20_000_000


def test_bundled_model_ranks_related_text_higher() -> None:
    model = load_model()
    q, related, unrelated = model.encode(
        [
            "open a websocket connection",
            "class WebSocketClient: connect to a websocket server",
            "def add(a, b): return a + b",
        ]
    )
    assert float(q @ related) > float(q @ unrelated)


def test_model_is_cached_per_process() -> None:
    assert load_model() is load_model(None)
    assert load_model() is load_model(DEFAULT_MODEL_NAME)


def test_resolve_spec_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model_spec(None) == DEFAULT_MODEL_NAME
    monkeypatch.setenv("CODEPITH_MODEL", "/some/folder")
    assert resolve_model_spec(None) == "/some/folder"
    assert resolve_model_spec("org/model") == "org/model"
    monkeypatch.setenv("CODEPITH_MODEL", "  ")
    assert resolve_model_spec(None) == DEFAULT_MODEL_NAME


def test_env_var_selects_local_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_model(tmp_path / "env-model", table(dims=3))
    monkeypatch.setenv("CODEPITH_MODEL", str(folder))
    assert load_model().info.dims == 3


# --- local folders and the encoding maths ------------------------------------------------------


def test_local_folder_mean_pools_and_normalises(tmp_path: Path) -> None:
    vectors = table()
    model = load_model(str(make_model(tmp_path / "m", vectors)))
    assert isinstance(model, StaticModel)
    assert model.info == ModelInfo(name="m", digest=model.info.digest, dims=4)
    out = model.encode(["hello world", "", "zzz qqq", "Hello   HELLO foo"])
    expected = (vectors[1] + vectors[2]) / 2
    np.testing.assert_allclose(out[0], expected / np.linalg.norm(expected), rtol=1e-5)
    assert not out[1].any()  # empty text
    assert not out[2].any()  # only unknown tokens: dropped, nothing to pool
    expected = (2 * vectors[1] + vectors[3]) / 3
    np.testing.assert_allclose(out[3], expected / np.linalg.norm(expected), rtol=1e-5)


def test_unknown_tokens_are_dropped_before_pooling(tmp_path: Path) -> None:
    vectors = table()
    model = load_model(str(make_model(tmp_path / "m", vectors, normalize=False)))
    out = model.encode(["foo zzz bar"])
    np.testing.assert_allclose(out[0], (vectors[3] + vectors[4]) / 2, rtol=1e-5)


def test_punctuation_marks_in_any_vocabulary_are_silent(tmp_path: Path) -> None:
    """A tokenizer of another kind (WordLevel here) pools no mark either: ',' and '«' are in its
    vocabulary and split off as words, yet only the words count."""
    folder = tmp_path / "m"
    folder.mkdir()
    words = [*WORDS, ",", "«", "hello,"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    vectors = np.random.default_rng(3).normal(size=(len(words), 4)).astype(np.float32)
    save_file({"embeddings": vectors}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "normalize": False}))
    model = load_model(str(folder))
    out = model.encode(["foo , « bar", "hello, bar"])
    np.testing.assert_allclose(out[0], (vectors[3] + vectors[4]) / 2, rtol=1e-5)
    np.testing.assert_allclose(out[1], (vectors[8] + vectors[4]) / 2, rtol=1e-5)  # a word holding one is a word


def test_weights_and_mapping_are_applied(tmp_path: Path) -> None:
    centroids = np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
    mapping = np.array([0, 0, 1, 1, 0, 1], dtype=np.int64)
    weights = np.array([1.0, 2.0, 3.0, 1.0, 1.0, 1.0], dtype=np.float32)
    model = load_model(str(make_model(tmp_path / "q", centroids, normalize=False, weights=weights, mapping=mapping)))
    out = model.encode(["hello world"])
    np.testing.assert_allclose(out[0], (2.0 * centroids[0] + 3.0 * centroids[1]) / 2)


def test_int8_vectors_with_row_scales(tmp_path: Path) -> None:
    vectors = np.array([[0, 0], [127, 0], [0, -127], [10, 10], [1, 1], [2, 2]], dtype=np.int8)
    scales = np.array([1, 0.5, 0.25, 1, 1, 1], dtype=np.float32)
    model = load_model(str(make_model(tmp_path / "i8", vectors, normalize=False, weights=scales)))
    np.testing.assert_allclose(model.encode(["hello world"])[0], [63.5 / 2, -31.75 / 2])


def test_encode_is_deterministic_and_batch_independent(tmp_path: Path) -> None:
    model = load_model(str(make_model(tmp_path / "m", table())))
    texts = ["hello", "world foo", "", "bar baz hello", "foo"] * 7
    whole = model.encode(texts)
    assert np.array_equal(whole, model.encode(texts))
    assert np.array_equal(whole, model.encode(texts, batch_size=3))
    assert model.encode([]).shape == (0, 4)


def test_encode_rejects_a_bare_string(tmp_path: Path) -> None:
    model = load_model(str(make_model(tmp_path / "m", table())))
    with pytest.raises(TypeError):
        model.encode("hello")


def test_digest_tracks_content_not_location(tmp_path: Path) -> None:
    a = load_model(str(make_model(tmp_path / "a", table(seed=1))))
    same = load_model(str(make_model(tmp_path / "b", table(seed=1))))
    changed = load_model(str(make_model(tmp_path / "c", table(seed=2))))
    assert a.info.digest == same.info.digest
    assert a.info.digest != changed.info.digest


def test_model_info_name_comes_from_model_info_json(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "x", table())
    (folder / "MODEL_INFO.json").write_text(json.dumps({"name": "my-model"}))
    assert load_model(str(folder)).info.name == "my-model"


def test_ascii_shortcut_matches_full_tokenizer() -> None:
    model = load_model()
    texts = [
        "getUserName(self) -> HTTPServer",
        "form\x0cfeed and \x0bvertical\x1f tab\x7f",
        "literal [PAD] and [UNK] and [CLS] tokens",
        "Tabs\tand\r\nnewlines",
        "naïve café 日本語 😀",
        "",
    ]
    fast = model._id_lists(texts)
    tokenizer = model._full_tokenizer()
    full = loader._batch_encode(tokenizer, texts)
    assert [list(ids) for ids in fast] == [pooled_reference(tokenizer, e.ids) for e in full]


# --- errors -----------------------------------------------------------------------------------


def _assert_one_line(err: ModelError) -> str:
    text = str(err)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_unreachable_hub_id_is_one_line_error(no_network: None) -> None:
    with pytest.raises(ModelError) as info:
        load_model("some-org/some-model")
    text = _assert_one_line(info.value)
    assert "some-org/some-model" in text and DEFAULT_MODEL_NAME in text
    assert info.value.__cause__ is None


def test_hub_error_when_huggingface_hub_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(ModelError) as info:
        load_model("minishlab/potion-code-16M")
    text = _assert_one_line(info.value)
    assert "minishlab/potion-code-16M" in text and DEFAULT_MODEL_NAME in text


def test_hub_fetch_failure_real_client_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ModelError) as info:
        load_model("minishlab/potion-code-16M")
    assert "cannot fetch model 'minishlab/potion-code-16M'" in _assert_one_line(info.value)


def test_missing_path_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as info:
        load_model(str(tmp_path / "nope" / "deeper" / "model"))
    assert DEFAULT_MODEL_NAME in _assert_one_line(info.value)


def test_folder_without_model_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError) as info:
        load_model(str(tmp_path / "empty"))
    assert "model.safetensors" in _assert_one_line(info.value)


def test_corrupt_weights(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "bad", table())
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelError) as info:
        load_model(str(folder))
    _assert_one_line(info.value)


def test_too_few_vectors_for_vocabulary(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "short", table()[:3])
    with pytest.raises(ModelError) as info:
        load_model(str(folder))
    assert "3 vectors" in _assert_one_line(info.value)


# --- agreement with model2vec itself ----------------------------------------------------------


def test_matches_model2vec_encode(tmp_path: Path) -> None:
    """model2vec pools the marks too: on text without them the two agree; on code they differ only by
    the marks' rows, which are small (see ``silent_ids``)."""
    m2v = pytest.importorskip("model2vec")
    texts = [
        "async def fetch session url\n    async with session get url as resp\n        return await resp read",
        "How does the router dispatch requests to handlers",
        "naïve café 日本語",
        "",
        "x 1\x0c\n" * 2000,  # long: truncated the same way
    ]
    ours = load_model().encode(texts)
    theirs = m2v.StaticModel.from_pretrained(str(loader.DATA_DIR)).encode(texts).astype(np.float32)
    np.testing.assert_allclose(ours, theirs, atol=2e-3)
    code = "async def fetch(session, url):\n    async with session.get(url) as resp:\n        return await resp.read()"
    ours = load_model().encode([code])[0]
    theirs = m2v.StaticModel.from_pretrained(str(loader.DATA_DIR)).encode([code])[0]
    assert 0.98 < float(ours @ theirs) / float(np.linalg.norm(ours) * np.linalg.norm(theirs)) < 0.99999
    tiny = make_model(tmp_path / "tiny", table())
    ours = load_model(str(tiny)).encode(["hello world foo", "zzz", "bar"])
    theirs = m2v.StaticModel.from_pretrained(str(tiny)).encode(["hello world foo", "zzz", "bar"])
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


# --- deferred loading -------------------------------------------------------------------------


def test_a_deferred_model_is_named_now_and_read_on_first_use(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m", table())
    eager = loader._load_folder(folder, "m")
    model = load_model(str(folder), deferred=True)
    assert model.info == eager.info  # digest and width, from the header alone
    (folder / "tokenizer.json").write_text("{ not a tokenizer", encoding="utf-8")
    with pytest.raises(ModelError) as info:  # read only now: the file went bad after the model was named
        model.encode(["hello"])
    _assert_one_line(info.value)


def test_a_deferred_model_encodes_as_the_eager_one(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m", table())
    eager = loader._load_folder(folder, "m")
    model = load_model(str(folder), deferred=True)
    texts = ["hello world", "foo bar baz", "zzz", ""]
    np.testing.assert_array_equal(model.encode(texts), eager.encode(texts))
    assert model.knows("hello") and not model.knows("zzz")
    assert load_model(str(folder)) is model  # one object per model and process, loaded once


def test_a_model_whose_width_the_header_hides_is_loaded_at_once(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "bad", table())
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelError):  # the same error as an eager load, at the same time
        load_model(str(folder), deferred=True)


def test_a_model_changed_under_a_deferred_one_is_refused(tmp_path: Path) -> None:
    folder = make_model(tmp_path / "m", table(seed=1))
    model = load_model(str(folder), deferred=True)
    make_model(folder, table(seed=2))  # same width, other vectors: another digest
    with pytest.raises(ModelError) as info:
        model.encode(["hello"])
    assert "changed on disk" in _assert_one_line(info.value)


def test_a_query_is_embedded_from_its_own_rows_exactly_as_from_the_whole_table(tmp_path: Path) -> None:
    """A process that embeds a query alone widens only that query's rows of the table; they must be
    bit for bit the whole table's rows (mapping, per-token weights and int8 codes applied the same way)."""
    centroids = np.array([[1, -3], [7, 2], [-5, 4]], dtype=np.int8)
    mapping = np.array([0, 1, 2, 1, 0, 2], dtype=np.int64)
    weights = np.array([0.3, 1.7, 0.01, 2.5, 1e-3, 0.77], dtype=np.float32)
    small = make_model(tmp_path / "q", centroids, normalize=True, weights=weights, mapping=mapping)
    made_up = ["hello world foo", "bar", "baz hello foo bar"]
    real = ["how are routes registered", "OAuth2PasswordBearer", "def parse_header(value): ...", "caf\u00e9 cr\u00e8me"]
    for spec, queries in ((str(small), made_up), (None, real)):  # a made-up table, and the bundled model
        loader._clear_cache()
        model = load_model(spec)
        alone = [model.encode([q])[0] for q in queries]
        assert model._table is None, "a query alone widened the whole table"
        batch = model.encode(queries)  # two texts or more: the whole table
        assert model._table is not None
        for q, one, row in zip(queries, alone, batch, strict=True):
            assert np.array_equal(one, row), q
            assert one.any(), q


def test_a_builder_widens_the_table_before_its_workers_start(tmp_path: Path) -> None:
    model = load_model(str(make_model(tmp_path / "m", table())))
    assert model._table is None
    model.ensure_loaded(table=True)
    assert model._table is not None and model._table.dtype == np.float32


def test_the_tokenizer_is_built_only_for_text_python_cannot_tokenise() -> None:
    """The bundled model's ASCII text is tokenised in Python; building the tokenizer (0.05 s of a cold
    search) waits for the first other text, and then gives the same ids as the untouched tokenizer."""
    loader._clear_cache()
    model = load_model()
    lazy = model._tokenizer
    assert isinstance(lazy, loader._LazyTokenizer) and lazy._built is None
    model.encode(["how are routes registered", "OAuth2PasswordBearer(tokenUrl='token')"])
    assert lazy._built is None
    texts = ["naïve café 日本語", "straße"]
    ids = model._id_lists(texts)
    assert lazy._built is not None
    assert [list(i) for i in ids] == [e.ids for e in loader._batch_encode(model._full_tokenizer(), texts)]
    loader._clear_cache()
    builder = load_model()
    builder.ensure_loaded(table=True)  # what a builder calls before its workers fork: they share both
    assert builder._table is not None and builder._tokenizer._built is not None
