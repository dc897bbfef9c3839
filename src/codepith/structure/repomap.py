"""Which definitions of a repository matter most: PageRank over a file graph of name references.

A file that uses a name some other file defines gets an edge to that file, weighted by how often it
uses it (square-rooted, so one chatty file does not decide), less for private names (``_x``) and for
names defined in many files (``get``, ``run``), more for names the caller is focused on. PageRank
over that graph, optionally personalised toward focus files, scores the files; each file's score
flows out along its edges, and what arrives at (file, name) is that definition's importance. The
idea is aider's repository map; the weights and code here are codepith's.

The graph is kept as two tables, never as its edges: what each file uses (file, name, count) and what
each file defines (file, name). An edge is a use of a name joined with each of its other definers, so
a name defined in a thousand files (``probe``, ``init`` in the kernel) would make a thousand edges per
use: listing them took the kernel's map 135 s and 7.8 GB. A walk step instead sums, per name, what its
users send (one pass over the uses) and hands each definer its share (one pass over the definitions),
the definer's own use of the name taken back out: the same flow, in time and memory linear in the
tables. The tables depend on the indexed text only, so ``ReferenceGraph`` is made once per index
generation (and can be saved beside the index); the focus and the walk are redone per call.
"""

from __future__ import annotations

import os
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np

from codepith.chunks.chunk import Chunk

DAMPING = 0.85
ITERATIONS = 40
MIN_NAME_CHARS = 3  # shorter names (i, x, id) are too common to mean a reference
COMMON_DEFINERS = 5  # a name defined in more files than this is a weak reference
PRIVATE_WEIGHT = 0.1
COMMON_WEIGHT = 0.1
FOCUS_WEIGHT = 10.0
FOCUS_FILE_BOOST = 3.0  # a focus file's definitions score up to this many times more on top of their rank
DISTINCT_WEIGHT = 10.0  # a long compound name (snake_case, camelCase) is a deliberate reference
DISTINCT_CHARS = 8
DEMOTED_WEIGHT = 0.05  # definitions in tests and examples: used by nothing that ships

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
GRAPH_FILE = "refgraph.npz"  # a saved graph, in the index's folder
_SEP = "\0"


@dataclass(frozen=True)
class RankedName:
    """A name defined in ``path``, with its share of the repository's reference rank."""

    path: str
    name: str
    score: float


def _distinct(name: str) -> bool:
    core = name.strip("_")
    compound = "_" in core or (any(c.isupper() for c in core[1:]) and any(c.islower() for c in core))
    return compound and len(core) >= DISTINCT_CHARS


def _weight(name: str, definers: int, focus: frozenset[str]) -> float:
    weight = 1.0 / definers  # an ambiguous name's reference is shared among the files that define it
    if _distinct(name):
        weight *= DISTINCT_WEIGHT
    if name.startswith("_"):
        weight *= PRIVATE_WEIGHT
    if definers > COMMON_DEFINERS:
        weight *= COMMON_WEIGHT
    if name.lower() in focus:
        weight *= FOCUS_WEIGHT
    return weight


@dataclass(frozen=True)
class ReferenceGraph:
    """What every indexed file defines and uses, by number: ``files`` sorted, ``names`` the defined ones."""

    files: list[str]
    names: list[str]
    def_file: np.ndarray  # int32 (D,): (file, name) of each definition, each pair once
    def_name: np.ndarray  # int32 (D,)
    use_file: np.ndarray  # int32 (U,): a file's uses of a name some file defines, each pair once, sorted by file
    use_name: np.ndarray  # int32 (U,)
    use_count: np.ndarray  # float64 (U,)
    name_weight: np.ndarray  # float64 (M,): ``_weight`` of each name, without a focus
    name_rank: np.ndarray  # int64 (M,): each name's place in sorted order (ties of a ranking)


def _tables(
    files: list[str], names: list[str], def_file: np.ndarray, def_name: np.ndarray,
    use_file: np.ndarray, use_name: np.ndarray, use_count: np.ndarray,
) -> ReferenceGraph:  # fmt: skip
    """The graph, with what depends on it alone: each name's weight and sort place, and without the uses
    that reach no other file (a name whose only definer is the file using it: a static helper)."""
    m = len(names)
    definers = np.bincount(def_name, minlength=m)
    single = np.full(m, -1, np.int64)
    alone = definers[def_name] == 1
    single[def_name[alone]] = def_file[alone]
    keep = single[use_name] != use_file
    pairs = zip(names, definers.tolist(), strict=True)
    weight = np.fromiter((_weight(n, max(int(k), 1), frozenset()) for n, k in pairs), np.float64, m)
    name_rank = np.empty(m, np.int64)
    name_rank[np.asarray(sorted(range(m), key=names.__getitem__), np.int64)] = np.arange(m)
    return ReferenceGraph(
        files, names, def_file, def_name, use_file[keep], use_name[keep], use_count[keep], weight, name_rank
    )


