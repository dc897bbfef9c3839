"""`codepith mcp [PATH]`: the MCP server over stdio (official `mcp` SDK, low-level Server).

Thin by design: it validates arguments, runs the call in a worker thread (indexing is CPU work and
must not stall the protocol loop) and turns every failure into a one-line tool error. Repository
resolution and warm indexes live in ``codepith.service.repos``. The index, numpy and the model are
imported on the first tool call.

Fast start: importing the SDK alone costs ~1.7 s of CPU (pydantic models for two protocol
revisions), more than a client should wait for ``tools/list``. So a small stdlib "front" answers
``initialize``, ``tools/list`` and ``ping`` straight away while the SDK loads in a thread; once it
is loaded (or any other request arrives) the connection is handed to the SDK server, which first
replays the handshake (its reply is dropped) and then serves everything else. The front only ever
answers what the SDK would answer word for word (tests compare the two; CODEPITH_MCP_FRONT=0 turns
the front off).
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codepith._version import __version__
from codepith.errors import CodepithError
from codepith.service.repos import Repos, looks_like_url, parse_git_url, resolve_repo

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

log = logging.getLogger("codepith")

MAX_READ_LINES = 300
MAX_TOP_K = 50
MAX_MAX_CHARS = 100_000
PROGRESS_EVERY = 0.25  # seconds between progress notifications while indexing

INSTRUCTIONS = (
    "Hybrid (BM25 + embedding) code search over local repositories. Call search first; "
    "follow the read_snippet(...) calls in the results to see more lines."
)

_REPO = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    "description": "Folder, folder list (one corpus) or https git URL (optional @ref). Default: server's.",
}
_REF = {"type": "string", "description": "Branch, tag or commit for a git URL."}
_REPO_SHORT = {"anyOf": _REPO["anyOf"], "description": "As in search."}
_REF_SHORT = {"type": "string"}


def _int(description: str, minimum: int, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def _tool(
    name: str, description: str, props: dict[str, Any], required: list[str], open_world: bool
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": open_world},
    }


TOOLS: list[dict[str, Any]] = [
    _tool(
        "search",
        "Find code by meaning or identifiers. Returns the best matching lines, numbered, with read_snippet "
        "calls for the rest. Reflects files saved since the last call.",
        {
            "query": {"type": "string", "description": "Natural language or code terms."},
            "repo": _REPO,
            "ref": _REF,
            "top_k": _int("Results.", 1, 5),
            "content": {"type": "string", "enum": ["code", "docs", "config", "all"], "default": "code"},
            "max_chars": _int("Reply budget in characters.", 200, 6000),
        },
        ["query"],
        True,
    ),
    _tool(
        "find_related",
        "Code similar to the chunk at file_path:line (a result path).",
        {
            "file_path": {"type": "string"},
            "line": _int("1-based line.", 1),
            "repo": _REPO_SHORT,
            "ref": _REF_SHORT,
            "top_k": _int("Results.", 1, 5),
        },
        ["file_path", "line"],
        False,
    ),
    _tool(
        "read_snippet",
        f"Numbered lines start_line..end_line of a file in the repo (at most {MAX_READ_LINES}).",
        {
            "path": {"type": "string", "description": "Path as shown in results."},
            "start_line": _int("1-based.", 1),
            "end_line": _int("Inclusive.", 1),
            "repo": _REPO_SHORT,
            "ref": _REF_SHORT,
        },
        ["path", "start_line", "end_line"],
        False,
    ),
    _tool(
        "index_status",
        "Indexed files, chunks, languages, skipped files with reasons, last refresh, model.",
        {
            "repo": _REPO_SHORT,
            "ref": _REF_SHORT,
            "content": {"type": "string", "enum": ["code", "docs", "config", "all"], "default": "code"},
        },
        [],
        True,
    ),
]
_SCHEMAS = {t["name"]: t["inputSchema"] for t in TOOLS}


# -- argument checks: one clear line per mistake ----------------------------------------------------
def _check_args(name: str, args: dict[str, Any]) -> None:
    schema = _SCHEMAS[name]
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise CodepithError(f"{name}: unknown argument {unknown[0]!r}; expected {', '.join(props)}")
    for key in schema["required"]:
        if args.get(key) is None:
            raise CodepithError(f"{name}: missing required argument {key!r}")


def _get_int(args: dict[str, Any], key: str, default: int | None, low: int, high: int | None = None) -> int:
    value = args.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodepithError(f"{key} must be a whole number, got {value!r}")
    if value < low:
        raise CodepithError(f"{key} must be at least {low}, got {value}")
    if high is not None and value > high:
        raise CodepithError(f"{key} must be at most {high}, got {value}")
    return value


def _get_str(args: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = args.get(key, default)
    if value is not None and not isinstance(value, str):
        raise CodepithError(f"{key} must be a string, got {type(value).__name__}")
    return value


def _get_repo(args: dict[str, Any]) -> str | list[str] | None:
    value = args.get("repo")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise CodepithError("repo must be a folder path, a list of folder paths, or an https:// git URL")


def _content(args: dict[str, Any], default: str) -> str:
    value = _get_str(args, "content", default) or default
    if value not in ("code", "docs", "config", "all"):
        raise CodepithError(f"unknown content {value!r}; choose code, docs, config or all")
    return value


# -- the service the handlers call (runs in a worker thread) -----------------------------------------
Notify = Callable[[float, float | None, str], None]


class CodepithTools:
    """The four tools as plain synchronous methods over a ``Repos`` LRU; each returns the reply text."""

    def __init__(
        self, base: Path, default: str | None = None, content: str = "code", model: str | None = None
    ) -> None:
        self.repos = Repos(base, default=default, content=content, model=model)
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

    def _read_call(self, repo: object, ref: str | None) -> Callable[[str, int, int], str]:
        from codepith.output.read import mcp_read_call

        if repo is None:
            return mcp_read_call
        import json

        extra = f", repo={json.dumps(repo)}" + (f", ref={json.dumps(ref)}" if ref else "")

        def call(path: str, start: int, end: int) -> str:
            return mcp_read_call(path, start, end)[:-1] + extra + ")"

        return call

    def search(self, args: dict[str, Any], notify: Notify | None = None) -> str:
        from codepith.output.packets import render_packet

        query = _get_str(args, "query") or ""
        if not query.strip():
            raise CodepithError("empty query: say what code to find")
        top_k = _get_int(args, "top_k", 5, 1, MAX_TOP_K)
        max_chars = _get_int(args, "max_chars", 6000, 200, MAX_MAX_CHARS)
        content = _content(args, self.default_content)
        repo, ref = _get_repo(args), _get_str(args, "ref")
        roots = self.repos.resolve(repo, ref, status=self._status(notify))
        with self.repos.index(roots, content, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            results = index.search(query, top_k=top_k, refresh=False)
            text = render_packet(query, results, max_chars=max_chars, read_call=self._read_call(repo, ref))
            _record("search", len(results), text, lambda: index.source_chars(results))
        return text

    def find_related(self, args: dict[str, Any], notify: Notify | None = None) -> str:
        from codepith.output.packets import related_query, render_packet

        file_path = from_wire_path(_get_str(args, "file_path") or "")
        if not file_path.strip():
            raise CodepithError("empty file_path")
        line = _get_int(args, "line", None, 1)
        top_k = _get_int(args, "top_k", 5, 1, MAX_TOP_K)
        repo, ref = _get_repo(args), _get_str(args, "ref")
        roots = self.repos.resolve(repo, ref, clone=False)
        with self.repos.index(roots, None, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            results = index.find_related(file_path, line, top_k=top_k, refresh=False)
            label = related_query(index.chunk_at(file_path, line))
            text = render_packet(label, results, max_chars=6000, read_call=self._read_call(repo, ref))
            _record("related", len(results), text, lambda: index.source_chars(results))
        return text

    def read_snippet(self, args: dict[str, Any], notify: Notify | None = None) -> str:
        from codepith.output.read import format_read, mcp_read_call, read_lines

        path = from_wire_path(_get_str(args, "path") or "")
        start = _get_int(args, "start_line", None, 1)
        end = _get_int(args, "end_line", None, 1)
        repo, ref = _get_repo(args), _get_str(args, "ref")
        roots = self.repos.resolve(repo, ref, clone=False)
        prefix = ""
        root = roots[0]
        rel = path
        if len(roots) > 1:  # result paths carry the repository's folder name: map it back
            with self.repos.index(roots, None, progress=self._progress(notify)) as index:
                root, rel = index.locate(path)
            prefix = path[: len(path) - len(rel)] if path.endswith(rel) else ""
        result = read_lines(root, rel, start, end, max_lines=MAX_READ_LINES)
        base_call = self._read_call(repo, ref) if repo is not None else mcp_read_call
        text = format_read(result, read_call=lambda p, s, e: base_call(prefix + p, s, e))
        if prefix:
            text = text.replace(f"FILE {result.rel_path}", f"FILE {prefix}{result.rel_path}", 1)

        def source() -> int:
            from codepith.output.savings import source_chars

            return source_chars(root, [result.rel_path])

        _record("read", 1, text, source)
        return text

    def index_status(self, args: dict[str, Any], notify: Notify | None = None) -> str:
        content = _content(args, self.default_content)
        repo, ref = _get_repo(args), _get_str(args, "ref")
        roots = self.repos.resolve(repo, ref, status=self._status(notify))
        with self.repos.index(roots, content, progress=self._progress(notify)) as index:
            index.refresh(progress=self._progress(notify))
            st = index.status()
        return format_status(st)


def format_status(st: Any) -> str:
    """A compact status report for an agent (``st`` is a ``codepith.api.IndexStatus``)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.refreshed_at)) if st.refreshed_at else "never"
    lines = [
        "repository: " + ", ".join(st.roots),
        f"content: {st.content}  model: {st.model} ({st.model_digest[:12]})",
        f"files: {st.files}  chunks: {st.chunks}",
        "languages: " + (", ".join(f"{lang} {n}" for lang, n in st.languages.items()) or "none"),
        f"last refresh: {when}",
    ]
    skipped = st.skipped
    lines.append(f"skipped: {skipped.total} files" + (":" if skipped.total else ""))
    for why, n in sorted(skipped.counts.items(), key=lambda kv: -kv[1]):
        examples = ", ".join(skipped.examples.get(why, []))
        lines.append(f"  {why}: {n}" + (f" (e.g. {examples})" if examples else ""))
    return "\n".join(lines)


