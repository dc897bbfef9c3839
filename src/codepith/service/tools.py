"""The tools an agent calls, as typed synchronous operations over warm indexes; each returns reply text.

Transport-free: the MCP surface checks the wire arguments and calls these in a worker thread (indexing
is CPU work and must not stall the protocol loop); progress goes through the ``notify`` callback.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

from codepith.errors import CodepithError
from codepith.search.result import SearchResult
from codepith.service.confine import Roots
from codepith.service.repos import Repos

log = logging.getLogger("codepith")

PROGRESS_EVERY = 0.25  # seconds between progress notifications while indexing

Notify = Callable[[float, float | None, str], None]  # (progress, total, message)
RepoArg = str | list[str] | None
JsonLines = int | None  # a JSON reply's lines per hit (None = whole chunk, 0 = location only)
JSON_OFF = -1  # ... or this: reply with a packet


def _json_reply(results: list[SearchResult], lines: JsonLines) -> str:
    """csp's flat JSON contract: a list of ``{file_path, start_line, end_line, score, content?}``."""
    from codepith.files.names import show_bytes, wire_name
    from codepith.output.jsonfmt import result_to_dict

    # Undecodable bytes of a file name are spelt \xNN inside the values (escaped by json.dumps as any
    # backslash is), not in the dumped text, where that spelling is not JSON; the name's own backslashes
    # are doubled when it needs that to be told apart (``wire_name``), which read_snippet undoes.
    hits = [result_to_dict(r, max_snippet_lines=lines) for r in results]
    for hit in hits:
        for key, value in hit.items():
            if isinstance(value, str):
                hit[key] = wire_name(value) if key == "file_path" else show_bytes(value)
    return json.dumps(hits, ensure_ascii=False)


def _record(call: str, results: int, text: str, source: Callable[[], int]) -> None:
    """Savings are best effort: nothing here may fail a tool call."""
    try:
        from codepith.output import savings

        savings.record(call, results, len(text), source())
    except Exception as exc:  # noqa: BLE001 - stats never break a call
        log.debug("savings not recorded: %s", exc)


def _repo_suffix(repo: RepoArg, ref: str | None) -> str:
    """``, repo=..., ref=...`` for a follow-up call that must name the repository the request named."""
    if repo is None:
        return ""
    return f", repo={json.dumps(repo)}" + (f", ref={json.dumps(ref)}" if ref else "")