def reference_graph(chunks: Iterable[Chunk]) -> ReferenceGraph:
    """The tables of ``chunks`` (a file's chunks together, as a corpus lists them): one pass, each file's
    identifiers counted as it ends, only numbers kept."""
    ids: dict[str, int] = {}  # every identifier seen -> number
    defined: dict[int, None] = {}
    file_of: dict[str, int] = {}
    def_rows: list[tuple[int, int]] = []
    use_files: list[np.ndarray] = []
    use_ids: list[np.ndarray] = []
    use_counts: list[np.ndarray] = []
    path: str | None = None
    texts: list[str] = []
    names: set[str] = set()

    def flush() -> None:
        if path is None:
            return
        f = file_of.setdefault(path, len(file_of))
        for name in names:
            i = ids.setdefault(name, len(ids))
            defined[i] = None
            def_rows.append((f, i))
        counts = Counter(_IDENTIFIER.findall("\n".join(texts)))
        if counts:
            new = [k for k in counts if k not in ids]  # most identifiers were seen in an earlier file
            ids.update(zip(new, range(len(ids), len(ids) + len(new)), strict=True))
            use_files.append(np.full(len(counts), f, np.int32))
            use_ids.append(np.fromiter(map(ids.__getitem__, counts), np.int64, len(counts)))
            use_counts.append(np.fromiter(counts.values(), np.float64, len(counts)))

    for chunk in chunks:
        if chunk.file_path != path:
            flush()
            path, texts, names = chunk.file_path, [], set()
        texts.append(chunk.content)
        names.update(s for s in chunk.symbols if len(s) >= MIN_NAME_CHARS)
    flush()
    # files sorted by path, names by their number among the defined identifiers
    order = sorted(file_of, key=lambda p: p)
    renumber_file = np.zeros(len(file_of), np.int32)
    for new, p in enumerate(order):
        renumber_file[file_of[p]] = new
    name_of = np.full(len(ids), -1, np.int64)
    defined_ids = np.fromiter(defined, np.int64, len(defined))
    name_of[defined_ids] = np.arange(len(defined_ids))
    spelled = list(ids)
    name_list = [spelled[i] for i in defined_ids.tolist()]
    ids.clear()
    d = np.asarray(def_rows, np.int64).reshape(-1, 2)
    def_file, def_name = _unique_pairs(renumber_file[d[:, 0]], name_of[d[:, 1]], len(name_list))
    cat = lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype)  # noqa: E731
    u_file = renumber_file[cat(use_files, np.int32)]
    u_name = name_of[cat(use_ids, np.int64)]
    u_count = cat(use_counts, np.float64)
    keep = u_name >= 0
    u_file, u_name, u_count = u_file[keep], u_name[keep], u_count[keep]
    key = u_file.astype(np.int64) * max(len(name_list), 1) + u_name
    uniq, inverse = np.unique(key, return_inverse=True)  # a file listed twice (out of order) counts once
    counts = np.bincount(inverse, weights=u_count, minlength=len(uniq))
    n_names = max(len(name_list), 1)
    return _tables(
        order,
        name_list,
        def_file,
        def_name,
        (uniq // n_names).astype(np.int32),
        (uniq % n_names).astype(np.int32),
        counts.astype(np.float64),
    )


def _unique_pairs(files: np.ndarray, names: np.ndarray, n_names: int) -> tuple[np.ndarray, np.ndarray]:
    key = np.unique(files.astype(np.int64) * max(n_names, 1) + names.astype(np.int64))
    return (key // max(n_names, 1)).astype(np.int32), (key % max(n_names, 1)).astype(np.int32)


def save_graph(graph: ReferenceGraph, folder: Path, key: str, plain: np.ndarray) -> None:
    """Write ``graph`` and its ``plain`` scores (no focus) beside an index, for the generation ``key``;
    best effort (a read-only or full cache only costs the next process the pass again)."""
    if any(_SEP in s for s in (*graph.files, *graph.names, key)):
        return
    tmp = folder / f".{GRAPH_FILE}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                key=np.frombuffer(key.encode("utf-8", "surrogatepass"), np.uint8),
                files=np.frombuffer(_SEP.join(graph.files).encode("utf-8", "surrogatepass"), np.uint8),
                names=np.frombuffer(_SEP.join(graph.names).encode("utf-8", "surrogatepass"), np.uint8),
                def_file=graph.def_file,
                def_name=graph.def_name,
                use_file=graph.use_file,
                use_name=graph.use_name,
                use_count=graph.use_count.astype(np.float32),
                name_weight=graph.name_weight,
                name_rank=graph.name_rank,
                plain=plain,
            )
        os.replace(tmp, folder / GRAPH_FILE)
    except OSError:
        tmp.unlink(missing_ok=True)


def load_graph(folder: Path, key: str, files: Sequence[str]) -> tuple[ReferenceGraph, np.ndarray] | None:
    """The graph and plain scores saved for generation ``key`` over these (sorted) ``files``, or None
    (none, another generation's, damaged)."""
    try:
        with np.load(folder / GRAPH_FILE) as z:
            if bytes(z["key"]).decode("utf-8", "surrogatepass") != key:
                return None
            kept = bytes(z["files"]).decode("utf-8", "surrogatepass")
            names = bytes(z["names"]).decode("utf-8", "surrogatepass")
            graph = ReferenceGraph(
                kept.split(_SEP) if kept else [],
                names.split(_SEP) if names else [],
                z["def_file"].astype(np.int32),
                z["def_name"].astype(np.int32),
                z["use_file"].astype(np.int32),
                z["use_name"].astype(np.int32),
                z["use_count"].astype(np.float64),
                z["name_weight"].astype(np.float64),
                z["name_rank"].astype(np.int64),
            )
            plain = z["plain"].astype(np.float64)
    except (OSError, ValueError, KeyError, EOFError, UnicodeDecodeError):
        return None
    n, m = len(graph.files), len(graph.names)
    sound = (
        len(graph.def_file) == len(graph.def_name)
        and len(graph.use_file) == len(graph.use_name) == len(graph.use_count)
        and len(graph.name_weight) == len(graph.name_rank) == m
        and bool(np.all(graph.use_file[1:] >= graph.use_file[:-1]))
        and len(plain) == len(graph.def_file)
        and all(len(a) == 0 or (int(a.min()) >= 0 and int(a.max()) < n) for a in (graph.def_file, graph.use_file))
        and all(len(a) == 0 or (int(a.min()) >= 0 and int(a.max()) < m) for a in (graph.def_name, graph.use_name))
        and set(graph.files) <= set(files)
    )
    return (graph, plain) if sound else None


class RankedNames(Sequence[RankedName]):
    """Ranked (file, name) pairs, best first, made into ``RankedName`` only as they are read: a kernel
    map ranks 840,000 definitions to show a hundred."""

    def __init__(self, graph: ReferenceGraph, rows: np.ndarray, scores: np.ndarray) -> None:
        self._g = graph
        self._rows = rows
        self._scores = scores
        self.files = len(np.unique(graph.def_file[rows])) if len(rows) else 0

    def __len__(self) -> int:
        return len(self._rows)

    def _at(self, i: int) -> RankedName:
        d = int(self._rows[i])
        g = self._g
        return RankedName(g.files[int(g.def_file[d])], g.names[int(g.def_name[d])], float(self._scores[d]))

    @overload
    def __getitem__(self, i: int) -> RankedName: ...
    @overload
    def __getitem__(self, i: slice) -> list[RankedName]: ...
    def __getitem__(self, i: int | slice) -> RankedName | list[RankedName]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._at(i)

    def __iter__(self) -> Iterator[RankedName]:
        for i in range(len(self)):
            yield self._at(i)


def rank_definitions(
    chunks: Iterable[Chunk] | ReferenceGraph,
    *,
    focus_files: Mapping[str, float] | None = None,
    focus_terms: Iterable[str] = (),
    demote: Callable[[str], bool] | None = None,
    scope: str = "",
) -> RankedNames:
    """Every (file, defined name) pair, most referenced first (ties by path, then name).

    ``focus_files`` (path -> weight) personalises the walk toward those files; ``focus_terms`` (lowercase
    words) raise the edges of names that contain one of them; definitions in files ``demote`` picks
    (tests, examples) count for little. ``scope`` (a folder) keeps only the definitions inside it; the
    walk is over the whole graph either way.
    """
    g = chunks if isinstance(chunks, ReferenceGraph) else reference_graph(chunks)
    scores = score_definitions(g, focus_files=focus_files, focus_terms=focus_terms, demote=demote)
    return ranked_names(g, scores, scope)


def ranked_names(g: ReferenceGraph, scores: np.ndarray, scope: str = "") -> RankedNames:
    """The definitions by ``scores`` (one per definition row), best first, only those under ``scope``."""
    rows = np.arange(len(g.def_file))
    if scope:
        inside = np.fromiter((p.startswith(scope + "/") for p in g.files), bool, len(g.files))
        rows = rows[inside[g.def_file]]
    ordered = rows[np.lexsort((g.name_rank[g.def_name[rows]], g.def_file[rows], -scores[rows]))]
    return RankedNames(g, ordered, scores)


def score_definitions(
    g: ReferenceGraph,
    *,
    focus_files: Mapping[str, float] | None = None,
    focus_terms: Iterable[str] = (),
    demote: Callable[[str], bool] | None = None,
) -> np.ndarray:
    """Each definition row's score (``rank_definitions``): the walk, a few seconds for the kernel's graph."""
    n, m = len(g.files), len(g.names)
    if not n:
        return np.zeros(0)
    at = {path: i for i, path in enumerate(g.files)} if focus_files else {}
    terms = frozenset(t.lower() for t in focus_terms if t)
    focused = np.zeros(m, bool)
    if terms:
        focused = np.fromiter((any(t in name.lower() for t in terms) for name in g.names), bool, m)
    weight = np.where(focused, g.name_weight * FOCUS_WEIGHT, g.name_weight)
    lower = np.ones(n)
    if demote is not None:
        lower = np.fromiter((DEMOTED_WEIGHT if demote(p) else 1.0 for p in g.files), np.float64, n)

    # the use row of each definition's own file, where the file uses the name it defines (else -1)
    m1 = max(m, 1)
    use_key = g.use_file.astype(np.int64) * m1 + g.use_name
    def_key = g.def_file.astype(np.int64) * m1 + g.def_name
    pos = np.searchsorted(use_key, def_key)
    pos_ok = np.minimum(pos, max(len(use_key) - 1, 0))
    own_use = np.where((pos < len(use_key)) & (use_key[pos_ok] == def_key), pos, -1) if len(use_key) else pos - 1
    self_lower = np.zeros(len(use_key))
    has_own = own_use >= 0
    self_lower[own_use[has_own]] = lower[g.def_file[has_own]]

    base = weight[g.use_name] * np.sqrt(g.use_count)  # a use row's weight toward each other definer
    spread = np.bincount(g.def_name, weights=lower[g.def_file], minlength=m)  # definers' total weight
    out_row = base * np.maximum(spread[g.use_name] - self_lower, 0.0)
    out_weight = np.bincount(g.use_file, weights=out_row, minlength=n)
    share = np.where(out_weight[g.use_file] > 0, base / np.where(out_weight > 0, out_weight, 1.0)[g.use_file], 0.0)

    personal = np.full(n, 1.0 / n)
    if focus_files:
        boost = np.zeros(n)
        for path, w in focus_files.items():
            if path in at:
                boost[at[path]] += max(w, 0.0)
        if boost.sum() > 0:
            personal = 0.5 * personal + 0.5 * boost / boost.sum()
    dangling = out_weight == 0

    def_lower = lower[g.def_file]
    own_defs, own_rows = np.flatnonzero(has_own), own_use[has_own]

    per_file = np.bincount(g.use_file, minlength=n)  # the use rows are sorted by file: a repeat, not a gather
    # index arrays in the platform's width once, not converted by every bincount and gather of the walk
    use_name, def_name, def_file = (a.astype(np.intp) for a in (g.use_name, g.def_name, g.def_file))
    sent = np.empty(len(share))

    def arriving(rank: np.ndarray) -> np.ndarray:
        """What each definition receives from the files that use its name, the definer itself left out."""
        np.multiply(np.repeat(rank, per_file), share, out=sent)
        got: np.ndarray = np.bincount(use_name, weights=sent, minlength=m)[def_name]
        got[own_defs] -= sent[own_rows]
        np.maximum(got, 0.0, out=got)
        return np.multiply(got, def_lower, out=got)

    rank = personal.copy()
    if bool((out_weight > 0).any()):
        for _ in range(ITERATIONS):
            flow = np.bincount(def_file, weights=arriving(rank), minlength=n)
            flow += rank[dangling].sum() * personal
            rank = (1 - DAMPING) * personal + DAMPING * flow
        scores = arriving(rank)
    else:
        scores = np.zeros(len(g.def_file))
    # unreferenced definitions still exist, ranked by their file
    scores = scores + rank[g.def_file] * 1e-3 * np.where(focused[g.def_name], FOCUS_WEIGHT, 1.0)
    if focus_files:  # the focus files' own definitions, not only what they lean on
        top = max(focus_files.values())
        if top > 0:
            boosted = np.zeros(n)
            for path, w in focus_files.items():
                if path in at and w > 0:
                    boosted[at[path]] = FOCUS_FILE_BOOST * w / top
            scores = scores * (1.0 + boosted[g.def_file])
    return scores
