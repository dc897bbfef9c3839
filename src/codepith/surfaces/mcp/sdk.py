"""The official SDK's low-level server, wired to the handlers and to the wire (after the front)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from codepith._version import __version__
from codepith.errors import CodepithError
from codepith.surfaces.mcp.args import check_args
from codepith.surfaces.mcp.front import REPLAYED_ID
from codepith.surfaces.mcp.handlers import Handler
from codepith.surfaces.mcp.schemas import INSTRUCTIONS, TOOLS
from codepith.surfaces.mcp.wire import Wire, wire_text

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

log = logging.getLogger("codepith")


def _error(message: str) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=wire_text(message))], is_error=True)


def build_server(handlers: dict[str, Handler]) -> Server[Any]:
    """The low-level SDK server; each call runs its handler in a worker thread."""
    import anyio.from_thread
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [types.Tool.model_validate(t) for t in TOOLS]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
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
            check_args(name, args)
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


class _SdkStdin:
    """Lines for the SDK's stdio transport: the replayed handshake, then the wire; ``on_eof`` runs when
    the client closes it (calls still running are stopped, so the server can exit)."""

    def __init__(self, wire: Wire, replay: list[bytes], on_eof: Callable[[], None] | None = None) -> None:
        self.wire = wire
        self.replay = list(replay)
        self.on_eof = on_eof

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio.to_thread

        for line in self.replay:
            yield line.decode("utf-8", errors="replace")
        while True:
            line = await anyio.to_thread.run_sync(self.wire.read_blocking, abandon_on_cancel=True)
            if not line:
                if self.on_eof is not None:
                    self.on_eof()
                return
            yield line.decode("utf-8", errors="replace")


class _SdkStdout:
    """The SDK's writes to the wire, minus its reply to the replayed handshake."""

    def __init__(self, wire: Wire, drop_first_reply: bool) -> None:
        self.wire = wire
        self.dropping = drop_first_reply
        self.pending = ""

    async def write(self, text: str) -> None:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if self.dropping and REPLAYED_ID in line:
                try:
                    if json.loads(line).get("id") == REPLAYED_ID:
                        self.dropping = False
                        continue
                except ValueError:
                    pass
            self.wire.write_line(line)

    async def flush(self) -> None:
        return None


async def run_sdk(
    server: Server[Any], wire: Wire, replay: list[bytes], on_eof: Callable[[], None] | None = None
) -> None:
    from mcp.server.stdio import stdio_server

    dropping = any(REPLAYED_ID.encode() in line for line in replay)
    stdin, stdout = _SdkStdin(wire, replay, on_eof), _SdkStdout(wire, dropping)
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())


def load_sdk(done: threading.Event, failed: list[BaseException]) -> None:
    """Import the SDK (in a thread while the front answers); failures are reported by the caller."""
    try:
        import mcp.server.lowlevel  # noqa: F401
        import mcp.server.stdio  # noqa: F401
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread
        failed.append(exc)
    finally:
        done.set()
