"""Load the dev benchmark suite: repos.json + annotations, resolved against fetched corpora.

Annotation paths are relative to the corpus root or to its `benchmark_root` (the folder that is
indexed); every target is rewritten relative to the benchmark root so it compares directly with
the paths systems return. A target "exists" when its file resolves and, if it has a span, the span
starts within the file (the same rule as the suite's check.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from metrics import Target, normalize_path, parse_target

# Prefix given to targets whose file exists in the corpus but outside the indexed folder:
# they count in the ideal DCG (they exist) but no result path can ever match them.
OUTSIDE_ROOT = "<outside-benchmark-root>/"


class SuiteError(Exception):
    """Bad benchmark input (missing folder, malformed annotation): reported as one line."""


@dataclass(frozen=True)
class ResolvedTarget:
    """An annotation target rewritten relative to the benchmark root, with whether it exists."""

    raw: str
    target: Target
    exists: bool


@dataclass(frozen=True)
class Seed:
    """The location a find_related query starts from (benchmark-root relative, 1-based line)."""

    path: str
    line: int
    exists: bool


@dataclass(frozen=True)
class Query:
    """One annotated query with resolved targets; `seed`/`related` only for find_related items."""

    index: int
    text: str
    category: str
    targets: tuple[ResolvedTarget, ...]
    seed: Seed | None = None
    related: tuple[ResolvedTarget, ...] = ()

    @property
    def existing_targets(self) -> tuple[Target, ...]:
        return tuple(t.target for t in self.targets if t.exists)

    @property
    def existing_related(self) -> tuple[Target, ...]:
        return tuple(t.target for t in self.related if t.exists)


@dataclass(frozen=True)
class Corpus:
    """A project of the suite: where it lives on disk and its queries."""

    name: str
    language: str
    corpus_dir: Path
    root: Path
    queries: tuple[Query, ...]

    @property
    def available(self) -> bool:
        return self.root.is_dir()


def _line_count(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def resolve_path(rel: str, corpus_dir: Path, root: Path) -> tuple[str, Path] | None:
    """Map an annotation path to (benchmark-root-relative path, file), or None if no file.

    The corpus root is tried first, then the benchmark root (the order check.py uses).
    """
    rel = normalize_path(rel)
    for base in (corpus_dir, root):
        candidate = base / rel
        if candidate.is_file():
            try:
                return candidate.relative_to(root).as_posix(), candidate
            except ValueError:
                return OUTSIDE_ROOT + rel, candidate
    return None


def resolve_target(raw: object, corpus_dir: Path, root: Path) -> ResolvedTarget:
    """Parse one annotation target and rewrite it relative to the benchmark root."""
    try:
        target = parse_target(raw)
    except (ValueError, TypeError) as exc:
        raise SuiteError(str(exc)) from None
    label = target.label()
    found = resolve_path(target.path, corpus_dir, root)
    if found is None:
        return ResolvedTarget(label, target, False)
    rel, file = found
    exists = target.start_line is None or target.start_line <= _line_count(file)
    return ResolvedTarget(label, Target(rel, target.start_line, target.end_line), exists)


def _resolve_seed(raw: object, corpus_dir: Path, root: Path) -> Seed:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not isinstance(raw.get("line"), int):
        raise SuiteError(f"seed must be {{path, line}}: {raw!r}")
    found = resolve_path(raw["path"], corpus_dir, root)
    if found is None:
        return Seed(normalize_path(raw["path"]), raw["line"], False)
    return Seed(found[0], raw["line"], not found[0].startswith(OUTSIDE_ROOT))


def load_queries(items: object, corpus_dir: Path, root: Path, source: str) -> tuple[Query, ...]:
    """Turn one annotation file's list into resolved queries."""
    if not isinstance(items, list):
        raise SuiteError(f"{source}: expected a list of queries")
    queries: list[Query] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            raise SuiteError(f"{source}: item {i} has no 'query' string")
        targets = tuple(
            resolve_target(t, corpus_dir, root) for t in [*item.get("relevant", []), *item.get("secondary", [])]
        )
        seed = _resolve_seed(item["seed"], corpus_dir, root) if "seed" in item else None
        related = tuple(resolve_target(t, corpus_dir, root) for t in item.get("related", []))
        queries.append(Query(i, item["query"], str(item.get("category", "uncategorized")), targets, seed, related))
    return tuple(queries)


def load_suite(annotations: Path, corpora: Path, repos: list[str] | None = None) -> list[Corpus]:
    """Read repos.json (next to the annotations folder) and every selected annotation file."""
    if not annotations.is_dir():
        raise SuiteError(f"annotations folder not found: {annotations}")
    repos_file = annotations.parent / "repos.json"
    if not repos_file.is_file():
        raise SuiteError(f"repos.json not found next to the annotations folder: {repos_file}")
    try:
        specs = {r["name"]: r for r in json.loads(repos_file.read_text(encoding="utf-8"))}
    except (ValueError, KeyError, TypeError) as exc:
        raise SuiteError(f"{repos_file}: malformed ({exc})") from None
    names = sorted(p.stem for p in annotations.glob("*.json") if p.stem in specs)
    if repos:
        unknown = sorted(set(repos) - set(names))
        if unknown:
            raise SuiteError(f"unknown repos: {', '.join(unknown)} (known: {', '.join(names)})")
        names = [n for n in names if n in repos]
    suite: list[Corpus] = []
    for name in names:
        spec = specs[name]
        corpus_dir = corpora / name
        root = corpus_dir / (spec.get("benchmark_root") or "")
        path = annotations / f"{name}.json"
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise SuiteError(f"{path}: invalid JSON ({exc})") from None
        queries = load_queries(items, corpus_dir, root, str(path))
        suite.append(Corpus(name, str(spec.get("language", "unknown")), corpus_dir, root, queries))
    return suite
