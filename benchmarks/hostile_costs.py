"""What hostile inputs cost: a very long query, and files that nest very deep.

    PYTHONPATH=src python benchmarks/hostile_costs.py --repo /work/corpora/tokio \
        [--deep-file /work/kernel/linux-source-6.1/lib/test_bpf.c]

Prints one line per measurement (seconds, or the error raised). Run it against two source trees (set
PYTHONPATH to each) in one session to compare versions side by side.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from pathlib import Path


def _timed(label: str, fn: Callable[[], object]) -> None:
    t0 = time.perf_counter()
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the point is to report what an input does
        print(f"{label}: {type(exc).__name__} after {time.perf_counter() - t0:.2f} s")
        return
    print(f"{label}: {time.perf_counter() - t0:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="folder to index and search")
    parser.add_argument("--deep-file", default=None, help="a real deeply nested C file (e.g. lib/test_bpf.c)")
    args = parser.parse_args()

    import codepith
    from codepith.chunks.chunker import chunk_file

    depth = 3000
    parens = "int x = " + "".join("(" if i % 40 else "(\n" for i in range(depth)) + "1"
    parens += "".join(")" if i % 40 else ")\n" for i in range(depth)) + ";\n"
    branches = (f"  {'} else ' if i else ''}if (x == {i}) {{\n    g();\n" for i in range(1000))
    chain = "void f(int x) {\n" + "".join(branches)
    chain += "  }\n}\n"
    _timed("chunk 3,000 nested parentheses", lambda: chunk_file("p.c", parens, "c"))
    _timed("chunk a 1,000-branch else-if chain", lambda: chunk_file("e.c", chain, "c"))
    if args.deep_file:
        text = Path(args.deep_file).read_text(encoding="utf-8", errors="replace")
        _timed(f"chunk {Path(args.deep_file).name}", lambda: chunk_file("d.c", text, "c"))

    index = codepith.Index.from_path(args.repo)
    seed = " ".join(c.content for c in index.chunks[:200])
    index.search("warm up the lazy tables", refresh=False)
    for size in (10_000, 1_000_000, 10_000_000):
        query = (seed * (size // max(len(seed), 1) + 1))[:size]
        _timed(f"search with a {size:,}-character query", functools.partial(index.search, query, refresh=False))


if __name__ == "__main__":
    main()
