"""Hybrid retrieval over a Corpus: BM25 and dense lists, fused, then re-ranked with code-aware signals."""

from __future__ import annotations

import heapq

import numpy as np

from codepith.chunks import marks as mark
from codepith.chunks.syntax import FUNCTION_KINDS
from codepith.index.corpus import Corpus
from codepith.index.tokens import STOPWORDS, tokenize
from codepith.model.loader import StaticModel
from codepith.search.companions import companions, has_units
from codepith.search.evidence import Bonuses, gather
from codepith.search.fusion import rrf, top_indices
from codepith.search.issue import analyze_issue
from codepith.search.query import Query, bound_query, parse_query
from codepith.search.ranking import (
    declares,
    file_stem,
    path_match_ratio,
    path_penalty_for,
    path_word_table,
    stem_matches_symbol,
    superseded_folders,
)
from codepith.search.result import SearchResult

MODES = ("hybrid", "lexical", "dense")
CANDIDATES = 100


ALPHA_SYMBOL = 0.3  # dense share of the fusion for symbol queries: exact names are lexical evidence
ALPHA_WORDS = 0.5  # ... for a sentence of ALPHA_MID terms
# Each term more leans a sentence this much toward BM25, each term fewer toward the dense side, up to
# ALPHA_SPAN either way: a long sentence holds enough specific words for BM25 to combine, while its mean
# embedding blurs; two or three words say little lexically and their embedding is sharp. Measured on
# every tuning set: benchmarks/README.md, "Round two, part fourteen".
ALPHA_PER_TERM = 0.1
ALPHA_MID = 4
ALPHA_SPAN = 0.1
COHERENCE = 0.2  # a file with many good chunks lifts its best one, by up to this share of the top score
DEFINITION = 3.0  # a chunk that defines the queried symbol gains this many top scores
EMBEDDED_DEFINITION = 1.5  # ... an identifier named inside a sentence
PATH_WORDS = 1.0  # query words in the file's name or folder, times the share of words matched
# ... but a word in the paths of more than this share of the files (`middleware` in a router whose files sit
# under middleware/, `handler` under Handler/) tells no file from another: it matches none, and still counts
COMMON_PATH_WORD = 0.5
COMMON_MIN_FILES = 10  # ... judged only from this many files (in a smaller tree, half is a file or two)
WIRING = 0.5  # a chunk of only imports/re-exports points at the code; it is not the code
NAMED_WIRING = True  # ... unless the query names its file (websockets.py re-exporting the framework's WebSocket)
QUALIFIED = 1.5  # ... and half again when it lives in the class/module/file the query qualifies it with
DECLARATION = 0.7  # an interface or a facade declares what some other file implements
ONE_WORD = 1.0  # a one-word query the corpus defines by that exact name: its definition gains this many top scores
# ... a word too short to index (``g``, ``z``, ``t``): retrieval has only the dense side, which knows nothing of one
# letter, so its definition is all the evidence there is, as for a symbol
UNINDEXED_WORD = DEFINITION
SATURATION = 0.3  # each further chunk from an already-listed file counts this much less: ten places, not one file
# ... for an issue text, less of a discount: its fix touches several places of one file, which the packet then shows
ISSUE_SATURATION = 0.5
COMPANION = 0.8  # the other half of a top file's unit (foo.h / foo.cpp) rises to this share of its score
COMPANION_FILES = 5  # ... for the first this many files
SUPERSEDED = 0.5  # a file in an older copy of the code the repository also holds in a newer form
NAME_FIELD = 3.0  # BM25F: a word among those of a chunk's defined names counts this many times its body count
ISSUE_NAME_FIELD = 1.0  # ... for an issue's title and code-span words only (its prose never reads the field)
PIECE = 0.5  # a piece of a split definition without its declaring line (body, long comment above): this share
TYPE_FIRST = 0.5  # a Capitalised name both a type and a function define (struct Engine, Engine()): the function's share
USES = 0.5  # a queried symbol the corpus never defines: the few chunks that use it gain this many top scores
USES_MAX = 8  # ... when at most this many do (more, and the word says little about which)
NAMED_FILE = 2.0  # ... and the file named after it (tokenizer/tokenizer.py for "Tokenizer"), this many top scores
SPREAD = 2  # a name a sentence mentions that more files define is a namespace or a concept, not one definition
GENERATED = 0.5  # a file a tool wrote (a Bison parser, protoc output): its source is the grammar or schema


