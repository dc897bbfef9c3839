"""The repository map's ranking: the same scores as PageRank over the explicit edges, in time and memory
linear in the uses and definitions (not their product), and its name references made once per index
generation."""

from __future__ import annotations

import math
import random
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

from codepith.chunks.chunk import Chunk
from codepith.structure import repomap
from codepith.structure.repomap import rank_definitions


def _chunk(path: str, content: str, symbols: tuple[str, ...]) -> Chunk:
    return Chunk(file_path=path, start_line=1, end_line=1, content=content, language="python", symbols=symbols)


def _by_edges(chunks, focus_files=None, focus_terms=(), demote=None):  # type: ignore[no-untyped-def]
    """The ranking spelt out edge by edge, as the map first computed it (quadratic in a name's definers)."""
    defines: dict[str, set[str]] = {}
    uses: dict[str, Counter[str]] = {}
    for c in chunks:
        defines.setdefault(c.file_path, set()).update(s for s in c.symbols if len(s) >= repomap.MIN_NAME_CHARS)
        uses.setdefault(c.file_path, Counter()).update(repomap._IDENTIFIER.findall(c.content))
    files = sorted(defines)
    at = {p: i for i, p in enumerate(files)}
    definers: dict[str, list[str]] = {}
    for p, names in defines.items():
        for name in names:
            definers.setdefault(name, []).append(p)
    terms = frozenset(t.lower() for t in focus_terms if t)
    focused = frozenset(n.lower() for n in definers if terms and any(t in n.lower() for t in terms))
    lower = {p: repomap.DEMOTED_WEIGHT if demote is not None and demote(p) else 1.0 for p in files}
    edges = []
    for p, counts in uses.items():
        for name, count in counts.items():
            targets = definers.get(name, [])
            w = repomap._weight(name, len(targets), focused) * math.sqrt(count) if targets else 0.0
            edges += [(at[p], at[t], name, w * lower[t]) for t in targets if t != p]
    n = len(files)
    personal = np.full(n, 1.0 / n)
    if focus_files:
        boost = np.zeros(n)
        for p, w in focus_files.items():
            if p in at:
                boost[at[p]] += w
        if boost.sum() > 0:
            personal = 0.5 * personal + 0.5 * boost / boost.sum()
    out = np.zeros(n)
    for s, _, _, w in edges:
        out[s] += w
    rank = personal.copy()
    if edges:
        for _ in range(repomap.ITERATIONS):
            flow = np.zeros(n)
            for s, d, _, w in edges:
                flow[d] += rank[s] * w / out[s]
            flow += rank[out == 0].sum() * personal
            rank = (1 - repomap.DAMPING) * personal + repomap.DAMPING * flow
    scores: Counter[tuple[str, str]] = Counter()
    for s, d, name, w in edges:
        scores[(files[d], name)] += rank[s] * w / out[s]
    for p, names in defines.items():
        for name in names:
            scores[(p, name)] += rank[at[p]] * 1e-3 * (repomap.FOCUS_WEIGHT if name.lower() in focused else 1.0)
    if focus_files:
        top = max(focus_files.values())
        for key in scores:
            if focus_files.get(key[0], 0.0) > 0:
                scores[key] *= 1.0 + repomap.FOCUS_FILE_BOOST * focus_files[key[0]] / top
    return scores


