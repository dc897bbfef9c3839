"""Which definitions of a repository matter most: PageRank over a file graph of name references.

A file that uses a name some other file defines gets an edge to that file, weighted by how often it
uses it (square-rooted, so one chatty file does not decide), less for private names (``_x``) and for
names defined in many files (``get``, ``run``), more for names the caller is focused on. PageRank
over that graph, optionally personalised toward focus files, scores the files; each file's score
flows out along its edges, and what arrives at (file, name) is that definition's importance. The
idea is aider's repository map; the weights and code here are codepith's.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

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


def rank_definitions(
    chunks: Iterable[Chunk],
    *,
    focus_files: Mapping[str, float] | None = None,
    focus_terms: Iterable[str] = (),
    demote: Callable[[str], bool] | None = None,
) -> list[RankedName]:
    """Every (file, defined name) pair, most referenced first.

    ``focus_files`` (path -> weight) personalises the walk toward those files; ``focus_terms`` (lowercase
    words) raise the edges of names that contain one of them; definitions in files ``demote`` picks
    (tests, examples) count for little.
    """
    defines: dict[str, set[str]] = {}
    uses: dict[str, Counter[str]] = {}
    for chunk in chunks:
        defines.setdefault(chunk.file_path, set()).update(s for s in chunk.symbols if len(s) >= MIN_NAME_CHARS)
        uses.setdefault(chunk.file_path, Counter()).update(_IDENTIFIER.findall(chunk.content))
    files = sorted(defines)
    if not files:
        return []
    at = {path: i for i, path in enumerate(files)}
    definers: dict[str, list[str]] = {}
    for path, names in defines.items():
        for name in names:
            definers.setdefault(name, []).append(path)
    terms = frozenset(t.lower() for t in focus_terms if t)
    focused = frozenset(name.lower() for name in definers if terms and any(t in name.lower() for t in terms))

    lower = {path: DEMOTED_WEIGHT if demote is not None and demote(path) else 1.0 for path in files}
    edges: list[tuple[int, int, str, float]] = []  # (from, to, name, weight)
    for path, counts in uses.items():
        for name, count in counts.items():
            targets = definers.get(name)
            if not targets:
                continue
            weight = _weight(name, len(targets), focused) * math.sqrt(count)
            for target in targets:
                if target != path:
                    edges.append((at[path], at[target], name, weight * lower[target]))

    n = len(files)
    personal = np.full(n, 1.0 / n)
    if focus_files:
        boost = np.zeros(n)
        for path, w in focus_files.items():
            if path in at:
                boost[at[path]] += max(w, 0.0)
        if boost.sum() > 0:
            personal = 0.5 * personal + 0.5 * boost / boost.sum()
    out_weight = np.zeros(n)
    for src, _, _, w in edges:
        out_weight[src] += w
    rank = personal.copy()
    if edges:
        src_i = np.fromiter((e[0] for e in edges), np.int64, len(edges))
        dst_i = np.fromiter((e[1] for e in edges), np.int64, len(edges))
        share = np.fromiter((e[3] for e in edges), np.float64, len(edges)) / out_weight[src_i]
        dangling = out_weight == 0
        for _ in range(ITERATIONS):
            flow = np.zeros(n)
            np.add.at(flow, dst_i, rank[src_i] * share)
            flow += rank[dangling].sum() * personal
            rank = (1 - DAMPING) * personal + DAMPING * flow

    scores: defaultdict[tuple[str, str], float] = defaultdict(float)
    for src, dst, name, w in edges:
        scores[(files[dst], name)] += float(rank[src]) * w / out_weight[src]
    for path, names in defines.items():  # unreferenced definitions still exist, ranked by their file
        for name in names:
            scores[(path, name)] += float(rank[at[path]]) * 1e-3 * (FOCUS_WEIGHT if name.lower() in focused else 1.0)
    if focus_files:  # the focus files' own definitions, not only what they lean on
        top = max(focus_files.values())
        for path, name in list(scores):
            if focus_files.get(path, 0.0) > 0:
                scores[(path, name)] *= 1.0 + FOCUS_FILE_BOOST * focus_files[path] / top
    ranked = [RankedName(path, name, float(score)) for (path, name), score in scores.items()]
    ranked.sort(key=lambda r: (-r.score, r.path, r.name))
    return ranked