def lexical_scores(corpus: Corpus, query: Query) -> np.ndarray:
    """BM25 of the query's terms, counting a term found among a chunk's defined names more (BM25F):
    ``yield`` in ``fun yield()`` says more than ``yield`` in its body. A search phrase reads the name field
    for every word; an issue only for the words of its title and code spans, which name its subject (its
    prose is context, and weighs half); a symbol query has the definition boost instead."""
    if query.issue:
        sides = [ISSUE_NAME_FIELD if w >= 1.0 else 0.0 for w in query.weights or ()]
        return corpus.bm25.scores(query.terms, query.weights, sides=sides or None)
    return corpus.bm25.scores(query.terms, query.weights, side=0.0 if query.symbol_like else NAME_FIELD)


def dense_share(query: Query, mode: str = "hybrid") -> float:
    """The dense list's weight in the fusion (BM25 has the rest). An issue keeps the sentence weight: its
    length is prose and pasted output, and its evidence (paths, frames, code spans) is scored apart."""
    if mode == "lexical":
        return 0.0
    if mode == "dense":
        return 1.0
    if query.symbol_like:
        return ALPHA_SYMBOL
    if query.issue:
        return ALPHA_WORDS
    lean = ALPHA_PER_TERM * (ALPHA_MID - len(query.terms))
    return ALPHA_WORDS + max(-ALPHA_SPAN, min(ALPHA_SPAN, lean))


def dense_scores(corpus: Corpus, model: StaticModel, query: Query) -> np.ndarray:
    qv = model.encode([query.text])[0]
    if not qv.any():
        return np.zeros(len(corpus), dtype=np.float32)
    return corpus.dense(qv)


def _named_symbols(corpus: Corpus, query: Query) -> list[str]:
    """The names whose definitions the query wants: the symbol itself, identifiers embedded in a
    sentence, and capitalised words that this corpus really defines (``Serializer trait``)."""
    names = list(query.names)
    if not query.symbol_like:
        for word in query.capitalised:
            if word not in names and _names_exactly(corpus, word):
                names.append(word)
    return names


def _names_exactly(corpus: Corpus, name: str) -> bool:
    """Whether some chunk defines or binds this very name, case included (the table is lower-cased)."""
    return any(name in corpus.chunks[i].names for i in corpus.definitions.get(name.lower(), []))


def _one_word_name(corpus: Corpus, query: Query) -> str | None:
    """A one-word query the corpus defines by that exact name (``defdelegate``, ``spawn``): maybe the
    macro or function, maybe the topic (``session``), so its definition gains less than a symbol's."""
    word = query.text.strip()
    if query.symbol_like or not word.isidentifier() or word.lower() in STOPWORDS:
        return None
    return word if _names_exactly(corpus, word) else None


def _boost_definitions(
    corpus: Corpus, query: Query, names: list[str], scores: dict[int, float], unit: float, file_of: dict[int, int]
) -> None:
    """Chunks that define a queried name gain ``unit`` (half again when the file is named after it),
    whether or not retrieval found them: a definition nobody mentions is still the answer.
    Case decides when it can: ``Serialize`` the trait, not every ``fn serialize``."""
    for name in names:
        defs = corpus.definitions.get(name.lower(), [])
        exact = [i for i in defs if name in corpus.chunks[i].names]
        if not exact and not query.symbol_like:
            continue
        if not defs and query.symbol_like:
            _boost_uses(corpus, name, scores, unit * USES / DEFINITION)
            if NAMED_FILE:
                _boost_named_files(corpus, name, scores, unit * NAMED_FILE / DEFINITION, file_of)
            continue
        chosen = exact or defs
        # Ruby's `module Sinatra` reopened in every file, zod's ZodType in v3 and v4: a boost would lift every
        # file that names it, so a sentence's name counts as a definition only where one or two files define
        # it (a header and its implementation). A symbol query still asks for each.
        if SPREAD and not query.symbol_like and len({corpus.chunks[i].file_path for i in chosen}) > SPREAD:
            continue
        demoted = _undeclaring_pieces(corpus, chosen, name) if PIECE < 1.0 and len(chosen) > 1 else set()
        typed = (
            TYPE_FIRST < 1.0
            and name[:1].isupper()
            and not name.isupper()
            and len(chosen) > 1
            and any(corpus.chunks[i].kind in _TYPE_KINDS for i in chosen)
        )
        for idx in chosen:
            path = corpus.chunks[idx].file_path
            bonus = unit * (1.5 if stem_matches_symbol(path, name) else 1.0)
            if query.qualifier and _qualifier_holds(corpus, path, query.qualifier):
                bonus *= QUALIFIED
            if idx in demoted:
                bonus *= PIECE
            if typed and corpus.chunks[idx].kind in FUNCTION_KINDS:
                bonus *= TYPE_FIRST
            scores[idx] = scores.get(idx, 0.0) + bonus


