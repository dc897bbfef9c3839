"""The word-cache tokenising path must give exactly the tokenizer's own ids, less the silent ones."""

from __future__ import annotations

import re
import string
import unicodedata

import numpy as np
from tokenizers import Tokenizer

from codepith.model.loader import DATA_DIR, load_model

TEXTS = [
    "def parse_http_response(raw: bytes) -> Response:\n    return Response(raw.decode('utf-8'))\n",
    'class OAuth2PasswordBearer(OAuth2):\n\t"""Bearer tokens; see RFC-6750 §2.1"""',
    "naïve café: non-ASCII text takes the tokenizer's own path",
    "a [PAD] token and [UNK] in raw text",
    "foo[PAD]bar[UNK][PAD]",
    "[PAD]",
    "pad_token = '[PAD]'  # naïve [UNK] café, [pad] is a word, [PA[PAD] half of one",
    " ".join(f"identifier_{i}" for i in range(300)) + " [PAD] past the 512-token limit [UNK]",
    "control\x01chars\x7fare\x0bdropped",
    "x" * 150 + " a word longer than WordPiece accepts",
    "const f = (a,b)=>a+b; // $x->y ?? z || w && v;",
    " ".join(f"identifier_{i}" for i in range(400)),  # longer than the 512-token limit
    "",
    "   \n\t  ",
]


# BertPreTokenizer's words in normalised ASCII text, written here as a pattern: not whitespace, not one of
# the ASCII characters BERT counts as punctuation (33-47, 58-64, 91-96, 123-126).
BERT_ASCII_WORDS = re.compile(r"[^\s!-/:-@\[-`{-~]+")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def test_the_words_table_splits_as_normalising_and_the_pattern_do() -> None:
    """One ``str.translate`` and ``split`` stand for BERT's normaliser (control characters dropped, capitals
    lowered) and its pre-tokenizer on ASCII text, for every ASCII character and each normaliser setting."""
    import random

    from codepith.model.loader import _ascii_words_table

    rng = random.Random(3)
    everything = "".join(map(chr, range(128)))
    texts = [everything, everything[::-1], "control\x01chars\x7fare\x0bdropped\x1cand\x1fsplit"]
    texts += ["".join(rng.choice(everything) for _ in range(rng.randint(0, 40))) for _ in range(2000)]
    for lowercase in (True, False):
        for clean in (True, False):
            table = _ascii_words_table(lowercase, clean)
            for text in texts:
                norm = CONTROL.sub("", text) if clean else text
                norm = norm.lower() if lowercase else norm
                assert text.translate(table).split() == BERT_ASCII_WORDS.findall(norm), (repr(text), lowercase, clean)


def pooled_reference(tokenizer: Tokenizer, ids: list[int], limit: int = 512) -> list[int]:
    """What is pooled of the tokenizer's ids, worked out here independently of the loader: every id but
    the unknown token's and those of one-character punctuation marks, the first ``limit`` of them."""

    def silent(i: int) -> bool:
        tok = tokenizer.id_to_token(i)
        if tok == "[UNK]":
            return True
        return len(tok) == 1 and (tok in string.punctuation or unicodedata.category(tok).startswith("P"))

    return [i for i in ids if not silent(i)][:limit]


def test_word_cache_ids_equal_the_tokenizer() -> None:
    model = load_model(None)
    full = Tokenizer.from_file(str(DATA_DIR / "tokenizer.json"))
    full.no_padding()
    full.no_truncation()
    whole = [list(e.ids) for e in full.encode_batch(TEXTS, add_special_tokens=False)]
    expected = [pooled_reference(full, ids) for ids in whole]
    assert any(len(ids) > len(x) for ids, x in zip(whole, expected, strict=True))  # marks were left out
    for _ in range(2):  # a cold then a warm word cache
        got = [list(ids) for ids in model._id_lists(list(TEXTS))]
        assert got == expected


def test_raw_tokens_need_no_second_tokenizer() -> None:
    """Texts that hold "[PAD]" take the word path around it (a fresh process once spent 27 ms building
    the full tokenizer for them)."""
    model = load_model(None)
    assert model._ascii_fast is not None and model._ascii_fast.raw_split is not None
    model._id_lists(["x = '[PAD]'", "[UNK]", "a [PAD] b"])
    assert model._full is None


def test_encode_is_stable_across_batches_and_cache_state() -> None:
    model = load_model(None)
    one = model.encode(TEXTS)
    model._word_ids.clear()
    two = np.vstack([model.encode([t]) for t in TEXTS])
    assert np.allclose(one, two, atol=1e-6)


def test_python_wordpiece_equals_the_tokenizer_word_by_word() -> None:
    """Every word of this package's own source, and the edges of WordPiece (a word of exactly the
    longest accepted length and one past it, letters no whole piece starts, digits)."""
    from pathlib import Path

    model = load_model(None)
    fast = model._ascii_fast
    assert fast is not None and fast.pieces is not None  # the bundled model takes the Python path
    plain = Tokenizer.from_file(str(DATA_DIR / "tokenizer.json"))
    plain.no_padding()
    plain.no_truncation()
    words: set[str] = {"a" * 100, "b" * 101, "unbelievably", "xqzjvw", "v2beta3", "0123456789" * 3}
    for path in sorted(Path(DATA_DIR).parents[1].rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.isascii():
            words.update(BERT_ASCII_WORDS.findall(text.lower()))
    assert len(words) > 2000
    mismatched = [w for w in sorted(words) if fast.pieces.ids(w) != plain.encode(w, add_special_tokens=False).ids]
    assert mismatched == []


def test_punctuation_marks_are_silent_on_every_path() -> None:
    """A mark changes no embedding: ASCII text (the word path), non-ASCII text (the tokenizer), a text
    holding a raw token, and a query alone (its own rows)."""
    model = load_model(None)
    pairs = [
        ("getUser(name) -> dict[str, int]:", "getUser name dict str int"),
        ("café(x); naïve—«y»", "café x naïve y"),
        ("x = '[PAD]' + y", "x [PAD] y"),
    ]
    for marked, plain in pairs:
        assert np.array_equal(model.encode([marked]), model.encode([plain]))
        assert np.allclose(model.encode([marked, "other"])[0], model.encode([plain, "other"])[0], atol=1e-6)
    assert not np.any(model.encode(["(){}[];,.:"]))  # nothing but marks: nothing to pool
