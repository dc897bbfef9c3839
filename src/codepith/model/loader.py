"""Load static (token -> vector) embedding models and embed text with them.

A model is a model2vec folder: ``config.json``, ``model.safetensors`` (``embeddings``, optional
``weights`` and ``mapping``) and ``tokenizer.json``. Encoding is the mean of the token vectors,
optionally L2-normalised, as model2vec's ``StaticModel.encode`` computes it but with punctuation marks
left out (see ``silent_ids``), and with only ``tokenizers``, ``safetensors`` and ``numpy``: torch and
model2vec are never imported here.

Nothing is read at import time; each model is loaded once per process and cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from codepith.errors import ModelError, path_argument
from codepith.files.names import show_name

DEFAULT_MODEL_NAME = "codepith-minilm-256"
ENV_VAR = "CODEPITH_MODEL"
DATA_DIR = Path(__file__).resolve().parent / "data"

_DEFAULT_MAX_LENGTH = 512  # model2vec's default when config.json has no max_length
_MAX_HEADER = 100 << 20  # a safetensors header past this is not one
_TOKEN_BUDGET = 1 << 16  # token rows gathered at once while pooling: bounds memory per step
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_HUB_FILES = ["config.json", "model.safetensors", "tokenizer.json", "modules.json", "MODEL_INFO.json"]
_HUB_FILES_ST = ["config_sentence_transformers.json", "0_StaticEmbedding/*"]

_cache: dict[str, StaticModel] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class ModelInfo:
    """What identifies a model's vectors: an index built with one digest is only valid for that digest."""

    name: str
    digest: str  # sha256 over config, weights and tokenizer files
    dims: int


@dataclass(frozen=True)
class _FastPath:
    """How to normalise outside the tokenizer (whose normalizer was removed) with identical ids."""

    normalizer: Any  # the model's BertNormalizer, applied with normalize_str to non-ASCII text
    lowercase: bool
    clean_text: bool
    raw_tokens: tuple[str, ...]  # added tokens matched before normalisation (e.g. "[PAD]")
    full_json: str  # the untouched tokenizer, for the rare text that contains a raw token
    words: dict[int, str | None] | None = None  # normalise + BertPreTokenizer on ASCII text: translate, then split
    pieces: _WordPiece | None = None  # ... and WordPiece on one such word, here instead of in the tokenizer
    raw_split: re.Pattern[str] | None = None  # the raw tokens, longest first, when plain matching finds them
    raw_ids: dict[str, int] = field(default_factory=dict)  # ... and the id each stands for


@dataclass(frozen=True)
class _WordPiece:
    """WordPiece on one pre-tokenised ASCII word: greedy longest match, as the tokenizer does. A fresh
    index process meets ~12,000 new words in a small repository, and the tokenizer took 15 us a word in
    ``encode_batch_fast`` (its per-text bookkeeping); a few dictionary lookups take about 2."""

    vocab: dict[str, int]
    prefix: str  # continuing_subword_prefix, e.g. "##"
    max_chars: int  # a longer word is the unknown token
    unk: int

    def ids(self, word: str) -> list[int]:
        vocab = self.vocab
        whole = vocab.get(word)
        if whole is not None:
            return [whole]
        if len(word) > self.max_chars:
            return [self.unk]
        out: list[int] = []
        start, n = 0, len(word)
        while start < n:
            end = n
            while end > start:
                got = vocab.get(word[start:end] if start == 0 else self.prefix + word[start:end])
                if got is not None:
                    out.append(got)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return out


@dataclass(frozen=True)
class _Layout:
    config: Path
    weights: Path
    tokenizer: Path
    embedding_key: str


