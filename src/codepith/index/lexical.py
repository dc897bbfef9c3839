"""BM25 over code-aware tokens, stored as flat numpy postings so a query costs a few vector ops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class TermCounts:
    """One document's bag of tokens: term strings and how often each occurs."""

    terms: tuple[str, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class Postings:
    """A file's chunks as bags of term ids (from its repository's Vocabulary), ready to concatenate."""

    ids: np.ndarray  # int32: each chunk's distinct term ids, chunk after chunk
    tfs: np.ndarray  # float32: their counts
    per_chunk: np.ndarray  # int32: how many entries each chunk holds

    @staticmethod
    def empty() -> Postings:
        return Postings(np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(0, np.int32))


class Vocabulary:
    """Append-only term <-> id table: ids stay valid across refreshes, so unchanged files keep theirs."""

    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.terms: list[str] = list(terms)
        self._ids: dict[str, int] = {t: i for i, t in enumerate(self.terms)}

    def __len__(self) -> int:
        return len(self.terms)

    def get(self, term: str) -> int | None:
        return self._ids.get(term)

    def add(self, term: str) -> int:
        tid = self._ids.get(term)
        if tid is None:
            tid = self._ids[term] = len(self.terms)
            self.terms.append(term)
        return tid

    def encode(self, bags: Sequence[TermCounts]) -> Postings:
        ids = [self.add(t) for bag in bags for t in bag.terms]
        tfs = [c for bag in bags for c in bag.counts]
        return Postings(
            np.asarray(ids, dtype=np.int32),
            np.asarray(tfs, dtype=np.float32),
            np.asarray([len(b.terms) for b in bags], dtype=np.int32),
        )


class BM25:
    """Okapi BM25 over a fixed list of documents; built once from flat arrays, queried many times."""

    def __init__(self, ids: np.ndarray, tfs: np.ndarray, per_doc: np.ndarray, vocab: Vocabulary) -> None:
        self.n_docs = len(per_doc)
        self.vocab = vocab
        doc_ids = np.repeat(np.arange(self.n_docs, dtype=np.int32), per_doc)
        order = np.argsort(ids, kind="stable")
        self._docs = doc_ids[order]
        self._tfs = tfs[order].astype(np.float32, copy=False)
        counts = np.bincount(ids, minlength=len(vocab)) if len(ids) else np.zeros(len(vocab), dtype=np.int64)
        self._offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        lengths = np.bincount(doc_ids, weights=tfs, minlength=self.n_docs).astype(np.float32)
        avg = float(lengths.mean()) if self.n_docs else 1.0
        self._norm = (K1 * (1.0 - B + B * lengths / max(avg, 1e-9))).astype(np.float32)

    def doc_freq(self, term: str) -> int:
        tid = self.vocab.get(term)
        return 0 if tid is None or tid + 1 >= len(self._offsets) else int(self._offsets[tid + 1] - self._offsets[tid])

    def idf(self, term: str) -> float:
        df = self.doc_freq(term)
        return float(np.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5)))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.vocab.get(term)
        if tid is None or tid + 1 >= len(self._offsets):
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