def outline_limit(max_chars: int) -> int:
    """Definitions a map needs at most for ``max_chars`` (a row takes 30+ characters)."""
    return max(10, max_chars // 30)


class ToolService:
    """search, find_related, read_snippet and index_status over a ``Repos`` LRU."""

    def __init__(
        self,
        base: Path,
        default: str | list[str] | None = None,
        content: str = "code",
        model: str | None = None,
        roots: Roots | None = None,
    ) -> None:
        """``roots``: the folders requests may reach (see confine.py); None only for trusted callers."""
        self.repos = Repos(base, default=default, content=content, model=model, roots=roots)
        self.default_content = content

    def _progress(self, notify: Notify | None) -> Callable[[int, int], None] | None:
        if notify is None:
            return None
        last = [0.0]

        def report(done: int, total: int) -> None:
            now = time.monotonic()
            if done < total and now - last[0] < PROGRESS_EVERY:
                return
            last[0] = now
            notify(float(done), float(total), f"indexing {done}/{total} files")

        return report

    def _status(self, notify: Notify | None) -> Callable[[str], None] | None:
        if notify is None:
            return None
        return lambda message: notify(0.0, None, message)

    def _read_call(self, repo: RepoArg, ref: str | None) -> Callable[[str, int, int], str]:
        """The read_snippet call a reply shows, naming the repo the request named."""
        from codepith.output.read import mcp_read_call

        if repo is None:
            return mcp_read_call
        extra = _repo_suffix(repo, ref)

        def call(path: str, start: int, end: int) -> str:
            return mcp_read_call(path, start, end)[:-1] + extra + ")"

        return call

    def search(
        self,
        query: str,
        *,
        top_k: int,
        max_chars: int,
        content: str | None = None,
        repo: RepoArg = None,
        ref: str | None = None,
        notify: Notify | None = None,
        json_lines: JsonLines = JSON_OFF,
    ) -> str:
        from codepith.output.packets import render_packet

        if not query.strip():
            raise CodepithError("empty query: say what code to find")
        roots = self.repos.resolve(repo, ref, status=self._status(notify))
        with self.repos.index(roots, content or self.default_content, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            results = index.search(query, top_k=top_k, refresh=False)
            if json_lines != JSON_OFF:
                text = _json_reply(results, json_lines)
            else:
                text = render_packet(
                    query,
                    results,
                    max_chars=max_chars,
                    read_call=self._read_call(repo, ref),
                    notes=index.search_notes(query),
                    enclosing=index.enclosing,
                    confident=index.confidence(query).confident,
                    file_lines=index.file_lines,
                )
            _record("search", len(results), text, lambda: index.source_chars(results))
        return text

    def find_related(
        self,
        file_path: str,
        line: int,
        *,
        top_k: int,
        repo: RepoArg = None,
        ref: str | None = None,
        notify: Notify | None = None,
        json_lines: JsonLines = JSON_OFF,
    ) -> str:
        from codepith.output.packets import related_query, render_packet

        if not file_path.strip():
            raise CodepithError("empty file_path")
        roots = self.repos.resolve(repo, ref, clone=False)
        with self.repos.index(roots, None, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            results = index.find_related(file_path, line, top_k=top_k, refresh=False)
            label = related_query(index.chunk_at(file_path, line))
            if json_lines != JSON_OFF:
                text = _json_reply(results, json_lines)
            else:
                text = render_packet(
                    label, results, max_chars=6000, read_call=self._read_call(repo, ref), enclosing=index.enclosing
                )
            _record("related", len(results), text, lambda: index.source_chars(results))
        return text

    def outline(
        self,
        path: str,
        *,
        max_chars: int,
        focus: str | None = None,
        repo: RepoArg = None,
        ref: str | None = None,
        notify: Notify | None = None,
    ) -> str:
        from codepith.output.outline import mcp_outline_call, render_outline

        roots = self.repos.resolve(repo, ref, status=self._status(notify))
        with self.repos.index(roots, None, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            result = index.outline(path, focus=focus, limit=outline_limit(max_chars))
            extra = _repo_suffix(repo, ref)

            def call(p: str) -> str:
                return mcp_outline_call(p)[:-1] + extra + ")"

            text = render_outline(result, max_chars=max_chars, read_call=self._read_call(repo, ref), outline_call=call)
        return text

    def read_snippet(
        self,
        path: str,
        start: int,
        end: int,
        *,
        max_lines: int,
        max_chars: int,
        repo: RepoArg = None,
        ref: str | None = None,
        notify: Notify | None = None,
    ) -> str:
        from codepith.files.names import show_name
        from codepith.output.read import format_read, read_lines

        roots = self.repos.resolve(repo, ref, clone=False)
        prefix = ""
        root = roots[0]
        rel = path
        if len(roots) > 1:  # result paths carry the repository's folder name: map it back
            with self.repos.index(roots, None, progress=self._progress(notify)) as index:
                root, rel = index.locate(path)
            prefix = path[: len(path) - len(rel)] if path.endswith(rel) else ""
        result = read_lines(root, rel, start, end, max_lines=max_lines, max_chars=max_chars)
        base_call = self._read_call(repo, ref)
        text = format_read(result, read_call=lambda p, s, e: base_call(prefix + p, s, e))
        if prefix:
            shown = show_name(result.rel_path)
            text = text.replace(f"FILE {shown}", f"FILE {show_name(prefix)}{shown}", 1)

        def source() -> int:
            from codepith.output.savings import source_chars

            return source_chars(root, [result.rel_path])

        _record("read", 1, text, source)
        return text

    def index_status(
        self,
        *,
        content: str | None = None,
        repo: RepoArg = None,
        ref: str | None = None,
        notify: Notify | None = None,
    ) -> str:
        from codepith.output.status import format_status

        roots = self.repos.resolve(repo, ref, status=self._status(notify))
        with self.repos.index(roots, content or self.default_content, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            st = index.status()
        return format_status(st)
