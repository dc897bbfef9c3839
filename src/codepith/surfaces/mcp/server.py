"""`codepith mcp [PATH...] [--allow DIR]...`: serve MCP over stdio; only protocol goes to stdout, logs to stderr.

The index, numpy and the model are imported on the first tool call; the SDK loads in a thread while
the front answers the handshake (CODEPITH_MCP_FRONT=0 turns the front off).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

from codepith.errors import CodepithError
from codepith.service.confine import Roots
from codepith.service.repos import looks_like_url, parse_git_url, resolve_repo
from codepith.service.tools import ToolService
from codepith.surfaces.mcp.front import run_front
from codepith.surfaces.mcp.handlers import handlers
from codepith.surfaces.mcp.sdk import build_server, load_sdk, run_sdk
from codepith.surfaces.mcp.wire import Wire


def serve(
    paths: str | list[str] | None,
    content: str = "code",
    model: str | None = None,
    allow: list[str] | None = None,
) -> None:
    """Serve until the client closes stdin.

    Requests may reach only the PATH folders (the current folder when none), the ``allow`` folders and
    clones of git URLs the server makes (see service/confine.py).
    """
    logging.basicConfig(level=logging.WARNING, format="codepith: %(levelname)s: %(message)s", stream=sys.stderr)
    logging.captureWarnings(True)  # warnings reach stderr through logging, never stdout
    cwd = Path(os.getcwd()).resolve()
    items = [paths] if isinstance(paths, str) else list(paths or [])
    # An empty PATH or --allow ('', or an unset $VAR in a client's config) would name the working folder,
    # which may be / or the home folder: those are reached only by naming them.
    if any(not i.strip() for i in [*items, *(allow or [])]):
        raise CodepithError("an empty PATH or --allow folder; name each folder the server may read")
    folders: list[Path] = []
    for item in items:
        if looks_like_url(item):
            parse_git_url(item)  # refuse a bad URL now; it is cloned on the first call that needs it
        else:
            folders.append(resolve_repo(item, base=cwd)[0])  # an unknown folder fails here, before serving
    extra = [resolve_repo(a, base=cwd)[0] for a in allow or []]
    base = folders[0] if folders else cwd
    default: str | list[str] | None = None
    if len(items) == 1 and looks_like_url(items[0]):
        default = items[0]
    elif len(items) > 1:
        default = [i if looks_like_url(i) else str(f) for i, f in _pair(items, folders)]
    roots = Roots.for_server(folders, extra, cwd, named=bool(items))
    service = ToolService(base, default=default, content=content, model=model, roots=roots)
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

    from codepith.runner.process import end_on_signals, stop_all

    end_on_signals()  # SIGTERM, SIGINT: the test runs stopped, then the server ends as the signal would
    try:
        anyio.run(run_sdk, build_server(handlers(service)), wire, replay, stop_all)  # EOF stops test runs
    except KeyboardInterrupt:
        pass


def _pair(items: list[str], folders: list[Path]) -> list[tuple[str, Path]]:
    """Each PATH with its resolved folder (URLs get a placeholder: they stay URLs)."""
    it = iter(folders)
    return [(i, Path() if looks_like_url(i) else next(it)) for i in items]
