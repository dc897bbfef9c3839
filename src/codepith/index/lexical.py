"""BM25's constants and the bag of tokens a chunk contributes; the scoring itself runs over the segment
store's postings (``index/corpus.py``, ``SegmentBM25``)."""

from __future__ import annotations

from dataclasses import dataclass

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class TermCounts:
    """One document's bag of tokens: term strings and how often each occurs, and its BM25 length (the
    counts of its body terms: the name field's, marked and last in the bag, have no share in it)."""

    terms: tuple[str, ...]
    counts: tuple[int, ...]
    length: int
