"""Token-efficiency benchmark: how many of a query's targets an agent sees within a character budget.

    PYTHONPATH=src python benchmarks/token_efficiency.py --annotations /work/shared/bench/annotations \
        --corpora /work/corpora [--repos flask,zod] [--systems codepith,semble,grep] [--model DIR] \
        [--budgets 1000,2000,4000,8000,16000] [--top-k 50] [--out benchmarks/results/token_efficiency]

For each query and budget B, every system produces one reply of at most B characters; a target counts
only when the reply shows at least one line of its code (its file, and a line inside its span when it
has one). Systems:

- ``codepith``: the evidence packet, ``render_packet(query, search(query, top_k=K), max_chars=B)``, with
  breadcrumbs (``enclosing=index.enclosing``) as every surface renders it.
- ``codepith-plain``: the same packet without breadcrumbs (what they cost, side by side).
- ``codepith-chunks``: codepith's top-K chunks concatenated like semble's (ranking vs packet format).
- ``semble``: its top-K chunks concatenated in rank order (``path:start-end`` + content), cut at a line.
- ``grep``: ripgrep each query keyword, rank files by distinct keywords then total matches, read the
  files whole in that order, the last one cut at a line.

Writes results.json (summary and per query) and results.md into --out.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "src"))  # this checkout's codepith

from budget import (  # noqa: E402
    Document,
    Reply,
    budget_recall,
    concat_documents,
    packet_headers,
    packet_parts,
    packet_shown_lines,
    query_keywords,
    rank_files,
    split_lines,
    target_shown,
)
from metrics import Hit, Target, hit_matches, normalize_path  # noqa: E402
from suite import Corpus, Query, SuiteError, load_suite  # noqa: E402
from systems import BACKENDS, BenchSystemError, cold_cache, default_model_dir  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BUDGETS = (1000, 2000, 4000, 8000, 16000)
SYSTEM_NAMES = ("codepith", "codepith-plain", "codepith-chunks", "semble", "grep")
PART_KINDS = ("headers", "fences", "code", "markers", "pointers", "trailer")

# One query's replies: budget -> (reply text, shown lines), plus diagnostics for the report.
Answer = Callable[[Query], "QueryReplies"]


class BenchError(Exception):
    """A run cannot go on (bad arguments, a reply over its budget): reported as one line."""


@dataclass(frozen=True)
class QueryReplies:
    """Every budget's reply for one query, with the ranked hits behind them (for miss analysis)."""

    replies: Mapping[int, Reply]
    hits: tuple[Hit, ...] = ()


@dataclass
class QueryRecord:
    """One query, one system: recall and reply size per budget, and why targets were missed."""

    system: str
    repo: str
    query: str
    category: str
    targets: list[str]
    recall: dict[int, float]
    chars: dict[int, int]
    missed: dict[int, dict[str, str]] = field(default_factory=dict)
    parts: dict[int, dict[str, int]] = field(default_factory=dict)
    first_target_rank: int | None = None


# --- systems --------------------------------------------------------------------------------------


def _relative(path: str, root: Path) -> str:
    """Result paths relative to the indexed root, '/'-separated (semble may return absolute ones)."""
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return p.as_posix()
    return normalize_path(path)


def _chunk_documents(results: Sequence[Any], root: Path) -> list[Document]:
    return [
        Document(_relative(str(r.chunk.file_path), root), int(r.chunk.start_line), split_lines(r.chunk.content))
        for r in results
    ]


def _hits(results: Sequence[Any], root: Path) -> tuple[Hit, ...]:
    return tuple(
        Hit(_relative(str(r.chunk.file_path), root), int(r.chunk.start_line), int(r.chunk.end_line)) for r in results
    )


def codepith_answerer(
    index: Any, root: Path, budgets: Sequence[int], top_k: int, packets: bool, *, crumbs: bool = True
) -> Answer:
    """Packets (``packets``) or semble-style chunk concatenation over codepith's top-K results."""
    from codepith.output.packets import render_packet
    from codepith.output.read import mcp_read_call

    def answer(query: Query) -> QueryReplies:
        results = index.search(query.text, top_k=top_k, refresh=False)
        replies: dict[int, Reply] = {}
        for b in budgets:
            if packets:
                text = render_packet(
                    query.text,
                    results,
                    max_chars=b,
                    read_call=mcp_read_call,
                    enclosing=index.enclosing if crumbs else None,
                    file_lines=index.file_lines,  # as the surfaces render (only issue-sized queries use it)
                )
                if len(text) > b:
                    raise BenchError(f"packet of {len(text)} chars over the {b} budget for {query.text!r}")
                shown = packet_shown_lines(text)
                replies[b] = Reply(text, {p: frozenset(s) for p, s in shown.items()})
            else:
                replies[b] = concat_documents(_chunk_documents(results, root), b)
        return QueryReplies(replies, _hits(results, root))

    return answer


