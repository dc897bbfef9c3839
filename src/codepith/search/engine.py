"""Hybrid retrieval over a Corpus: BM25 and dense lists, fused, then re-ranked with code-aware signals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from codepith.index.corpus import Corpus
from codepith.model.loader import StaticModel
from codepith.search.fusion import rrf, top_indices
from codepith.search.query import Query, parse_query
from codepith.search.ranking import definition_boost, path_penalty
from codepith.search.result import SearchResult

MODES = ("hybrid", "lexical", "dense")
CANDIDATES = 100


def lexical_scores(corpus: Corpus, query: Query) -> np.ndarray:
    scores = corpus.bm25.scores(query.terms)
    if len(corpus.files) and query.terms:
        # Path words lift every chunk of the matching file, a little.
        file_scores = corpus.path_bm25.scores(query.terms)
        if file_scores.any():
            scores = scores + 0.3 * file_scores[corpus.file_of_chunk]
    return scores


def dense_scores(corpus: Corpus, model: StaticModel, query: Query) -> np.ndarray:
    qv = model.encode([query.text])[0]
    if not qv.any():
        return np.zeros(len(corpus), dtype=np.float32)
    return corpus.vectors @ qv


def search(
    corpus: Corpus,
    model: StaticModel,
    text: str,
    top_k: int = 10,
    *,
    mode: str = "hybrid",
    exclude: Sequence[int] = (),
) -> list[SearchResult]:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}")
    query = parse_query(text)
    if not len(corpus) or top_k <= 0 or not text.strip():
        return []
    lex_rank = np.empty(0, dtype=np.int64)
    dense_rank = np.empty(0, dtype=np.int64)
    if mode in ("hybrid", "lexical") and query.terms:
        lex = lexical_scores(corpus, query)
        lex_rank = top_indices(lex, CANDIDATES, positive_only=True)
    if mode in ("hybrid", "dense"):
        dense = dense_scores(corpus, model, query)
        dense_rank = top_indices(dense, CANDIDATES, positive_only=True)
    w_lex = 1.0
    if mode == "hybrid" and query.symbol_like:
        w_lex = 2.0
    fused = rrf([lex_rank, dense_rank], [w_lex, 1.0])
    lex_pos = {int(i): r for r, i in enumerate(lex_rank.tolist())}
    dense_pos = {int(i): r for r, i in enumerate(dense_rank.tolist())}
    path_hits = set()
    if query.terms and len(corpus.files):
        path_scores = corpus.path_bm25.scores(query.terms)
        path_hits = set(np.flatnonzero(path_scores > 0).tolist())
    excluded = set(exclude)
    scored: list[tuple[float, int]] = []
    for idx, s in fused.items():
        if idx in excluded:
            continue
        chunk = corpus.chunks[idx]
        if mode == "hybrid":
            s *= definition_boost(chunk, query) * path_penalty(chunk.file_path, query)
        scored.append((s, idx))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out = []
    for s, idx in scored[:top_k]:
        out.append(
            SearchResult(
                chunk=corpus.chunks[idx],
                score=float(s),
                lexical_rank=lex_pos.get(idx),
                dense_rank=dense_pos.get(idx),
                path_match=int(corpus.file_of_chunk[idx]) in path_hits,
            )
        )
    return out


def related(corpus: Corpus, chunk_index: int, top_k: int = 5) -> list[SearchResult]:
    """Chunks most like the given one: dense similarity, with shared rare identifiers as lexical evidence."""
    if not len(corpus):
        return []
    vec = corpus.vectors[chunk_index]
    dense = corpus.vectors @ vec
    dense[chunk_index] = -np.inf
    dense_rank = top_indices(dense, CANDIDATES)
    terms = corpus.chunks[chunk_index].symbols
    lex_rank = np.empty(0, dtype=np.int64)
    if terms:
        lex = corpus.bm25.scores([t.lower() for t in terms])
        lex[chunk_index] = 0
        lex_rank = top_indices(lex, CANDIDATES, positive_only=True)
    fused = rrf([dense_rank, lex_rank], [1.0, 0.5])
    fused.pop(chunk_index, None)
    best = sorted(fused.items(), key=lambda t: (-t[1], t[0]))[:top_k]
    return [SearchResult(chunk=corpus.chunks[i], score=float(s)) for i, s in best]
