"""BM25 over integer postings: the textbook behaviour, on bags small enough to reason about."""

from __future__ import annotations

from collections import Counter

import numpy as np

from codepith.index.lexical import BM25, TermCounts, Vocabulary


def bm25(*docs: str) -> BM25:
    bags = []
    for doc in docs:
        c = Counter(doc.split())
        bags.append(TermCounts(tuple(c), tuple(c.values())))
    vocab = Vocabulary()
    p = vocab.encode(bags)
    return BM25(p.ids, p.tfs, p.per_chunk, vocab)


def test_rare_terms_weigh_more_and_absent_terms_score_zero() -> None:
    index = bm25("parse config", "parse token", "parse route", "render view")
    s = index.scores(["parse", "config"])
    assert s[0] > s[1] == s[2] > s[3] == 0.0
    assert index.idf("config") > index.idf("parse")
    assert index.doc_freq("parse") == 3 and index.doc_freq("missing") == 0
    assert not index.scores(["missing"]).any()


def test_term_frequency_saturates_and_long_documents_are_normalised() -> None:
    index = bm25("cache", "cache cache", "cache " * 20, "cache other words here to make it long")
    s = index.scores(["cache"])
    assert s[1] > s[0]  # more occurrences help ...
    assert s[2] < 2.2 * s[0]  # ... but with diminishing returns (k1 saturation)
    assert s[0] > s[3]  # the same single hit counts less in a longer document


def test_vocabulary_ids_survive_growth() -> None:
    vocab = Vocabulary()
    first = vocab.encode([TermCounts(("a", "b"), (1, 2))])
    vocab.encode([TermCounts(("c",), (1,))])
    assert vocab.get("a") == int(first.ids[0]) and vocab.get("c") == 2
    assert np.array_equal(first.per_chunk, [2])
    assert Vocabulary(vocab.terms).get("b") == vocab.get("b")