def test_the_ranking_is_pagerank_over_the_explicit_edges() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        vocab = [
            "_" * rng.randint(0, 1) + rng.choice(["alpha", "beta_gamma", "DeltaEcho", "foo", "bar_baz_qux", "zz"])
            + str(rng.randint(0, 3))
            for _ in range(12)
        ]  # fmt: skip
        chunks = [
            _chunk(f"{rng.choice(['src', 'tests'])}/f{f}.py", " ".join(rng.choices(vocab, k=rng.randint(0, 15))),
                   tuple(rng.sample(vocab, rng.randint(0, 3))))
            for f in sorted(rng.sample(range(25), rng.randint(1, 10)))
            for _ in range(rng.randint(1, 3))
        ]  # fmt: skip
        chunks.sort(key=lambda c: c.file_path)
        focus = {chunks[0].file_path: 1.0, "absent.py": 2.0} if seed % 3 == 0 else None
        terms = ["gamma"] if seed % 2 else []
        demote = (lambda p: p.startswith("tests/")) if seed % 4 else None
        want = _by_edges(chunks, focus, terms, demote)
        got = rank_definitions(chunks, focus_files=focus, focus_terms=terms, demote=demote)
        assert {(r.path, r.name) for r in got} == set(want) and len(got) == len(want), seed
        for r in got:
            assert math.isclose(r.score, want[(r.path, r.name)], rel_tol=1e-9, abs_tol=1e-15), (seed, r)
        assert [r.score for r in got] == sorted((r.score for r in got), reverse=True)


def test_a_name_defined_in_every_file_costs_no_more_than_its_uses() -> None:
    """1,500 drivers each define and call ``probe`` and ``remove``: 4.5 million edges when listed (over
    500 MB and ten seconds), a few thousand rows as tables."""
    chunks = [
        _chunk(f"drivers/d{i:04d}.c", f"probe(dev); remove(dev); helper_{i}(); shared_register_driver();",
               ("probe", "remove", f"helper_{i}"))
        for i in range(1500)
    ] + [_chunk("core/bus.c", "int shared_register_driver(void);", ("shared_register_driver",))]  # fmt: skip
    tracemalloc.start()
    try:
        ranked = rank_definitions(chunks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000, peak
    assert ranked[0].name == "shared_register_driver"
    assert len(ranked) == 1500 * 3 + 1 and ranked.files == 1501


def test_the_reference_graph_is_made_once_per_generation(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import os

    from codepith.api import Index

    root = tmp_path / "repo"
    root.mkdir()
    (root / "core.py").write_text("def shared_helper(x):\n    return x\n")
    (root / "user.py").write_text("from core import shared_helper\n\n\ndef caller():\n    return shared_helper(1)\n")
    made: list[int] = []
    real = repomap.reference_graph

    def counting(chunks):  # type: ignore[no-untyped-def]
        made.append(1)
        return real(chunks)

    monkeypatch.setattr("codepith.structure.mapcache.reference_graph", counting)
    index = Index.from_path(root, model=model)
    first = [e.definition.name for e in index.outline(".").entries]
    assert first[0] == "shared_helper" and len(made) == 1
    index.outline(".", focus="caller")
    assert len(made) == 1  # the focus is applied per call, the references are kept
    again = Index.from_path(root, model=model)  # another process: read back from beside the index
    assert [e.definition.name for e in again.outline(".").entries] == first and len(made) == 1
    (root / "user.py").write_text("from core import shared_helper\n\n\ndef renamed_caller():\n    return 2\n")
    os.utime(root / "user.py", ns=(10**18, 10**18))
    again.refresh()
    names = [e.definition.name for e in again.outline(".").entries]  # a new generation: made again
    assert len(made) == 2 and "renamed_caller" in names and "caller" not in names


def test_a_touched_file_keeps_the_reference_graph(tmp_path: Path, model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A commit that only renews a file's stamps (touched, same bytes) is a new generation with the same
    content: the map's references (a minute for the kernel) are not made again, here or in a new process."""
    import os

    from codepith.api import Index

    root = tmp_path / "repo"
    root.mkdir()
    (root / "core.py").write_text("def shared_helper(x):\n    return x\n")
    (root / "user.py").write_text("from core import shared_helper\n\n\ndef caller():\n    return shared_helper(1)\n")
    made: list[int] = []
    real = repomap.reference_graph
    monkeypatch.setattr("codepith.structure.mapcache.reference_graph", lambda chunks: made.append(1) or real(chunks))
    index = Index.from_path(root, model=model)
    first = index.outline(".")
    os.utime(root / "user.py", ns=(10**18, 10**18))
    index.refresh()
    assert index.outline(".") == first and len(made) == 1
    assert Index.from_path(root, model=model).outline(".") == first and len(made) == 1
