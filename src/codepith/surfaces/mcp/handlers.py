"""Wire arguments -> typed service calls: one small function per tool, all checks in args.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codepith.errors import CodepithError
from codepith.limits import MAX_MAX_CHARS, MAX_TOP_K, MIN_MAX_CHARS
from codepith.runner.tool import run_tests_reply
from codepith.service.tools import JSON_OFF, JsonLines, Notify, ToolService
from codepith.surfaces.mcp.args import get_content, get_format, get_int, get_repo, get_snippet_lines, get_str
from codepith.surfaces.mcp.schemas import DEFAULT_READ_CHARS, MAX_READ_LINES, MAX_TIMEOUT_S, MIN_READ_CHARS
from codepith.surfaces.mcp.wire import from_wire_path

Handler = Callable[[dict[str, Any], Notify | None], str]


def _json_lines(args: dict[str, Any]) -> JsonLines:
    """JSON_OFF for a packet; else the snippet lines of a JSON reply (None = whole chunk)."""
    if get_format(args) != "json":
        if "max_snippet_lines" in args:
            raise CodepithError("max_snippet_lines applies to format='json' only")
        return JSON_OFF
    if "max_chars" in args:  # not silently ignored: a JSON reply is bounded by top_k and max_snippet_lines
        raise CodepithError("max_chars applies to format='packet' only; bound a JSON reply with max_snippet_lines")
    return get_snippet_lines(args)


def handlers(service: ToolService) -> dict[str, Handler]:
    """The tool name -> handler table the SDK wiring dispatches on."""

    def search(args: dict[str, Any], notify: Notify | None) -> str:
        return service.search(
            get_str(args, "query") or "",
            top_k=get_int(args, "top_k", 5, 1, MAX_TOP_K),
            max_chars=get_int(args, "max_chars", 6000, MIN_MAX_CHARS, MAX_MAX_CHARS),
            content=get_content(args, service.default_content),
            repo=get_repo(args),
            ref=get_str(args, "ref"),
            notify=notify,
            json_lines=_json_lines(args),
        )

    def find_related(args: dict[str, Any], notify: Notify | None) -> str:
        return service.find_related(
            from_wire_path(get_str(args, "file_path") or ""),
            get_int(args, "line", None, 1),
            top_k=get_int(args, "top_k", 5, 1, MAX_TOP_K),
            repo=get_repo(args),
            ref=get_str(args, "ref"),
            notify=notify,
            json_lines=_json_lines(args),
        )

    def read_snippet(args: dict[str, Any], notify: Notify | None) -> str:
        return service.read_snippet(
            from_wire_path(get_str(args, "path") or ""),
            get_int(args, "start_line", None, 1),
            get_int(args, "end_line", None, 1),
            max_lines=MAX_READ_LINES,
            max_chars=get_int(args, "max_chars", DEFAULT_READ_CHARS, MIN_READ_CHARS, MAX_MAX_CHARS),
            repo=get_repo(args),
            ref=get_str(args, "ref"),
            notify=notify,
        )

    def outline(args: dict[str, Any], notify: Notify | None) -> str:
        return service.outline(
            from_wire_path(get_str(args, "path") or ""),
            max_chars=get_int(args, "max_chars", 4000, MIN_MAX_CHARS, MAX_MAX_CHARS),
            focus=get_str(args, "focus"),
            repo=get_repo(args),
            ref=get_str(args, "ref"),
            notify=notify,
        )

    def index_status(args: dict[str, Any], notify: Notify | None) -> str:
        return service.index_status(
            content=get_content(args, service.default_content),
            repo=get_repo(args),
            ref=get_str(args, "ref"),
            notify=notify,
        )

    def run_tests(args: dict[str, Any], notify: Notify | None) -> str:
        return run_tests_reply(
            service.repos,
            runner=get_str(args, "runner"),
            select=get_str(args, "select"),
            timeout_s=get_int(args, "timeout_s", 300, 1, MAX_TIMEOUT_S),
            max_chars=get_int(args, "max_chars", 6000, 200, MAX_MAX_CHARS),
            repo=get_repo(args),
            status=(lambda message: notify(0.0, None, message)) if notify else None,
        )

    return {
        "search": search,
        "find_related": find_related,
        "read_snippet": read_snippet,
        "outline": outline,
        "index_status": index_status,
        "run_tests": run_tests,
    }