_TYPE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "type", "union", "record", "object", "protocol"}
)


def _undeclaring_pieces(corpus: Corpus, chosen: list[int], name: str) -> set[int]:
    """Of the chunks defining ``name``, those in a file where another of them holds the declaring line
    and they do not (a file whose pieces show none keeps them all: the rule cannot tell there). Only files
    with two or more of them are read, so a name defined in a thousand files costs no scan of each."""
    by_file: dict[str, list[int]] = {}
    for idx in chosen:
        by_file.setdefault(corpus.chunks[idx].file_path, []).append(idx)
    out: set[int] = set()
    for pieces in by_file.values():
        if len(pieces) > 1:
            plain = [i for i in pieces if not declares(corpus.chunks[i].content, name)]
            if len(plain) < len(pieces):
                out.update(plain)
    return out


def _boost_uses(corpus: Corpus, name: str, scores: dict[int, float], bonus: float) -> None:
    """A symbol defined outside the repository (a library's, or one the chunker cannot see, such as a
    C variable with a huge initialiser): the chunks holding it whole are what the user can look at."""
    whole = tokenize(name)
    if not whole or bonus <= 0:
        return
    ids = corpus.bm25.postings(whole[0])[0]
    if 0 < len(ids) <= USES_MAX:
        for idx in ids.tolist():
            scores[idx] = scores.get(idx, 0.0) + bonus


def _boost_named_files(
    corpus: Corpus, name: str, scores: dict[int, float], bonus: float, file_of: dict[int, int]
) -> None:
    """A symbol the repository never defines (a library's class it wraps, ``Tokenizer``): a module named
    after it is where a reader looks first. Its best chunk among the candidates gains ``bonus``."""
    files = corpus.files
    for f, idx in _best_per_file(scores, _files_of(corpus, scores, file_of)).items():
        if stem_matches_symbol(files[f], name):
            scores[idx] += bonus


def _qualifier_holds(corpus: Corpus, path: str, qualifier: str) -> bool:
    """``Router::gatherRouteMiddleware``, ``stringx.split``, ``Enum.reduce_while``: the file is named
    after the qualifier or defines it (the class or module the method lives in)."""
    if stem_matches_symbol(path, qualifier):
        # ``Elements.java`` stands for ``Element`` only when no file is named ``Element`` itself
        stems = corpus.derived("stems", _stems, of_paths=True)
        return file_stem(path) == qualifier.lower() or qualifier.lower() not in stems
    return any(corpus.chunks[i].file_path == path for i in corpus.definitions.get(qualifier.lower(), []))


def _stems(corpus: Corpus) -> frozenset[str]:
    return frozenset(file_stem(f) for f in corpus.files)


def _files_of(corpus: Corpus, scores: dict[int, float], known: dict[int, int] | None = None) -> dict[int, int]:
    """Each candidate's file number, gathered in one array read (a numpy scalar read per chunk costs more
    than the rest of the re-ranking); ``known`` numbers are kept and only the others read."""
    todo = list(scores) if known is None else [i for i in scores if i not in known]
    got = dict(known or {})
    if todo:
        keys = np.asarray(todo, dtype=np.int64)
        got.update(zip(todo, corpus.file_of_chunk[keys].tolist(), strict=True))
    return got


def _best_per_file(scores: dict[int, float], file_of: dict[int, int]) -> dict[int, int]:
    """Each file's best-scored candidate (the first of equals)."""
    best: dict[int, int] = {}
    for idx, s in scores.items():
        f = file_of[idx]
        if f not in best or s > scores[best[f]]:
            best[f] = idx
    return best


def _boost_coherent_files(corpus: Corpus, scores: dict[int, float], top: float, file_of: dict[int, int]) -> None:
    file_sum: dict[int, float] = {}
    for idx, s in scores.items():
        f = file_of[idx]
        file_sum[f] = file_sum.get(f, 0.0) + s
    most = max(file_sum.values())
    for f, idx in _best_per_file(scores, file_of).items():
        scores[idx] += COHERENCE * top * file_sum[f] / most