def semble_answerer(index: Any, root: Path, budgets: Sequence[int], top_k: int) -> Answer:
    def answer(query: Query) -> QueryReplies:
        results = index.search(query.text, top_k=top_k)
        docs = _chunk_documents(results, root)
        return QueryReplies({b: concat_documents(docs, b) for b in budgets}, _hits(results, root))

    return answer


def find_rg() -> str | None:
    """The ripgrep binary: on PATH, or next to this Python (the ``ripgrep`` PyPI package ships one)."""
    found = shutil.which("rg")
    if found:
        return found
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def rg_counts(rg: str, root: Path, keywords: Sequence[str]) -> dict[str, dict[str, int]]:
    """``counts[path][keyword]``: case-insensitive fixed-string matches of each keyword, per file."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for kw in keywords:
        proc = subprocess.run(
            [
                rg,
                "--count-matches",
                "--ignore-case",
                "--fixed-strings",
                "--no-messages",
                "--with-filename",
                "--",
                kw,
            ],
            cwd=root,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        if proc.returncode not in (0, 1):
            raise BenchError(f"rg failed on {root}: {proc.stderr.strip()[:200]}")
        for line in proc.stdout.splitlines():
            path, sep, n = line.rpartition(":")
            if sep and n.isdigit():
                counts[normalize_path(path)][kw] = int(n)
    return counts


def python_counts(root: Path, keywords: Sequence[str]) -> dict[str, dict[str, int]]:
    """The same counts without ripgrep: every non-hidden text file under root (no ignore files)."""
    counts: dict[str, dict[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            file = Path(dirpath) / name
            try:
                data = file.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            text = data.decode("utf-8", errors="replace").lower()
            per = {kw: text.count(kw) for kw in keywords}
            if any(per.values()):
                counts[file.relative_to(root).as_posix()] = per
    return counts


def grep_answerer(root: Path, budgets: Sequence[int], rg: str | None) -> Answer:
    def answer(query: Query) -> QueryReplies:
        keywords = query_keywords(query.text)
        counts = rg_counts(rg, root, keywords) if rg else python_counts(root, keywords)
        ranked = rank_files(counts)
        top = max(budgets)

        def documents() -> Iterator[Document]:
            for rel in ranked:  # read lazily: a reply never needs more than the largest budget
                text = (root / rel).read_bytes().decode("utf-8", errors="replace")
                yield Document(rel, 1, split_lines(text))

        docs: list[Document] = []
        size = 0
        for doc in documents():
            docs.append(doc)
            size += sum(len(line) + 1 for line in doc.lines)
            if size > top:
                break
        hits = tuple(Hit(d.path, 1, d.last_line) for d in docs)
        return QueryReplies({b: concat_documents(docs, b) for b in budgets}, hits)

    return answer


# --- scoring --------------------------------------------------------------------------------------


def miss_reason(target: Target, reply: Reply, hits: Sequence[Hit], packet: bool) -> str:
    """Why a target shown by none of the reply's code lines was missed."""
    if not any(hit_matches(h, target) for h in hits):
        return "not retrieved"
    if packet:
        for head in packet_headers(reply.text):
            if hit_matches(Hit(head.path, head.start, head.end), target):
                return "pointer only" if head.pointer else "hit shown, target lines omitted"
        return "left out (budget)"
    return "cut by budget"


