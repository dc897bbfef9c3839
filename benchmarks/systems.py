"""Systems under test, behind one small interface so the runner treats them alike.

A backend builds an index for a folder (with a fresh, empty cache dir so the build is cold) and
answers `search` / `related` with `Hit`s. A system is a backend plus an optional search mode, so
`codepith`, `codepith-dense` and `codepith-lexical` share one index build per corpus.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from metrics import Hit


class BenchSystemError(Exception):
    """A system cannot be loaded or run (missing package, bad model folder): one-line report."""


class BuiltIndex(Protocol):
    """What the runner needs from a built index."""

    def search(self, query: str, k: int, mode: str | None) -> list[Hit]: ...

    def related(self, path: str, line: int, k: int) -> list[Hit] | None:
        """Chunks related to the seed location; None when the system has no such feature."""
        ...

    def stats(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Backend:
    """How to build an index: `build(root, model_dir)`; `cache_env` names the cache-dir variable."""

    name: str
    build: Callable[[Path, Path | None], BuiltIndex]
    cache_env: str | None


@dataclass(frozen=True)
class System:
    """A named configuration: a backend and the search mode passed to it (None = default)."""

    name: str
    backend: str
    mode: str | None = None


def _hits_from(results: list[Any]) -> list[Hit]:
    """Both codepith and semble results carry `.chunk.file_path/start_line/end_line`."""
    return [
        Hit(str(r.chunk.file_path).replace("\\", "/"), int(r.chunk.start_line), int(r.chunk.end_line)) for r in results
    ]


# --- codepith -----------------------------------------------------------------------------------


class _CodepithIndex:
    def __init__(self, index: Any, refresh: bool, threads: int = 1) -> None:
        self._threads = threads  # Python threads alive when the build began (more than 1: no forked workers)
        self._index = index
        self._refresh = refresh  # False skips the per-call check of the files on disk

    def search(self, query: str, k: int, mode: str | None) -> list[Hit]:
        kwargs: dict[str, Any] = {} if self._refresh else {"refresh": False}
        if mode is not None:
            kwargs["mode"] = mode
        return _hits_from(self._index.search(query, top_k=k, **kwargs))

    def related(self, path: str, line: int, k: int) -> list[Hit] | None:
        if not hasattr(self._index, "find_related"):
            return None
        from codepith.errors import CodepithError

        kwargs: dict[str, Any] = {} if self._refresh else {"refresh": False}
        try:
            return _hits_from(self._index.find_related(path, line, top_k=k, **kwargs))
        except CodepithError:  # seed not in the index (e.g. an unindexed file): nothing found
            return []

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {"threads_at_build": self._threads}
        chunks = getattr(self._index, "chunks", None)
        if chunks is not None:
            out["chunks"] = len(chunks)
        timings = getattr(self._index, "timings", None)  # per-phase build timings, if the index exposes them
        if isinstance(timings, dict):
            out["timings"] = dict(timings)
        return out


def _build_codepith(root: Path, model_dir: Path | None, refresh: bool = True, watch: bool = False) -> BuiltIndex:
    try:
        import codepith
    except ImportError as exc:
        raise BenchSystemError(f"codepith is not importable ({exc}); run with PYTHONPATH=src") from None
    if not hasattr(codepith, "Index"):
        raise BenchSystemError("codepith.Index does not exist yet")
    model = None if model_dir is None else str(model_dir)
    threads = threading.active_count()
    index = (
        codepith.Index.from_path(str(root), model=model, watch=True)
        if watch
        else codepith.Index.from_path(str(root), model=model)
    )
    return _CodepithIndex(index, refresh, threads)


def _build_codepith_no_refresh(root: Path, model_dir: Path | None) -> BuiltIndex:
    return _build_codepith(root, model_dir, refresh=False)


def _build_codepith_watch(root: Path, model_dir: Path | None) -> BuiltIndex:
    """A long-lived process's index: a watcher reports what moved, so a search refreshes only that."""
    return _build_codepith(root, model_dir, watch=True)


# --- semble (benchmark-only comparison; never a runtime dependency of codepith) -------------------


class _SembleIndex:
    def __init__(self, index: Any) -> None:
        self._index = index

    def search(self, query: str, k: int, mode: str | None) -> list[Hit]:
        if mode is not None:
            raise BenchSystemError(f"semble has no search mode {mode!r}")
        return _hits_from(self._index.search(query, top_k=k))

    def related(self, path: str, line: int, k: int) -> list[Hit] | None:
        from semble.utils import resolve_chunk

        chunk = resolve_chunk(self._index.chunks, path, line)
        if chunk is None:
            return []
        return _hits_from(self._index.find_related(chunk, top_k=k))

    def stats(self) -> dict[str, Any]:
        return {"chunks": len(self._index.chunks)}


def _build_semble(root: Path, model_dir: Path | None) -> BuiltIndex:
    try:
        from semble import SembleIndex
    except ImportError as exc:
        raise BenchSystemError(f"semble is not installed ({exc}); pip install 'codepith[bench]'") from None
    if model_dir is None:
        raise BenchSystemError("semble needs --model (no network to fetch its default model)")
    _no_tqdm_monitor()
    return _SembleIndex(SembleIndex.from_path(root, model_path=str(model_dir)))