def _record(call: str, results: int, text: str, source: Callable[[], int]) -> None:
    """Savings are best effort: nothing here may fail a tool call."""
    try:
        from codepith.output import savings

        savings.record(call, results, len(text), source())
    except Exception as exc:  # noqa: BLE001 - stats never break a call
        log.debug("savings not recorded: %s", exc)


# -- the MCP wiring ------------------------------------------------------------------------------------
Handler = Callable[[dict[str, Any], Notify | None], str]


def wire_text(text: str) -> str:
    """JSON cannot carry the lone surrogates that stand for undecodable bytes in file names; show
    them as ``\\xNN`` (read_snippet maps that spelling back), everything else unchanged."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def from_wire_path(path: str) -> str:
    """The inverse of wire_text for a path argument: ``caf\\xe9.py`` -> the name with the byte 0xE9."""
    return re.sub(r"\\x([89a-f][0-9a-f])", lambda m: chr(0xDC00 + int(m.group(1), 16)), path)


def _error(message: str) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=wire_text(message))], is_error=True)


def build_server(tools: CodepithTools) -> Server[Any]:
    """The low-level SDK server with the four tools wired to ``tools``."""
    import anyio.from_thread
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [types.Tool.model_validate(t) for t in TOOLS]
    handlers: dict[str, Handler] = {
        "search": tools.search,
        "find_related": tools.find_related,
        "read_snippet": tools.read_snippet,
        "index_status": tools.index_status,
    }

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        args = dict(params.arguments or {})
        handler = handlers.get(name)
        if handler is None:
            return _error(f"unknown tool {name!r}; tools: {', '.join(handlers)}")

        def notify(progress: float, total: float | None, message: str) -> None:
            try:
                anyio.from_thread.run(ctx.session.report_progress, progress, total, message)
            except Exception as exc:  # noqa: BLE001 - a lost progress note must not fail the call
                log.debug("progress not sent: %s", exc)

        try:
            _check_args(name, args)
            text = await anyio.to_thread.run_sync(lambda: handler(args, notify))
        except CodepithError as exc:
            return _error(str(exc) or type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - one bad call must not take the server down
            log.exception("tool %s failed", name)
            return _error(f"internal error in {name}: {type(exc).__name__}: {exc}")
        return types.CallToolResult(content=[types.TextContent(text=wire_text(text))])

    return Server(
        "codepith",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


# -- stdio, and the fast front that answers the handshake while the SDK loads ---------------------------
FRONT_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # handshake revisions of the SDK
_REPLAYED_ID = "codepith-front-initialize"


class _Wire:
    """The protocol's stdin/stdout, moved off fds 0/1 so nothing else (print, a child) can touch them."""

    def __init__(self) -> None:
        self.in_fd = os.dup(0)
        self.out_fd = os.dup(1)
        os.set_inheritable(self.in_fd, False)
        os.set_inheritable(self.out_fd, False)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)  # stray writes to stdout land on stderr
        self.buf = bytearray()
        self.eof = False
        self.out_lock = threading.Lock()

    def write_line(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        with self.out_lock:
            view = memoryview(data)
            while view:
                n = os.write(self.out_fd, view)
                view = view[n:]

    def read_blocking(self) -> bytes:
        return self.readline() or b""

    def readline(self, timeout: float | None = None) -> bytes | None:
        """One line (with its newline); b"" at end of input; None when ``timeout`` passed without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[: nl + 1])
                del self.buf[: nl + 1]
                return line
            if self.eof:
                line = bytes(self.buf)
                self.buf.clear()
                return line
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.in_fd], [], [], left)[0]:
                    return None
            chunk = os.read(self.in_fd, 65536)
            if not chunk:
                self.eof = True
            self.buf.extend(chunk)


def _front_answer(msg: Any, initialized: bool) -> dict[str, Any] | None:
    """The reply the SDK would give to ``msg``, when the front can give it; else None (hand over)."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "id" not in msg:
        return None
    method, params = msg.get("method"), msg.get("params")
    if method == "initialize" and not initialized:
        if not isinstance(params, dict) or params.get("protocolVersion") not in FRONT_VERSIONS:
            return None
        if not isinstance(params.get("clientInfo"), dict) or not isinstance(params.get("capabilities"), dict):
            return None
        result: dict[str, Any] = {
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": INSTRUCTIONS,
            "protocolVersion": params["protocolVersion"],
            "serverInfo": {"name": "codepith", "version": __version__},
        }
    elif method == "tools/list" and initialized and (params is None or params == {}):
        result = {"tools": TOOLS}
    elif method == "ping" and initialized and (params is None or params == {}):
        result = {}
    else:
        return None
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def _front(wire: _Wire, ready: threading.Event) -> list[bytes]:
    """Answer the handshake until the SDK is loaded; returns the lines the SDK must see first."""
    replay: list[bytes] = []
    initialized = False
    while not ready.is_set():
        line = wire.readline(timeout=0.05)
        if line is None:
            continue
        if not line.strip():
            if line == b"":
                break
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            replay.append(line)
            break
        if initialized and isinstance(msg, dict) and msg.get("method") == "notifications/initialized":
            replay.append(line)  # the SDK must see it too, in order
            continue
        answer = _front_answer(msg, initialized)
        if answer is None:
            replay.append(line)
            break
        if msg.get("method") == "initialize":
            msg["id"] = _REPLAYED_ID  # the SDK sees the same handshake; its reply is dropped
            replay.append(json.dumps(msg).encode("utf-8") + b"\n")
            initialized = True
        wire.write_line(json.dumps(answer, separators=(",", ":")))
    return replay


class _SdkStdin:
    """Lines for the SDK's stdio transport: the replayed handshake, then the wire."""

    def __init__(self, wire: _Wire, replay: list[bytes]) -> None:
        self.wire = wire
        self.replay = list(replay)

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio.to_thread

        for line in self.replay:
            yield line.decode("utf-8", errors="replace")
        while True:
            line = await anyio.to_thread.run_sync(self.wire.read_blocking, abandon_on_cancel=True)
            if not line:
                return
            yield line.decode("utf-8", errors="replace")


class _SdkStdout:
    """The SDK's writes to the wire, minus its reply to the replayed handshake."""

    def __init__(self, wire: _Wire, drop_first_reply: bool) -> None:
        self.wire = wire
        self.dropping = drop_first_reply
        self.pending = ""

    async def write(self, text: str) -> None:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if self.dropping and _REPLAYED_ID in line:
                try:
                    if json.loads(line).get("id") == _REPLAYED_ID:
                        self.dropping = False
                        continue
                except ValueError:
                    pass
            self.wire.write_line(line)

    async def flush(self) -> None:
        return None


async def _run_sdk(server: Server[Any], wire: _Wire, replay: list[bytes]) -> None:
    from mcp.server.stdio import stdio_server

    dropping = any(_REPLAYED_ID.encode() in line for line in replay)
    stdin, stdout = _SdkStdin(wire, replay), _SdkStdout(wire, dropping)
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _load_sdk(done: threading.Event, failed: list[BaseException]) -> None:
    try:
        import mcp.server.lowlevel  # noqa: F401
        import mcp.server.stdio  # noqa: F401
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread
        failed.append(exc)
    finally:
        done.set()


def serve(path: str | None, content: str = "code", model: str | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin. Logs go to stderr, never stdout."""
    logging.basicConfig(
        level=logging.WARNING, format="codepith: %(levelname)s: %(message)s", stream=sys.stderr
    )
    logging.captureWarnings(True)  # warnings reach stderr through logging, never stdout
    cwd = Path(os.getcwd()).resolve()
    default: str | None = None
    base = cwd
    if path:
        if looks_like_url(path):
            parse_git_url(path)  # refuse a bad URL now; it is cloned on the first call that needs it
            default = path
        else:
            base = resolve_repo(path, base=cwd)[0]  # an unknown folder fails here, before serving
    tools = CodepithTools(base, default=default, content=content, model=model)
    wire = _Wire()
    ready = threading.Event()
    failed: list[BaseException] = []
    replay: list[bytes] = []
    if os.environ.get("CODEPITH_MCP_FRONT", "1") == "0":
        _load_sdk(ready, failed)
    else:
        threading.Thread(
            target=_load_sdk, args=(ready, failed), name="codepith-sdk-import", daemon=True
        ).start()
        replay = _front(wire, ready)
        if wire.eof and not wire.buf and not replay:
            return  # the client left during the handshake
        ready.wait()
    if failed:
        raise CodepithError(f"the mcp package could not be loaded: {failed[0]}")
    import anyio

    try:
        anyio.run(_run_sdk, build_server(tools), wire, replay)
    except KeyboardInterrupt:
        pass
