"""BM25 over the segment store's postings: the textbook behaviour, on one-chunk files small enough to
reason about."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from conftest import write

import codepith
from codepith.index.corpus import Corpus
from codepith.index.tokens import query_terms


def t(word: str) -> str:
    """The index's token for a word (``parse`` is stored as ``pars``)."""
    (term,) = query_terms(word)
    return term


def bm25_corpus(tmp_path: Path, model, *docs: str) -> tuple[Corpus, list[int]]:  # type: ignore[no-untyped-def]
    """One file per document (``x = a + b``), so each is one chunk; returns the corpus and their numbers."""
    files = {f"d{i}.py": "x = " + " + ".join(doc.split()) + "\n" for i, doc in enumerate(docs)}
    write(tmp_path, files)
    corpus = codepith.Index.from_path(tmp_path, model=model).corpus
    return corpus, [corpus.chunk_indices(f"d{i}.py")[0] for i in range(len(docs))]


def test_rare_terms_weigh_more_and_absent_terms_score_zero(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    corpus, d = bm25_corpus(tmp_path, model, "parse config", "parse token", "parse route", "render view")
    s = corpus.bm25.scores([t("parse"), t("config")])
    assert s[d[0]] > s[d[1]] == s[d[2]] > s[d[3]] == 0.0
    assert corpus.bm25.idf(t("config")) > corpus.bm25.idf(t("parse"))
    assert corpus.bm25.doc_freq(t("parse")) == 3 and corpus.bm25.doc_freq("missing") == 0
    assert not corpus.bm25.scores(["missing"]).any()


def test_term_frequency_saturates_and_long_documents_are_normalised(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    docs = ("cache", "cache cache", "cache " * 20, "cache other words here to make it long")
    corpus, d = bm25_corpus(tmp_path, model, *docs)
    s = corpus.bm25.scores([t("cache")])
    assert s[d[1]] > s[d[0]]  # more occurrences help ...
    assert s[d[2]] < 2.2 * s[d[0]]  # ... but with diminishing returns (k1 saturation)
    assert s[d[0]] > s[d[3]]  # the same single hit counts less in a longer document


def test_postings_list_the_chunks_that_hold_a_term(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    corpus, d = bm25_corpus(tmp_path, model, "parse parse config", "render view", "parse")
    docs, tfs = corpus.bm25.postings(t("parse"))
    assert docs.tolist() == sorted([d[0], d[2]]) and np.array_equal(tfs[np.argsort(docs)], [2.0, 1.0])


def test_one_part_identifiers_expand_as_the_split_says() -> None:
    """``_expand`` skips the split for an identifier of one part (``request``, ``Request``, ``HTTP``,
    ``404``); every identifier of this package's source must still get the split's tokens."""
    from codepith.index import tokens

    def split(ident: str) -> list[str]:  # snake_case pieces, each cut at case and digit changes
        part = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
        return [m.lower() for piece in ident.split("_") for m in part.findall(piece)]

    def by_split(ident: str) -> tuple[str, ...]:
        whole, parts = ident.lower(), split(ident)
        if len(parts) > 1 or (parts and parts[0] != whole):
            return (whole, *(tokens.stem(p) for p in parts if len(p) > 1))
        return (tokens.stem(whole),) if (len(whole) > 1 or whole.isdigit()) else ()

    idents = {"a", "X", "Ab", "aB", "ABc", "HTTPServer", "HTTP", "Request", "requests", "v2", "404", "_", "__init__"}
    idents |= {"AB_Cd", "HTTP_Server", "x_Y_z", "_aB_", "a__B", "ABCDef_GHi", "getHTTP_Response2x", "__", "A_", "_9a"}
    for path in Path(tokens.__file__).parents[1].rglob("*.py"):
        idents.update(tokens.identifiers(path.read_text(encoding="utf-8")))
    assert len(idents) > 2000
    tokens._EXPANSIONS.clear()
    assert [i for i in sorted(idents) if tokens._expand(i) != by_split(i)] == []
    assert [i for i in sorted(idents) if tokens.split_identifier(i) != split(i)] == []


def test_token_counts_equal_the_tokens_of_the_identifiers_found_by_the_pattern() -> None:
    """``token_counts`` cuts a text at the characters no identifier holds (``_APART``) and counts each
    word's tokens; counts and key order must be those of ``tokenize`` (the identifier pattern over the
    whole text), whatever the text holds: digits before letters, characters outside ASCII, lone
    surrogates, and also once its memo is full."""
    import random
    from collections import Counter

    from codepith.index import tokens

    texts = [
        "0x1F 123abc a1b2 9_lives _9 __init__ x1F",
        "café naïve→ok 名前 = f(x)\u00a0y\u2028z ok\x1cthen",
        "bad\udcffbytes here\udcff",
        "parseHTTPResponse_v2(req) -> HTTPServer.get_json; 404 // TODO",
    ]
    for path in sorted(Path(tokens.__file__).parents[1].rglob("*.py"))[:40]:
        texts.append(path.read_text(encoding="utf-8"))
    rng = random.Random(7)
    alphabet = "aZ_09 \t\n.-(é名\u00a0\x1c\x0b$@"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(300)]

    def check() -> None:
        for text in texts:
            want = Counter(tokens.tokenize(text))
            got = tokens.token_counts(text)
            assert got == want and list(got) == list(want), text[:80]

    check()
    saved = dict(tokens._EXPANSIONS)
    try:  # a full memo: nothing new is kept, so every text takes the fallback
        tokens._EXPANSIONS.clear()
        tokens._EXPANSIONS.update({f"filler{i}": () for i in range(500_000)})
        check()
    finally:
        tokens._EXPANSIONS.clear()
        tokens._EXPANSIONS.update(saved)