def score_query(system: str, corpus: Corpus, query: Query, out: QueryReplies, budgets: Sequence[int]) -> QueryRecord:
    targets = list(dict.fromkeys(query.existing_targets))
    packet = system == "codepith"
    first = next((i for i, h in enumerate(out.hits, 1) if any(hit_matches(h, t) for t in targets)), None)
    record = QueryRecord(system, corpus.name, query.text, query.category, [t.label() for t in targets], {}, {})
    record.first_target_rank = first
    for b in budgets:
        reply = out.replies[b]
        record.recall[b] = budget_recall(reply.shown, targets) or 0.0
        record.chars[b] = len(reply.text)
        missed = {
            t.label(): miss_reason(t, reply, out.hits, packet) for t in targets if not target_shown(reply.shown, t)
        }
        if missed:
            record.missed[b] = missed
        if packet:
            parts = asdict(packet_parts(reply.text))
            record.parts[b] = parts
    return record


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarize(records: Sequence[QueryRecord], systems: Sequence[str], budgets: Sequence[int]) -> dict[str, Any]:
    """Per system and budget: recall (mean over repos = headline, pooled over queries), reply size."""
    summary: dict[str, Any] = {}
    for system in systems:
        mine = [r for r in records if r.system == system]
        by_repo: dict[str, list[QueryRecord]] = defaultdict(list)
        for r in mine:
            by_repo[r.repo].append(r)
        per_budget: dict[str, Any] = {}
        for b in budgets:
            repo_means = {repo: _mean([r.recall[b] for r in rs]) for repo, rs in by_repo.items()}
            reasons: dict[str, int] = defaultdict(int)
            for r in mine:
                for why in r.missed.get(b, {}).values():
                    reasons[why] += 1
            entry: dict[str, Any] = {
                "recall_repo_mean": _mean(list(repo_means.values())),
                "recall_pooled": _mean([r.recall[b] for r in mine]),
                "mean_chars": _mean([r.chars[b] for r in mine]),
                "missed_targets": dict(sorted(reasons.items())),
                "per_repo": repo_means,
            }
            if system == "codepith":
                entry["mean_parts"] = {
                    k: _mean([r.parts[b][k] for r in mine]) for k in (*PART_KINDS, "hits", "code_lines")
                }
            per_budget[str(b)] = entry
        summary[system] = {"queries": len(mine), "repos": len(by_repo), "budgets": per_budget}
    return summary


def render_markdown(summary: Mapping[str, Any], budgets: Sequence[int], command: str) -> str:
    heads = " | ".join(f"{b:,}" for b in budgets)
    rule = "|".join(["---", *(["---:"] * len(budgets))])
    lines = [
        "# Token efficiency",
        "",
        f"`{command}`",
        "",
        "Recall of targets whose code is shown within the budget (characters; tokens ~ chars / 4).",
        "",
        "Mean over repos (headline):",
        "",
        f"| system | {heads} |",
        f"|{rule}|",
    ]
    for name, data in summary.items():
        row = " | ".join(f"{data['budgets'][str(b)]['recall_repo_mean']:.3f}" for b in budgets)
        lines.append(f"| {name} | {row} |")
    lines += ["", "Mean over queries (pooled):", "", f"| system | {heads} |", f"|{rule}|"]
    for name, data in summary.items():
        row = " | ".join(f"{data['budgets'][str(b)]['recall_pooled']:.3f}" for b in budgets)
        lines.append(f"| {name} | {row} |")
    lines += ["", "Mean reply size (characters):", "", f"| system | {heads} |", f"|{rule}|"]
    for name, data in summary.items():
        row = " | ".join(f"{data['budgets'][str(b)]['mean_chars']:,.0f}" for b in budgets)
        lines.append(f"| {name} | {row} |")
    if "codepith" in summary:
        lines += [
            "",
            "codepith packet: mean characters by kind of line",
            "",
            f"| part | {heads} |",
            f"|{rule}|",
        ]
        for kind in (*PART_KINDS, "hits", "code_lines"):
            row = " | ".join(f"{summary['codepith']['budgets'][str(b)]['mean_parts'][kind]:,.1f}" for b in budgets)
            lines.append(f"| {kind} | {row} |")
    lines += ["", "Missed targets by reason (counts over all queries):", ""]
    for name, data in summary.items():
        for b in budgets:
            reasons = data["budgets"][str(b)]["missed_targets"]
            text = ", ".join(f"{k}: {v}" for k, v in reasons.items()) or "none"
            lines.append(f"- {name} @ {b:,}: {text}")
    return "\n".join(lines) + "\n"


# --- run ------------------------------------------------------------------------------------------


def _parse_budgets(text: str) -> tuple[int, ...]:
    try:
        budgets = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise BenchError(f"--budgets must be comma-separated integers: {text!r}") from None
    if not budgets or budgets[0] <= 0:
        raise BenchError("--budgets must be positive")
    return budgets


