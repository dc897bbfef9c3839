"""Line recall on issue texts: the share of a fix's changed lines that one search reply shows as code.

    PYTHONPATH=src python benchmarks/line_recall.py [--instances /work/shared/bench/issues/instances.jsonl] \
        [--trees /work/issuesbench] [--work DIR] [--budgets 2000,4000,8000] [--top-k 10] \
        [--query-chars 2000] [--src OTHER_CHECKOUT/src] [--out benchmarks/results/line_recall]

For each instance (repositories alphabetically, instances by base-commit date, as the suite's
``evaluate.py`` does): check out the base commit in a private clone of ``--trees/<repo>`` (the shared
trees are never touched; clones go to ``--work``, default a temporary folder), index it, search with
the first ``--query-chars`` characters of the issue text, ``top_k`` 10, and render the reply exactly as
the MCP ``search`` tool does (packet, breadcrumbs, confidence) at each budget. A changed line
(``gold_changed``, pre-patch numbering) counts when the reply shows it as a numbered code row under
its file's header. Per instance: changed lines shown / changed lines; the headline is the mean over
instances. ``reach`` is the same share for the lines inside the returned hits' spans (what a reply
with no budget would show): the ceiling ranking leaves for the packet. ``file_reach`` counts the
changed lines anywhere in the hits' files: what a packet could show by reaching past the hits.

``--src`` runs another checkout's codepith (e.g. main's, for a before/after) with this harness.
Writes summary.json (and results.json per instance) into ``--out``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from budget import packet_shown_lines  # noqa: E402


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def changed_lines(inst: dict[str, Any]) -> set[tuple[str, int]]:
    return {(span["path"], n) for span in inst["gold_changed"] for n in range(span["start_line"], span["end_line"] + 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instances", default="/work/shared/bench/issues/instances.jsonl")
    ap.add_argument("--trees", default="/work/issuesbench", help="prepare.sh's DEST (read only)")
    ap.add_argument("--work", default=None, help="folder for private clones and caches (default: a temp folder)")
    ap.add_argument("--budgets", default="2000,4000,8000")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--query-chars", type=int, default=2000)
    ap.add_argument("--src", default=str(HERE.parent / "src"), help="the codepith source folder to measure")
    ap.add_argument("--repo", action="append", default=[], help="only these repositories (name)")
    ap.add_argument("--out", default="benchmarks/results/line_recall")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="an ablation: override a module constant, e.g. codepith.output.packets.PROSE_WEIGHT=1.0",
    )
    args = ap.parse_args(argv)
    sys.path.insert(1, str(Path(args.src).resolve()))
    import importlib

    for setting in args.set:
        target, value = setting.split("=", 1)
        module, name = target.rsplit(".", 1)
        setattr(importlib.import_module(module), name, json.loads(value))

    import os

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="line_recall-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("CODEPITH_CACHE_DIR", str(work / "cache"))

    import codepith
    from codepith.output.packets import render_packet
    from codepith.output.read import mcp_read_call

    accepts = set(inspect.signature(render_packet).parameters)
    budgets = [int(b) for b in args.budgets.split(",")]
    instances = [json.loads(line) for line in Path(args.instances).read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for inst in instances:
        name = inst["repo"].split("/")[-1]
        if not args.repo or name in args.repo:
            by_repo[name].append(inst)

    rows: list[dict[str, Any]] = []
    for name in sorted(by_repo):
        root = work / name
        if not root.exists():
            subprocess.run(["git", "clone", "-q", "--no-checkout", str(Path(args.trees) / name), str(root)], check=True)
            git(root, "fetch", "-q", "--tags", str(Path(args.trees) / name))
        dated = sorted(
            by_repo[name],
            key=lambda i: int(git(root, "log", "-1", "--format=%ct", f"refs/tags/base-{i['base_commit']}").strip()),
        )
        for inst in dated:
            git(root, "checkout", "-q", "-f", "--detach", f"refs/tags/base-{inst['base_commit']}")
            git(root, "clean", "-fdq")
            index = codepith.Index.from_path(root)
            query = inst["query"][: args.query_chars]
            t0 = time.perf_counter()
            results = index.search(query, top_k=args.top_k, refresh=False)
            extra: dict[str, Any] = {}
            if "enclosing" in accepts:
                extra["enclosing"] = index.enclosing
            if "file_lines" in accepts:
                extra["file_lines"] = index.file_lines
            if "confident" in accepts:
                extra["confident"] = index.confidence(query).confident
            gold = changed_lines(inst)
            reach = {(r.chunk.file_path, n) for r in results for n in range(r.chunk.start_line, r.chunk.end_line + 1)}
            hit_files = {r.chunk.file_path for r in results}
            row: dict[str, Any] = {
                "instance_id": inst["instance_id"],
                "repo": name,
                "changed": len(gold),
                "reach": len(gold & reach) / len(gold),
                "file_reach": sum(1 for path, _ in gold if path in hit_files) / len(gold),
            }
            for b in budgets:
                text = render_packet(query, results, max_chars=b, read_call=mcp_read_call, **extra)
                assert len(text) <= b, f"reply of {len(text)} chars over {b}"
                shown = {(p, n) for p, lines in packet_shown_lines(text).items() for n in lines}
                row[f"recall@{b}"] = len(gold & shown) / len(gold)
                row[f"chars@{b}"] = len(text)
            row["seconds"] = round(time.perf_counter() - t0, 3)
            rows.append(row)
            print(
                f"{inst['instance_id']}: reach {row['reach']:.2f} "
                + " ".join(f"@{b} {row[f'recall@{b}']:.2f}" for b in budgets),
                flush=True,
            )

    def mean(key: str) -> float:
        return round(sum(r[key] for r in rows) / max(len(rows), 1), 3)

    summary = {
        "instances": len(rows),
        "top_k": args.top_k,
        "query_chars": args.query_chars,
        "src": str(Path(args.src).resolve()),
        "set": args.set,
        "reach": mean("reach"),
        "file_reach": mean("file_reach"),
        **{f"recall@{b}": mean(f"recall@{b}") for b in budgets},
        **{f"any_line@{b}": round(sum(r[f"recall@{b}"] > 0 for r in rows) / max(len(rows), 1), 3) for b in budgets},
    }
    print(json.dumps(summary, indent=1))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