def _boost_path_words(
    corpus: Corpus, query: Query, scores: dict[int, float], top: float, file_of: dict[int, int]
) -> None:
    keywords = tuple(query.keywords)
    files = corpus.files
    asked = sum(1 for k in keywords if len(k) > 2)  # the words path_match_ratio counts
    if COMMON_PATH_WORD < 1.0 and len(files) >= COMMON_MIN_FILES:
        table = corpus.derived("path_words", lambda c: path_word_table(c.files), of_paths=True)
        keywords = tuple(k for k in keywords if len(k) > 2 and table.share(k) <= COMMON_PATH_WORD)
    if not keywords:
        return
    scale = len([k for k in keywords if len(k) > 2]) / max(1, asked)  # a common word still counts as asked
    by_file: dict[int, float] = {}
    for idx in scores:
        f = file_of[idx]
        ratio = by_file.get(f)
        if ratio is None:
            ratio = by_file[f] = path_match_ratio(files[f], keywords) * scale
        if ratio >= 0.1:
            scores[idx] += PATH_WORDS * top * ratio


def _apply_evidence(
    corpus: Corpus, bonuses: Bonuses, scores: dict[int, float], lex: np.ndarray | None, top: float
) -> None:
    """An issue's clues: chunk bonuses as they come; a file bonus goes to that file's best chunk so far
    (or, when retrieval found none of it, its best lexical match)."""
    for idx, amount in bonuses.chunks.items():
        scores[idx] = scores.get(idx, 0.0) + amount * top
    for path, amount in bonuses.files.items():
        members = corpus.chunk_indices(path)
        if not members:
            continue
        held = [i for i in members if i in scores]
        if held:
            best = max(held, key=lambda i: scores[i])
        elif lex is not None:
            best = max(members, key=lambda i: float(lex[i]))
        else:
            best = members[0]
        scores[best] = scores.get(best, 0.0) + amount * top


def _raise_companions(corpus: Corpus, scores: dict[int, float], lex: np.ndarray | None) -> None:
    """The other half of a leading file's unit joins it: its chunk that defines a name the leading
    chunk holds (the definition of a declaration), else its best-scored or best lexical chunk."""
    leaders: list[tuple[int, float]] = []
    seen: set[str] = set()
    for idx, s in heapq.nlargest(4 * COMPANION_FILES, scores.items(), key=lambda t: (t[1], -t[0])):
        path = corpus.chunks[idx].file_path
        if path in seen:
            continue
        seen.add(path)
        leaders.append((idx, s))
        if len(leaders) >= COMPANION_FILES:
            break
    for idx, s in leaders:
        names = set(corpus.chunks[idx].symbols)
        for other in companions(corpus, corpus.chunks[idx].file_path):
            members = corpus.chunk_indices(other)
            if not members:
                continue
            pool = [i for i in members if names & set(corpus.chunks[i].symbols)] or members
            pick = max(pool, key=lambda i: (scores.get(i, 0.0), float(lex[i]) if lex is not None else 0.0, -i))
            if scores.get(pick, 0.0) < COMPANION * s:
                scores[pick] = COMPANION * s


def _select(
    corpus: Corpus,
    scores: dict[int, float],
    top_k: int,
    file_of: dict[int, int] | None,
    saturation: float,
) -> list[tuple[float, int]]:
    """Best first, each further chunk of an already-chosen file discounted, so ten results show
    several places rather than one file ten times."""
    file_of = _files_of(corpus, scores, file_of)
    keys = np.fromiter(scores, dtype=np.int64, count=len(scores))
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    order = np.lexsort((keys, -values))  # by score, ties by index
    per_file: dict[int, int] = {}
    chosen: list[tuple[float, int]] = []
    best: list[float] = []  # min-heap of the top_k effective scores so far; its root is the bar to beat
    for idx, s in zip(keys[order].tolist(), values[order].tolist(), strict=True):
        if len(best) >= top_k and s <= best[0]:
            break  # discounts only lower scores, and the rest are lower already
        f = file_of[idx]
        n = per_file.get(f, 0)
        eff = s * (saturation**n)
        per_file[f] = n + 1
        chosen.append((eff, idx))
        if len(best) < top_k:
            heapq.heappush(best, eff)
        elif eff > best[0]:
            heapq.heapreplace(best, eff)
    chosen.sort(key=lambda t: (-t[0], t[1]))
    return chosen[:top_k]


