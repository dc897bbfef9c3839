"""The fast-start front: answers the handshake from the stdlib while the SDK loads.

Importing the SDK alone costs ~1.7 s of CPU (pydantic models for two protocol revisions), more than a
client should wait for ``tools/list``. The front answers ``initialize``, ``tools/list`` and ``ping``
straight away; once the SDK is loaded (or any other request arrives) the connection is handed over.
The SDK first sees the same handshake replayed (its reply is dropped), then everything else. The front
only ever answers what the SDK would answer word for word (tests compare the two).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from codepith._version import __version__
from codepith.surfaces.mcp.schemas import INSTRUCTIONS, TOOLS
from codepith.surfaces.mcp.wire import Wire

FRONT_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # handshake revisions of the SDK
REPLAYED_ID = "codepith-front-initialize"


def front_answer(msg: Any, initialized: bool) -> dict[str, Any] | None:
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


def run_front(wire: Wire, ready: threading.Event) -> list[bytes]:
    """Answer the handshake until the SDK is loaded; returns the lines the SDK must see first."""
    replay: list[bytes] = []
    initialized = False
    while not ready.is_set():
        line = wire.read_message(timeout=0.05)
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
        answer = front_answer(msg, initialized)
        if answer is None:
            replay.append(line)
            break
        if msg.get("method") == "initialize":
            msg["id"] = REPLAYED_ID  # the SDK sees the same handshake; its reply is dropped
            replay.append(json.dumps(msg).encode("utf-8") + b"\n")
            initialized = True
        wire.write_line(json.dumps(answer, separators=(",", ":")))
    return replay