class _LazyTokenizer:
    """The tokenizer built from its JSON on first use, its normalizer taken out (the fast path
    normalises in Python), padding and truncation off (``_limit``). A model whose ASCII text is
    all tokenised in Python (BERT's normalizer and pre-tokenizer, WordPiece) needs it only for other
    text, and building it was 0.05 s of every process that loads the model: a cold CLI search's."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._built: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)

    def get(self) -> Any:
        if self._built is None:
            with self._lock:
                if self._built is None:
                    from tokenizers import Tokenizer

                    try:
                        tokenizer = Tokenizer.from_str(self._text)
                    except Exception as err:  # noqa: BLE001 - tokenizers raises plain Exception for bad files
                        raise ModelError(f"cannot read the model's tokenizer: {_one_line(err)}") from None
                    tokenizer.normalizer = None
                    _limit(tokenizer)
                    self._built = tokenizer
        return self._built


def _limit(tokenizer: Any) -> None:
    """No padding, and no truncation: ``max_length`` counts pooled tokens, so the cut is ours
    (``StaticModel._pooled``), after the silent ones are left out; ``_char_limit`` bounds the text."""
    tokenizer.no_padding()
    tokenizer.no_truncation()


class StaticModel:
    """A token -> vector table plus its tokenizer; ``encode`` mean-pools token vectors per text."""

    def __init__(
        self,
        info: ModelInfo,
        tokenizer: Any,
        table: np.ndarray | _TokenRows,
        *,
        normalize: bool,
        max_length: int | None,
        unk_id: int | None,
        max_chars: int | None = None,
        ascii_fast: _FastPath | None = None,
        silent: frozenset[int] = frozenset(),
    ) -> None:
        self.info = info
        self._tokenizer = tokenizer
        # BERT's normalizer is about half of the tokenising time; for ASCII text str.lower() plus
        # dropping control characters does exactly the same job at C speed.
        self._ascii_fast = ascii_fast
        self._full: Any = None
        # float32 (vocab, dims), per-token weights and vocab mapping folded in; from ``_rows`` when first
        # needed whole (a query's few rows are widened alone)
        self._table: np.ndarray | None = table if isinstance(table, np.ndarray) else None
        self._rows: _TokenRows | None = None if isinstance(table, np.ndarray) else table
        self._normalize = normalize
        self._max_length = max_length
        # ids never pooled: the unknown token and the punctuation marks (``silent_ids``)
        self._silent = silent | {unk_id} if unk_id is not None else silent
        self._max_chars = max_chars
        self._word_ids: dict[str, Sequence[int]] = {}  # normalised ASCII word -> its WordPiece ids
        self._pending: Callable[[], StaticModel] | None = None  # a deferred model's loader (``deferred``)
        self._load_lock = threading.Lock()

    @classmethod
    def deferred(cls, info: ModelInfo, load: Callable[[], StaticModel]) -> StaticModel:
        """A model known by its ``info`` whose tokenizer and table are read on first use (``load``).

        Opening an index needs only the info (the digest names the index); a process that finds nothing
        to embed, such as a second ``codepith index`` that waited for the first, never pays the ~0.1 s
        (a fifth of such a run's CPU) of parsing the tokenizer and widening the table."""
        model = cls(info, None, np.zeros((0, info.dims), np.float32), normalize=False, max_length=None, unk_id=None)
        model._pending = load
        return model

    def ensure_loaded(self, *, table: bool = False) -> None:
        """Read a deferred model's tokenizer and table now (raises ModelError if they cannot be read);
        a builder calls it before forking workers, with ``table`` (widen the whole table and build the
        tokenizer now), so that they share one copy instead of each loading, widening and building one."""
        if self._pending is not None:
            self._load()
        if table:
            self._whole_table()
            if isinstance(self._tokenizer, _LazyTokenizer):
                self._tokenizer.get()

    def _whole_table(self) -> np.ndarray:
        if self._table is None and self._rows is not None:
            self._table = self._rows.table()  # two threads may both widen it: the same table, no harm
        if self._table is None:
            raise ModelError(f"model '{self.info.name}' has no token table")
        return self._table

    def _load(self) -> None:
        with self._load_lock:
            load = self._pending
            if load is None:
                return
            full = load()
            if full.info != self.info:
                raise ModelError(f"model '{self.info.name}' changed on disk while in use; start again")
            for key, value in vars(full).items():
                if key not in ("info", "_word_ids", "_pending", "_load_lock"):
                    setattr(self, key, value)
            self._pending = None

    @property
    def dims(self) -> int:
        return self.info.dims

    def knows(self, word: str) -> bool:
        """True when ``word`` is one whole token of the vocabulary (not pieced together from
        sub-words): the words whose meaning the model has really learnt."""
        if self._pending is not None:
            self.ensure_loaded()
        return len(self._id_lists([word])[0]) == 1

    def encode(self, texts: Sequence[str], batch_size: int = 1024) -> np.ndarray:
        """Embed texts as float32 rows of shape (len(texts), dims); an empty text gives a zero row."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings, not a single string")
        if self._pending is not None:
            self.ensure_loaded()
        if len(texts) == 1:
            return self._encode_batch(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        step = max(1, int(batch_size))
        for begin in range(0, len(texts), step):
            batch = texts[begin : begin + step]
            out[begin : begin + len(batch)] = self._encode_batch(batch)
        return out

    def _token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat token ids (unknown tokens dropped) and the count of ids per text."""
        if self._max_chars is not None:
            texts = [t[: self._max_chars] for t in texts]
        else:
            texts = list(texts)
        id_lists = self._id_lists(texts)
        if len(id_lists) == 1:  # a query: the same ids without the batch bookkeeping
            one = id_lists[0]
            return np.asarray(one, dtype=np.int64), np.asarray([len(one)], dtype=np.int64)
        lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
        flat = np.fromiter(chain.from_iterable(id_lists), dtype=np.int64, count=int(lengths.sum()))
        return flat, lengths

    def _pooled(self, ids: Sequence[int]) -> list[int]:
        """The ids of one text that are pooled: its tokens but the silent ones, at most max_length."""
        silent = self._silent
        kept = [i for i in ids if i not in silent]
        return kept[: self._max_length] if self._max_length is not None else kept

    def _id_lists(self, texts: list[str]) -> list[Sequence[int]]:
        """The pooled token ids of each text (``_pooled``), without special tokens; normalisation runs
        outside the tokenizer when that is exact, and ASCII text is split into words here so that each
        distinct word is tokenised once and punctuation, silent, is never matched at all."""
        # Lone surrogates (undecodable bytes kept from file names or argv) cannot cross into the
        # tokenizer; they become U+FFFD like any other undecodable byte.
        texts = [t if t.isascii() else t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        fp = self._ascii_fast
        if fp is None:
            return [self._pooled(e.ids) for e in _batch_encode(self._tokenizer, texts)]
        out: list[Sequence[int]] = [()] * len(texts)
        words_of: list[tuple[int, list[str]]] = []
        other: list[int] = []
        raw: list[int] = []
        for i, text in enumerate(texts):
            if fp.raw_tokens and any(tok in text for tok in fp.raw_tokens):
                raw.append(i)
            elif text.isascii() and fp.words is not None:
                words_of.append((i, text.translate(fp.words).split()))
            else:
                other.append(i)
        if words_of:
            cache = self._word_ids
            if len(cache) > _WORD_CACHE_LIMIT:
                cache.clear()
            missing = list(set().union(*(words for _, words in words_of)).difference(cache))
            silent = self._silent
            if fp.pieces is not None:
                pieces = fp.pieces.ids
                for word in missing:
                    ids = pieces(word)
                    cache[word] = ids if ids[-1] not in silent else ()  # WordPiece: [unk] or no unk
            else:
                for word, enc in zip(missing, _batch_encode(self._tokenizer, missing), strict=True):
                    cache[word] = [i for i in enc.ids if i not in silent]
            limit = self._max_length
            for i, words in words_of:
                ids = list(chain.from_iterable(map(cache.__getitem__, words)))
                out[i] = ids[:limit] if limit is not None else ids
        if other:
            prepared = [
                _ascii_normalize(texts[i], fp.lowercase, fp.clean_text)
                if texts[i].isascii()
                else fp.normalizer.normalize_str(texts[i])
                for i in other
            ]
            for i, enc in zip(other, _batch_encode(self._tokenizer, prepared), strict=True):
                out[i] = self._pooled(enc.ids)
        if raw:
            self._raw_id_lists(texts, raw, out)
        return out

    def _raw_id_lists(self, texts: list[str], raw: list[int], out: list[Sequence[int]]) -> None:
        """Ids of the texts that hold a raw token ("[PAD]" in a transformer's source). The tokenizer
        takes such a token out of the text before anything else and tokenises the pieces between, so the
        pieces go through the word path here and the token's id goes between them; building the full
        tokenizer for these texts instead took a fresh process 27 ms."""
        fp = self._ascii_fast
        split = None if fp is None else fp.raw_split
        if fp is None or split is None:
            for i, enc in zip(raw, _batch_encode(self._full_tokenizer(), [texts[i] for i in raw]), strict=True):
                out[i] = self._pooled(enc.ids)
            return
        pieces: list[str] = []
        plans: list[tuple[int, list[int]]] = []  # per text: a piece's index, or -1 - the raw token's id
        for i in raw:
            text, at, plan = texts[i], 0, []
            for m in split.finditer(text):
                if m.start() > at:
                    plan.append(len(pieces))
                    pieces.append(text[at : m.start()])
                plan.append(-1 - fp.raw_ids[m.group()])
                at = m.end()
            if at < len(text):
                plan.append(len(pieces))
                pieces.append(text[at:])
            plans.append((i, plan))
        got = self._id_lists(pieces) if pieces else []  # no piece holds a raw token: no recursion
        for i, plan in plans:
            ids: list[int] = []
            for step in plan:
                if step < 0:
                    ids.append(-1 - step)
                else:
                    ids.extend(got[step])
            out[i] = self._pooled(ids)

    def _full_tokenizer(self) -> Any:
        """The tokenizer with its own normalizer, built on first need (texts holding e.g. '[PAD]')."""
        if self._full is None and self._ascii_fast is not None:
            from tokenizers import Tokenizer

            full = Tokenizer.from_str(self._ascii_fast.full_json)
            _limit(full)
            self._full = full
        return self._full

    def _encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        flat, lengths = self._token_ids(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        rows = np.flatnonzero(lengths)
        if rows.size == 0:
            return out
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        # One small gather-and-sum per text: numpy's reduceat along axis 0 of a 2-D array is ~9x
        # slower than this loop (measured: 7.7 s vs 0.9 s for 2M tokens x 256 dims), and each step
        # touches only one text's rows, so memory stays bounded.
        add_reduce = np.add.reduce  # np.sum's own call (its Python wrapper costs as much as a short sum)
        if len(texts) == 1 and self._table is None and self._rows is not None:  # a query: its rows alone
            add_reduce(self._rows.rows(flat), axis=0, out=out[0])
            out[0] /= len(flat)
        else:
            table = self._whole_table()
            for row, begin, n in zip(rows.tolist(), starts[rows].tolist(), lengths[rows].tolist(), strict=True):
                add_reduce(table[flat[begin : begin + n]], axis=0, out=out[row])
                out[row] /= n
        if self._normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out


# BertPreTokenizer on ASCII: split on whitespace, and every punctuation character is a word of its own
# (BERT counts all of ASCII 33-47, 58-64, 91-96 and 123-126 as punctuation). WordPiece then works word
# by word, so tokenising each distinct word once and joining gives the tokenizer's exact ids. The marks
# are silent (``silent_ids``), so only the words between them are matched.
_BERT_PUNCTUATION = frozenset([*range(33, 48), *range(58, 65), *range(91, 97), *range(123, 127)])


def _ascii_words_table(lowercase: bool, clean: bool) -> dict[int, str | None]:
    """``_ascii_normalize`` and the split into words in one ``str.translate``: control characters deleted
    (``clean``), capitals lowered, punctuation made a space, so that ``.split()`` gives the words
    of the normalised text, the runs of neither whitespace nor punctuation, about 4x faster than normalising
    and matching those runs with a pattern."""
    table: dict[int, str | None] = {}
    for c in range(128):
        if clean and _CONTROL_CHARS.match(chr(c)):
            table[c] = None
        elif c in _BERT_PUNCTUATION:
            table[c] = " "
        elif lowercase and chr(c).isupper():
            table[c] = chr(c).lower()
    return table


_WORD_CACHE_LIMIT = 500_000
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _batch_encode(tokenizer: Any, texts: list[str]) -> Any:
    if not texts:
        return []
    encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
    return encode(texts, add_special_tokens=False)


def _ascii_normalize(text: str, lowercase: bool, clean: bool) -> str:
    """BertNormalizer on ASCII text: drop control characters other than tab/CR/LF, then lowercase.

    (Its whitespace mapping and CJK/accent handling change nothing the pre-tokenizer would see.)
    """
    if clean and _CONTROL_CHARS.search(text):
        text = _CONTROL_CHARS.sub("", text)
    return text.lower() if lowercase else text


def _ascii_fast_path(spec: dict[str, Any], text: str) -> _FastPath | None:
    """How to normalise outside the tokenizer when its normalizer is BERT's (the caller then takes it out of
    the tokenizer), or None to keep it. The normalizer applied to other text is made from the same settings."""
    from tokenizers.normalizers import BertNormalizer

    norm = spec.get("normalizer")
    if not isinstance(norm, dict) or norm.get("type") != "BertNormalizer":
        return None
    normalizer = BertNormalizer(
        clean_text=bool(norm.get("clean_text", True)),
        handle_chinese_chars=bool(norm.get("handle_chinese_chars", True)),
        strip_accents=norm.get("strip_accents"),
        lowercase=bool(norm.get("lowercase", True)),
    )
    added = [a for a in spec.get("added_tokens", []) if not a.get("normalized", True) and a.get("content")]
    raw_tokens = tuple(str(a["content"]) for a in added)
    plain = all(not (a.get("single_word") or a.get("lstrip") or a.get("rstrip")) for a in added)
    raw_ids = {str(a["content"]): int(a["id"]) for a in added if isinstance(a.get("id"), int)}
    raw_split = None
    if added and plain and len(raw_ids) == len(added):  # leftmost, longest first: the tokenizer's match
        raw_split = re.compile("|".join(re.escape(t) for t in sorted(raw_ids, key=len, reverse=True)))
    pre = spec.get("pre_tokenizer")
    model = spec.get("model")
    bert_words = (
        isinstance(pre, dict)
        and pre.get("type") == "BertPreTokenizer"
        and isinstance(model, dict)
        and model.get("type") == "WordPiece"
    )
    lowercase, clean = bool(norm.get("lowercase", True)), bool(norm.get("clean_text", True))
    return _FastPath(
        normalizer,
        lowercase,
        clean,
        raw_tokens,
        text,
        _ascii_words_table(lowercase, clean) if bert_words else None,
        _word_piece(model, spec) if bert_words else None,
        raw_split,
        raw_ids,
    )


def _word_piece(model: Any, spec: dict[str, Any]) -> _WordPiece | None:
    """WordPiece in Python when the tokenizer's model says exactly how (else None: the tokenizer does it).
    An added token that is a plain word would be matched before WordPiece, so it keeps the tokenizer."""
    vocab, unk = model.get("vocab"), model.get("unk_token")
    prefix, most = model.get("continuing_subword_prefix", "##"), model.get("max_input_chars_per_word", 100)
    if not isinstance(vocab, dict) or not isinstance(unk, str) or unk not in vocab:
        return None
    if not isinstance(prefix, str) or not isinstance(most, int):
        return None
    if any(str(a.get("content", "")).isalnum() for a in spec.get("added_tokens", [])):
        return None
    return _WordPiece({str(k): int(v) for k, v in vocab.items()}, prefix, most, int(vocab[unk]))


def resolve_model_spec(spec: str | None) -> str:
    """The model to use: the explicit spec, else $CODEPITH_MODEL, else the bundled default."""
    if spec is not None:
        spec = path_argument("model", spec)
    if spec is not None and spec.strip():
        return spec.strip()
    env = os.environ.get(ENV_VAR, "").strip()
    return env or DEFAULT_MODEL_NAME


def load_model(spec: str | None = None, *, deferred: bool = False) -> StaticModel:
    """Load (once per process) the bundled default, a local model2vec folder, or a Hugging Face id.

    ``deferred``: check the folder and read what names the model (its digest, its width) now, the
    tokenizer and the table on first use (``StaticModel.deferred``); a bad tokenizer or table then
    raises ModelError at that use instead of here."""
    resolved = resolve_model_spec(spec)
    with _cache_lock:
        cached = _cache.get(resolved)
        if cached is None:
            cached = _load_uncached(resolved, deferred)
            _cache[resolved] = cached
    if not deferred:
        cached.ensure_loaded()
    return cached


def _load_uncached(spec: str, deferred: bool = False) -> StaticModel:
    if spec == DEFAULT_MODEL_NAME:
        if not (DATA_DIR / "model.safetensors").is_file():
            raise ModelError(f"the bundled model '{DEFAULT_MODEL_NAME}' is missing from {DATA_DIR}")
        return _open_folder(DATA_DIR, DEFAULT_MODEL_NAME, deferred)
    path = Path(spec).expanduser()
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except (OSError, ValueError):  # a name too long for a path, a NUL in it: no such folder
        is_dir = exists = False
    if is_dir:
        return _open_folder(path, _folder_name(path), deferred)
    if exists:
        raise ModelError(f"model path '{_named(spec)}' is not a folder (expected a model2vec model folder)")
    if _HUB_ID.match(spec):
        return _open_folder(_fetch_from_hub(spec), spec, deferred)
    raise ModelError(
        f"no model folder '{_named(spec)}' and it is not a Hugging Face id (owner/name); "
        f"omit --model to use the bundled default '{DEFAULT_MODEL_NAME}'"
    )


def _open_folder(folder: Path, name: str, deferred: bool) -> StaticModel:
    """The model in ``folder``, loaded now or deferred; a folder whose width cannot be read from its
    weights' header is loaded now, so that what is wrong with it is said here."""
    if deferred:
        layout = _find_layout(folder)
        _read_config(layout.config)
        dims = _header_dims(layout)
        if dims is not None:
            info = ModelInfo(name=name, digest=_digest(layout), dims=dims)
            return StaticModel.deferred(info, lambda: _load_folder(folder, name))
    return _load_folder(folder, name)


def _header_dims(layout: _Layout) -> int | None:
    """The embedding width from the safetensors header alone (8 bytes of length, then JSON), or None."""
    try:
        with layout.weights.open("rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            if not 0 < size <= _MAX_HEADER:
                return None
            header = json.loads(fh.read(size))
        shape = header[layout.embedding_key]["shape"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if isinstance(shape, list) and len(shape) == 2 and all(isinstance(n, int) and n > 0 for n in shape):
        return int(shape[1])
    return None


def _folder_name(path: Path) -> str:
    """The name a folder's MODEL_INFO.json gives, else the folder's own name."""
    info = path / "MODEL_INFO.json"
    if info.is_file():
        try:
            name = json.loads(info.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        if isinstance(name, str) and name:
            return name
    return path.resolve().name


def _fetch_from_hub(repo_id: str) -> Path:
    """Download a model2vec repo; any failure (no package, offline, missing repo) is one clear line."""
    hint = f"omit --model to use the bundled default '{DEFAULT_MODEL_NAME}'"
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ModelError(
            f"cannot fetch model '{_named(repo_id)}': huggingface_hub is not installed "
            f"(pip install 'codepith[hub]'); {hint}"
        ) from None
    try:
        folder = snapshot_download(repo_id=repo_id, allow_patterns=_HUB_FILES + _HUB_FILES_ST)
    except Exception:  # noqa: BLE001 - network, auth, missing repo, offline mode: all mean "not fetched"
        raise ModelError(
            f"cannot fetch model '{_named(repo_id)}' from the Hugging Face hub (offline?); {hint}"
        ) from None
    return Path(folder)


def _find_layout(folder: Path) -> _Layout:
    """model2vec's own layout, or the sentence-transformers StaticEmbedding layout it also writes."""
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return _Layout(folder / "config.json", folder / "model.safetensors", folder / "tokenizer.json", "embeddings")
    sub = folder / "0_StaticEmbedding"
    if (sub / "model.safetensors").is_file() and (sub / "tokenizer.json").is_file():
        return _Layout(
            folder / "config_sentence_transformers.json",
            sub / "model.safetensors",
            sub / "tokenizer.json",
            "embedding.weight",
        )
    raise ModelError(f"'{_named(folder)}' is not a model2vec model folder (needs model.safetensors and tokenizer.json)")


def _load_folder(folder: Path, name: str) -> StaticModel:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    layout = _find_layout(folder)
    config = _read_config(layout.config)
    try:
        tensors = load_file(str(layout.weights))
    except (SafetensorError, OSError, ValueError) as err:
        raise ModelError(f"cannot read model weights {_named(layout.weights)}: {_one_line(err)}") from None
    try:
        tokenizer_text = layout.tokenizer.read_text(encoding="utf-8")
        tokenizer_spec = json.loads(tokenizer_text)
    except (OSError, ValueError) as err:
        raise ModelError(f"cannot read tokenizer {_named(layout.tokenizer)}: {_one_line(err)}") from None
    if not isinstance(tokenizer_spec, dict):
        raise ModelError(f"cannot read tokenizer {_named(layout.tokenizer)}: not a tokenizer's JSON object")
    max_length = config.get("max_length", _DEFAULT_MAX_LENGTH)
    max_length = int(max_length) if isinstance(max_length, (int, float)) and max_length > 0 else None
    try:
        fast = _ascii_fast_path(tokenizer_spec, tokenizer_text)
    except (AttributeError, KeyError, TypeError, ValueError) as err:  # a spec of the wrong shape
        raise ModelError(f"cannot read tokenizer {_named(layout.tokenizer)}: {_one_line(err)}") from None
    tokenizer: Any
    if fast is not None and fast.words is not None and fast.pieces is not None:
        # Python tokenises every ASCII text: the tokenizer waits until other text needs it
        tokenizer = _LazyTokenizer(tokenizer_text)
        unk_id: int | None = fast.pieces.unk
    else:
        try:
            tokenizer = Tokenizer.from_str(tokenizer_text)
        except Exception as err:  # noqa: BLE001 - tokenizers raises plain Exception for bad files
            raise ModelError(f"cannot read tokenizer {_named(layout.tokenizer)}: {_one_line(err)}") from None
        _limit(tokenizer)
        if fast is not None:
            tokenizer.normalizer = None
        unk_id = _unk_id(tokenizer, tokenizer_spec)

    vectors = tensors.get(layout.embedding_key)
    if vectors is None or vectors.ndim != 2:
        raise ModelError(f"{_named(layout.weights)} has no 2-D '{layout.embedding_key}' tensor")
    vocab_size = _vocab_size(tokenizer, tokenizer_spec)
    rows = _token_rows(vectors, tensors.get("weights"), tensors.get("mapping"), vocab_size)
    if rows.n < vocab_size:
        raise ModelError(f"model at {_named(folder)} has {rows.n} vectors for {vocab_size} tokens")

    digest = _digest(layout)
    info = ModelInfo(name=name, digest=digest, dims=int(vectors.shape[1]))
    return StaticModel(
        info,
        tokenizer,
        rows,
        normalize=bool(config.get("normalize", False)),
        max_length=max_length,
        unk_id=unk_id,
        max_chars=_char_limit(tokenizer, tokenizer_spec, max_length),
        ascii_fast=fast,
        silent=silent_ids(tokenizer_spec),
    )


def _read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ModelError(f"cannot read model config {_named(path)}: {_one_line(err)}") from None
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class _TokenRows:
    """The token table as stored (vectors, a vocabulary mapping, per-token weights), widened to float32
    rows on demand: a process that embeds only a query or two needs a few dozen rows, and widening the
    whole table took 0.06 s of a cold CLI search (a tenth of it on a small repository)."""

    vectors: np.ndarray
    mapping: np.ndarray | None  # token id -> vector row (None: the same)
    weights: np.ndarray | None  # float32 per token id (None: all 1)

    @property
    def n(self) -> int:
        return len(self.mapping) if self.mapping is not None else len(self.vectors)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """float32 rows of these token ids, each exactly the whole table's (``table``) row."""
        picked = self.vectors[self.mapping[ids] if self.mapping is not None else ids].astype(np.float32)
        if self.weights is not None:
            picked *= self.weights[ids, None]
        return picked

    def table(self) -> np.ndarray:
        """One float32 row per token id: the vector it maps to, times its weight (as model2vec applies them);
        made by ``rows`` itself, so that a query's rows are the table's by construction."""
        return self.rows(np.arange(self.n))


def _token_rows(
    vectors: np.ndarray, weights: np.ndarray | None, mapping: np.ndarray | None, vocab_size: int
) -> _TokenRows:
    if mapping is not None:
        mapping = np.asarray(mapping, dtype=np.int64)
        if mapping.ndim != 1 or mapping.size < vocab_size or (mapping.size and mapping.max() >= len(vectors)):
            raise ModelError("model 'mapping' tensor does not match its vocabulary and vectors")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float32).reshape(-1)
    rows = _TokenRows(vectors, mapping, weights)
    if weights is not None and weights.size < rows.n:
        raise ModelError("model 'weights' tensor is shorter than its vocabulary")
    return rows


def silent_ids(spec: dict[str, Any]) -> frozenset[int]:
    """Ids of the vocabulary's punctuation marks (one character BERT's pre-tokenizer splits off: ASCII
    33-47, 58-64, 91-96, 123-126, or Unicode category P), left out of every mean.

    A mark's row is 1-5% of a word's norm in the bundled model (SIF weighting: they are the commonest
    tokens), so it hardly moves a text's direction, but code is about half marks: leaving them out cut
    the embedding's time by a third, and NDCG@10 moved by -0.0006 to +0.005 on five benchmark sets
    (benchmarks/README.md)."""
    vocab = spec.get("model", {}).get("vocab")
    if not isinstance(vocab, dict):
        return frozenset()
    return frozenset(int(i) for tok, i in vocab.items() if isinstance(i, int) and len(tok) == 1 and _is_mark(tok))


def _is_mark(ch: str) -> bool:
    return ord(ch) in _BERT_PUNCTUATION or unicodedata.category(ch).startswith("P")


def _unk_id(tokenizer: Any, spec: dict[str, Any]) -> int | None:
    """The unknown token's id, dropped before pooling as model2vec does (it carries no meaning)."""
    unk = getattr(tokenizer.model, "unk_token", None)
    if isinstance(unk, str):
        found = tokenizer.token_to_id(unk)
        return int(found) if found is not None else None
    unk_id = spec.get("model", {}).get("unk_id")
    return int(unk_id) if isinstance(unk_id, int) else None


def _vocab_size(tokenizer: Any, spec: dict[str, Any]) -> int:
    """Highest token id + 1, read from the JSON (Tokenizer.get_vocab_size rebuilds the whole map)."""
    vocab = spec.get("model", {}).get("vocab")
    ids = [int(a["id"]) for a in spec.get("added_tokens", []) if isinstance(a.get("id"), int)]
    if isinstance(vocab, dict) and vocab:
        return max([*vocab.values(), *ids]) + 1
    if isinstance(vocab, list) and vocab:
        return max([len(vocab) - 1, *ids]) + 1
    return int(tokenizer.get_vocab_size())


def _char_limit(tokenizer: Any, spec: dict[str, Any], max_length: int | None) -> int | None:
    """Cut texts at max_length x median token length characters before tokenising, like model2vec."""
    if max_length is None:
        return None
    vocab = spec.get("model", {}).get("vocab")
    if isinstance(vocab, dict):
        tokens: set[str] = set(vocab)
    elif isinstance(vocab, list):  # Unigram: [token, score] pairs
        tokens = {str(item[0]) for item in vocab if isinstance(item, list) and item}
    else:
        tokens = set(tokenizer.get_vocab())
    tokens.update(str(a.get("content", "")) for a in spec.get("added_tokens", []))
    median = int(np.median([len(t) for t in tokens])) if tokens else 1
    return max_length * max(median, 1)


def _digest(layout: _Layout) -> str:
    h = hashlib.sha256()
    for path in (layout.config, layout.weights, layout.tokenizer):
        h.update(path.name.encode())
        if path.is_file():
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _named(path: str | os.PathLike[str]) -> str:
    """A model's name or path for an error line: one line, at most 200 characters."""
    return show_name(os.fspath(path), limit=200)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text[:200] or type(err).__name__


def _clear_cache() -> None:
    """Forget loaded models (tests swap model files under the same spec)."""
    with _cache_lock:
        _cache.clear()