def search(
    corpus: Corpus,
    model: StaticModel,
    text: str,
    top_k: int = 10,
    *,
    mode: str = "hybrid",
) -> list[SearchResult]:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}")
    text, _ = bound_query(text)  # bounded cost whatever the caller passes; Index.search_notes says so
    query = parse_query(text)
    if not len(corpus) or top_k <= 0 or not text.strip():
        return []
    lex_rank = np.empty(0, dtype=np.int64)
    dense_rank = np.empty(0, dtype=np.int64)
    lex = None
    if mode in ("hybrid", "lexical") and query.terms:
        lex = lexical_scores(corpus, query)
        lex_rank = top_indices(lex, CANDIDATES, positive_only=True)
    if mode in ("hybrid", "dense"):
        dense_rank = top_indices(dense_scores(corpus, model, query), CANDIDATES, positive_only=True)
    alpha = dense_share(query, mode)
    scores = rrf([lex_rank, dense_rank], [1.0 - alpha, alpha])
    if not scores:
        return []
    if mode == "hybrid":
        top = max(scores.values())
        file_of = _files_of(corpus, scores)
        _boost_coherent_files(corpus, scores, top, file_of)
        if query.issue:
            _apply_evidence(corpus, gather(corpus, analyze_issue(text)), scores, lex, top)
        else:
            names = _named_symbols(corpus, query)
            word = _one_word_name(corpus, query) if ONE_WORD else None
            if word:
                unit = top * (ONE_WORD if query.terms else UNINDEXED_WORD)
                _boost_definitions(corpus, query, [word], scores, unit, file_of)
            if names:
                unit = top * (DEFINITION if query.symbol_like else EMBEDDED_DEFINITION)
                _boost_definitions(corpus, query, names, scores, unit, file_of)
        file_of = _files_of(corpus, scores, file_of)  # the chunks the boosts brought in as well
        if not query.symbol_like:
            _boost_path_words(corpus, query, scores, top, file_of)
        penalty = path_penalty_for(query)
        marks = corpus.marks
        files = corpus.files
        old = corpus.derived("superseded", lambda c: superseded_folders(c.files), of_paths=True)
        by_file: dict[int, float] = {}
        named: dict[int, bool] = {}
        keys = list(scores)
        # the candidates' marks as Python ints in one read: a numpy scalar per chunk cost a tenth of a search
        kinds = marks[np.asarray(keys, dtype=np.int64)].tolist()
        for idx, kind in zip(keys, kinds, strict=True):
            f = file_of[idx]
            factor = by_file.get(f)
            if factor is None:
                factor = penalty(files[f]) * (SUPERSEDED if old and _under(files[f], old) else 1.0)
                if kind & mark.GENERATED:
                    factor *= GENERATED
                by_file[f] = factor
            wiring = False
            if kind & mark.WIRING:
                holds = named.get(f)
                if holds is None:
                    holds = named[f] = _named_file(files[f], query)
                wiring = not holds
            scores[idx] *= factor * (WIRING if wiring else 1.0)
        if not query.symbol_like:
            for idx, kind in zip(keys, kinds, strict=True):
                if kind & mark.DECLARATION:
                    scores[idx] *= DECLARATION
        if COMPANION and has_units(corpus):
            _raise_companions(corpus, scores, lex)
        chosen = _select(corpus, scores, top_k, file_of, ISSUE_SATURATION if query.issue else SATURATION)
    else:
        chosen = sorted(((s, i) for i, s in scores.items()), key=lambda t: (-t[0], t[1]))[:top_k]
    lex_ids, dense_ids = lex_rank.tolist(), dense_rank.tolist()
    results = []
    for s, idx in chosen:
        chunk = corpus.chunk(idx)
        results.append(
            SearchResult(
                chunk=chunk,
                score=float(s),
                lexical_rank=_position(lex_ids, idx),
                dense_rank=_position(dense_ids, idx),
                path_match=path_match_ratio(chunk.file_path, query.keywords) > 0,
            )
        )
    return results


def _named_file(path: str, query: Query) -> bool:
    """Whether a sentence query names this file (``websocket`` for ``websockets.py``): a module that only
    re-exports what another package implements is then the repository's answer, not a pointer past it."""
    if not NAMED_WIRING or query.symbol_like:
        return False
    return any(len(k) > 2 and stem_matches_symbol(path, k) for k in query.keywords)


def _under(path: str, folders: frozenset[str]) -> bool:
    i = path.find("/")
    while i != -1:
        if path[:i] in folders:
            return True
        i = path.find("/", i + 1)
    return False


def _position(ids: list[int], idx: int) -> int | None:
    try:
        return ids.index(idx)
    except ValueError:
        return None


def related(corpus: Corpus, chunk_index: int, top_k: int = 5) -> list[SearchResult]:
    """Chunks most like the given one: dense similarity, with shared rare identifiers as lexical evidence."""
    if not len(corpus):
        return []
    vec = corpus.vector(chunk_index)
    dense = corpus.dense(vec).copy()  # the corpus keeps its scores read-only
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