def run(args: argparse.Namespace) -> int:
    budgets = _parse_budgets(args.budgets)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(SYSTEM_NAMES))
    if unknown:
        raise BenchError(f"unknown systems: {', '.join(unknown)} (known: {', '.join(SYSTEM_NAMES)})")
    model_dir = Path(args.model) if args.model else default_model_dir(REPO_ROOT)
    if model_dir is not None and not model_dir.is_dir():
        raise BenchError(f"model folder not found: {model_dir}")
    repos = [r for r in args.repos.split(",") if r] if args.repos else None
    suite = [c for c in load_suite(Path(args.annotations), Path(args.corpora), repos) if c.available]
    if not suite:
        raise BenchError("no corpus available (fetch them with the suite's fetch_corpora.py)")
    rg = find_rg()
    if "grep" in systems:
        print(f"grep baseline uses {rg or 'a pure-Python scan (no rg found)'}", file=sys.stderr)
    model: Any = None
    if any(s.startswith("codepith") for s in systems):
        from codepith.model.loader import load_model

        model = load_model(None if model_dir is None else str(model_dir))
    records: list[QueryRecord] = []
    timings: dict[str, float] = defaultdict(float)
    for corpus in suite:
        queries = [q for q in corpus.queries if q.existing_targets]
        answerers: dict[str, Answer] = {}
        stack = ExitStack()
        if any(name.startswith("codepith") for name in systems):
            import codepith

            stack.enter_context(cold_cache(BACKENDS["codepith"]))
            index = codepith.Index.from_path(str(corpus.root), model=model)
            for name, packets in (("codepith", True), ("codepith-plain", True), ("codepith-chunks", False)):
                if name in systems:
                    answerers[name] = codepith_answerer(
                        index, corpus.root, budgets, args.top_k, packets, crumbs=name == "codepith"
                    )
        if "semble" in systems:
            try:
                from semble import SembleIndex
            except ImportError as exc:
                raise BenchSystemError(f"semble is not installed ({exc})") from None
            if model_dir is None:
                raise BenchSystemError("semble needs --model (no network to fetch its default model)")
            stack.enter_context(cold_cache(BACKENDS["semble"]))
            answerers["semble"] = semble_answerer(
                SembleIndex.from_path(corpus.root, model_path=str(model_dir)),
                corpus.root,
                budgets,
                args.top_k,
            )
        if "grep" in systems:
            answerers["grep"] = grep_answerer(corpus.root, budgets, rg)
        for system in systems:
            t0 = time.perf_counter()
            for query in queries:
                records.append(score_query(system, corpus, query, answerers[system](query), budgets))
            timings[system] += time.perf_counter() - t0
        stack.close()
        probe = 4000 if 4000 in budgets else budgets[0]
        mine = [r for r in records if r.repo == corpus.name]
        line = "  ".join(f"{s} {_mean([r.recall[probe] for r in mine if r.system == s]):.3f}" for s in systems)
        print(f"{corpus.name}: {len(queries)} queries, recall@{probe}: {line}", file=sys.stderr)

    summary = summarize(records, systems, budgets)
    command = "PYTHONPATH=src python " + " ".join(
        [str(Path(sys.argv[0]).as_posix()) if sys.argv else "benchmarks/token_efficiency.py", *sys.argv[1:]]
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": command,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "model": None if model_dir is None else str(model_dir),
        "top_k": args.top_k,
        "budgets": list(budgets),
        "grep_tool": rg or "python-scan",
        "read_call": "mcp read_snippet(...)",
        "seconds": {k: round(v, 1) for k, v in timings.items()},
    }
    (out / "results.json").write_text(
        json.dumps({"meta": meta, "summary": summary, "queries": [asdict(r) for r in records]}, indent=1),
        encoding="utf-8",
    )
    (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=1), encoding="utf-8")
    markdown = render_markdown(summary, budgets, command)
    (out / "results.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--annotations", default="/work/shared/bench/annotations")
    parser.add_argument("--corpora", default="/work/corpora")
    parser.add_argument("--repos", default="", help="comma-separated corpus names (default: all)")
    parser.add_argument(
        "--systems", default="codepith,semble,grep", help=f"comma-separated of {', '.join(SYSTEM_NAMES)}"
    )
    parser.add_argument("--model", default=None, help="model2vec folder (default: the bundled model)")
    parser.add_argument("--budgets", default=",".join(str(b) for b in DEFAULT_BUDGETS))
    parser.add_argument("--top-k", type=int, default=50, help="results fetched per query (the budget is the limit)")
    parser.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "results" / "token_efficiency"))
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (BenchError, BenchSystemError, SuiteError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
