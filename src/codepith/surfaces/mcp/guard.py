"""JSON-RPC checks on each incoming line, before the fast front or the SDK sees it.

The SDK drops some malformed messages without a word (an unparsable line, ``{"id":3}``, a wrong
``jsonrpc``, ``"params": "x"``, a string holding a lone surrogate), and a client waiting for that id
hangs. Here every line is sorted: a well-formed message goes on (lone surrogates replaced by U+FFFD,
which JSON cannot carry back), anything else gets its one error reply (JSON-RPC 2.0, section 5.1:
-32700 parse error with id null, -32600 invalid request, -32602 invalid params) and goes no further.
Hand-written because the check is a few lines of the JSON-RPC spec and must run before the SDK loads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class Checked:
    """One incoming line, sorted: ``line`` to pass on (None: dropped), ``reply`` to write (None: none)."""

    line: bytes | None
    reply: str | None


def _reply(rid: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}, separators=(",", ":"))


def _clean(value: Any) -> tuple[Any, bool]:
    """``value`` with lone surrogates in its strings (keys too) replaced; and whether any were."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            return _SURROGATE.sub("\ufffd", value), True
        return value, False
    if isinstance(value, list):
        items = [_clean(v) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    if isinstance(value, dict):
        pairs = [(_clean(k), _clean(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in pairs}, any(ck or cv for (_, ck), (_, cv) in pairs)
    return value, False


def _valid_id(rid: Any) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def check_line(line: bytes) -> Checked:
    """Sort one line read from the client (blank lines pass on untouched: the readers skip them)."""
    if not line.strip():
        return Checked(line, None)
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return Checked(None, _reply(None, PARSE_ERROR, "Parse error: the line is not valid JSON"))
    if not isinstance(msg, dict):
        what = "batches are not supported" if isinstance(msg, list) else "a message must be a JSON object"
        return Checked(None, _reply(None, INVALID_REQUEST, f"Invalid request: {what}"))
    has_id = "id" in msg
    rid = msg.get("id")
    reply_id = rid if _valid_id(rid) else None
    if has_id and not _valid_id(rid):
        return Checked(None, _reply(None, INVALID_REQUEST, "Invalid request: id must be a string or an integer"))
    if msg.get("jsonrpc") != "2.0":
        return Checked(None, _reply(reply_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"'))
    if "method" not in msg:
        if has_id and ("result" in msg or "error" in msg):
            return Checked(line, None)  # the client's answer to a server request
        return Checked(None, _reply(reply_id, INVALID_REQUEST, "Invalid request: no method"))
    if not isinstance(msg["method"], str):
        return Checked(None, _reply(reply_id, INVALID_REQUEST, "Invalid request: method must be a string"))
    params = msg.get("params")
    if "params" in msg and not isinstance(params, dict):
        if not has_id:
            return Checked(None, None)  # a notification gets no reply, not even an error
        return Checked(None, _reply(rid, INVALID_PARAMS, "Invalid params: params must be an object"))
    cleaned, changed = _clean(msg)
    if changed:
        return Checked(json.dumps(cleaned).encode("utf-8") + b"\n", None)
    return Checked(line, None)
