"""`codepith mcp [PATH]`: serve MCP over stdio; only protocol goes to stdout, logs to stderr.

The index, numpy and the model are imported on the first tool call; the SDK loads in a thread while
the front answers the handshake (CODEPITH_MCP_FRONT=0 turns the front off).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from codepith.errors import CodepithError
from codepith.service.repos import looks_like_url, parse_git_url, resolve_repo
from codepith.service.tools import ToolService
from codepith.surfaces.mcp.front import run_front
from codepith.surfaces.mcp.handlers import handlers
from codepith.surfaces.mcp.sdk import build_server, load_sdk, run_sdk
from codepith.surfaces.mcp.wire import Wire


def serve(path: str | None, content: str = "code", model: str | None = None) -> None:
    """Serve until the client closes stdin."""
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
    service = ToolService(base, default=default, content=content, model=model)
    wire = Wire()
    ready = threading.Event()
    failed: list[BaseException] = []
    replay: list[bytes] = []
    if os.environ.get("CODEPITH_MCP_FRONT", "1") == "0":
        load_sdk(ready, failed)
    else:
        threading.Thread(target=load_sdk, args=(ready, failed), name="codepith-sdk-import", daemon=True).start()
        replay = run_front(wire, ready)
        if wire.eof and not wire.buf and not replay:
            return  # the client left during the handshake
        ready.wait()
    if failed:
        raise CodepithError(f"the mcp package could not be loaded: {failed[0]}")
    import anyio

    from codepith.runner.process import kill_all

    _kill_tests_on_signals(kill_all)
    try:
        anyio.run(run_sdk, build_server(handlers(service)), wire, replay, kill_all)  # EOF stops test runs
    except KeyboardInterrupt:
        pass


def _kill_tests_on_signals(kill_all: Callable[[], None]) -> None:
    """A client that terminates the server must not leave a test run behind (nor wait for one): SIGTERM
    kills the running test groups, then the server dies as SIGTERM would; SIGINT kills them, then
    interrupts as usual."""

    def on_term(signum: int, frame: object) -> None:
        kill_all()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    def on_int(signum: int, frame: object) -> None:
        kill_all()
        signal.signal(signal.SIGINT, previous)
        os.kill(os.getpid(), signal.SIGINT)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, on_int)