def _no_tqdm_monitor() -> None:
    """Keep semble's progress bars from starting tqdm's monitor thread in this shared process.

    That thread (it only watches for stalled bars; semble's bars are off) outlives semble's build, and
    codepith forks index workers only in a process with no other thread (``index.workers.can_fork``),
    so after semble's first build every later codepith build of a side-by-side run ran on one core,
    as no ``codepith index`` process ever does (measured 2026-12-01: per-repo median index ratio 0.85
    with the thread, 0.73 without it)."""
    try:
        import tqdm
    except ImportError:
        return
    tqdm.tqdm.monitor_interval = 0


# --- grep: a model-free toy baseline, so the harness runs end to end without any model --------------

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
_SOURCE_SUFFIXES = frozenset(
    ".py .js .mjs .cjs .ts .tsx .go .rs .rb .php .c .cc .cpp .h .hpp .java .kt .sh .bash .bats".split()
)


class _GrepIndex:
    """Whole-file documents ranked by summed log term frequency of the query's words."""

    def __init__(self, files: dict[str, tuple[Counter[str], int]]) -> None:
        self._files = files

    def search(self, query: str, k: int, mode: str | None) -> list[Hit]:
        words = {w.lower() for w in _WORD.findall(query)}
        scored = []
        for path, (counts, n_lines) in self._files.items():
            score = sum(math.log1p(counts[w]) for w in words) + sum(2.0 for w in words if w in path.lower())
            if score > 0:
                scored.append((score, path, n_lines))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [Hit(path, 1, max(1, n)) for _, path, n in scored[:k]]

    def related(self, path: str, line: int, k: int) -> list[Hit] | None:
        return None

    def stats(self) -> dict[str, Any]:
        return {"chunks": len(self._files)}


def _build_grep(root: Path, model_dir: Path | None) -> BuiltIndex:
    files: dict[str, tuple[Counter[str], int]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix in _SOURCE_SUFFIXES and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            words: Counter[str] = Counter()
            for token in _WORD.findall(text):
                words[token.lower()] += 1
                for part in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", token):
                    if part.lower() != token.lower():
                        words[part.lower()] += 1
            files[path.relative_to(root).as_posix()] = (words, text.count("\n") + 1)
    return _GrepIndex(files)


BACKENDS: dict[str, Backend] = {
    "codepith": Backend("codepith", _build_codepith, "CODEPITH_CACHE_DIR"),
    "codepith-norefresh": Backend("codepith-norefresh", _build_codepith_no_refresh, "CODEPITH_CACHE_DIR"),
    "codepith-watch": Backend("codepith-watch", _build_codepith_watch, "CODEPITH_CACHE_DIR"),
    "semble": Backend("semble", _build_semble, "SEMBLE_CACHE_LOCATION"),
    "grep": Backend("grep", _build_grep, None),
}

SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        System("codepith", "codepith"),
        System("codepith-dense", "codepith", "dense"),
        System("codepith-lexical", "codepith", "lexical"),
        System("codepith-norefresh", "codepith-norefresh"),
        System("codepith-watch", "codepith-watch"),
        System("semble", "semble"),
        System("grep", "grep"),
    )
}


@contextmanager
def cold_cache(backend: Backend) -> Iterator[Path | None]:
    """Point the backend's cache-dir variable at a fresh temp dir for the duration of the block."""
    if backend.cache_env is None:
        yield None
        return
    previous = os.environ.get(backend.cache_env)
    with tempfile.TemporaryDirectory(prefix=f"bench-{backend.name}-cache-") as tmp:
        os.environ[backend.cache_env] = tmp
        try:
            yield Path(tmp)
        finally:
            if previous is None:
                os.environ.pop(backend.cache_env, None)
            else:
                os.environ[backend.cache_env] = previous


def warm_up(names: Sequence[str], model: Path | None) -> None:
    """Imports, model loads and first-use costs of each system, on a one-file tree, before any timing."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "w.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
        for name in names:
            with cold_cache(BACKENDS[name]):
                BACKENDS[name].build(Path(tmp), model).search("add", 10, None)


def best_cold_builds(names: Sequence[str], root: Path, model: Path | None, reps: int) -> dict[str, float]:
    """Each system's fastest of ``reps`` builds of ``root``, each in a fresh cache, the systems in turn
    (one build of a small repository swings by 2x on a shared machine)."""
    best = {name: float("inf") for name in names}
    for _ in range(reps):
        for name in names:
            with cold_cache(BACKENDS[name]):
                started = time.perf_counter()
                BACKENDS[name].build(root, model)
                best[name] = min(best[name], time.perf_counter() - started)
    return best


def default_model_dir(repo_root: Path) -> Path | None:
    """The bundled model folder if it has been built, else the first folder in /work/models."""
    bundled = repo_root / "src" / "codepith" / "model" / "data"
    if bundled.is_dir() and any(bundled.iterdir()):
        return bundled
    models = Path("/work/models")
    if models.is_dir():
        for candidate in sorted(models.iterdir()):
            if (candidate / "config.json").is_file() or (candidate / "model.safetensors").is_file():
                return candidate
    return None
