"""BM25 over code-aware tokens, stored as flat numpy postings so a query costs a few vector ops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class TermCounts:
    """One document's bag of tokens: term strings and how often each occurs."""

    terms: tuple[str, ...]
    counts: tuple[int, ...]

    @staticmethod
    def from_tokens(tokens: Iterable[str]) -> TermCounts:
        c = Counter(tokens)
        return TermCounts(tuple(c.keys()), tuple(c.values()))

    def plus(self, other: TermCounts) -> TermCounts:
        merged = dict(zip(self.terms, self.counts))
        for t, c in zip(other.terms, other.counts):
            merged[t] = merged.get(t, 0) + c
        return TermCounts(tuple(merged), tuple(merged.values()))

    @property
    def length(self) -> int:
        return sum(self.counts)


class BM25:
    """Okapi BM25 over a fixed list of documents; built once, queried many times."""

    def __init__(self, docs: Sequence[TermCounts]) -> None:
        self.n_docs = len(docs)
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(self.n_docs, dtype=np.float32)
        for d, doc in enumerate(docs):
            for term, count in zip(doc.terms, doc.counts):
                tid = vocab.setdefault(term, len(vocab))
                term_ids.append(tid)
                doc_ids.append(d)
                tfs.append(count)
            lengths[d] = doc.length
        self.vocab = vocab
        t = np.asarray(term_ids, dtype=np.int64)
        order = np.argsort(t, kind="stable")
        self._docs = np.asarray(doc_ids, dtype=np.int32)[order]
        self._tfs = np.asarray(tfs, dtype=np.float32)[order]
        self._offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.add.at(self._offsets, t + 1, 1) if len(t) else None
        self._offsets = np.cumsum(self._offsets)
        avg = float(lengths.mean()) if self.n_docs else 1.0
        self._norm = (K1 * (1.0 - B + B * lengths / max(avg, 1e-9))).astype(np.float32)

    def doc_freq(self, term: str) -> int:
        tid = self.vocab.get(term)
        return 0 if tid is None else int(self._offsets[tid + 1] - self._offsets[tid])

    def idf(self, term: str) -> float:
        df = self.doc_freq(term)
        return float(np.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5)))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.vocab.get(term)
        if tid is None:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
        lo, hi = self._offsets[tid], self._offsets[tid + 1]
        return self._docs[lo:hi], self._tfs[lo:hi]

    def scores(self, terms: Sequence[str], weights: Sequence[float] | None = None) -> np.ndarray:
        """Dense score vector over all documents (zeros where no term occurs)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        for i, term in enumerate(terms):
            docs, tf = self.postings(term)
            if not len(docs):
                continue
            w = self.idf(term) * (1.0 if weights is None else weights[i])
            out[docs] += w * tf * (K1 + 1.0) / (tf + self._norm[docs])
        return out
