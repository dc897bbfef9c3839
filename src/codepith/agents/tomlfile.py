"""TOML config edits (Codex's ``config.toml``) that leave every other line, comment included, as it was.

tomlkit is the round-trip parser: it reads and validates the file and rewrites an existing table in
place. A new table is appended as a block of its own at the end of the file (tomlkit would slot it between
a comment and the table that comment belongs to), and removal cuts exactly that block again; each text
edit is checked by parsing the result with tomlkit and comparing values, and falls back to tomlkit's own
edit if the check fails.
"""

from __future__ import annotations

import re
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import InlineTable, Table

from codepith.errors import CodepithError


class TomlError(CodepithError):
    """The text is not TOML, or a key on the way is not a table."""


def parse(text: str) -> Any:
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise TomlError(str(exc)) from None


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def get(text: str, path: tuple[str, ...]) -> Any:
    node: Any = _plain(parse(text))
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _without(data: Any, path: tuple[str, ...]) -> Any:
    """A plain copy of ``data`` minus the key at ``path``."""
    if not path or not isinstance(data, dict):
        return data
    out = dict(data)
    if path[0] in out:
        if len(path) == 1:
            del out[path[0]]
        else:
            inner = _without(out[path[0]], path[1:])
            if inner == {}:  # a table that only held the key is implicit in TOML: gone with it
                del out[path[0]]
            else:
                out[path[0]] = inner
    return out


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else tomlkit.string(k).as_string()


def _block(path: tuple[str, ...], value: dict[str, Any], nl: str) -> str:
    table = tomlkit.table()
    for k, v in value.items():
        table[k] = v
    body = tomlkit.dumps(table).replace("\n", nl)
    return f"[{'.'.join(_key(k) for k in path)}]{nl}{body}"


def set_table(text: str, path: tuple[str, ...], value: dict[str, Any]) -> tuple[str, tuple[str, ...] | None]:
    """``text`` with the table at ``path`` set to ``value``; returns the new text and None (tables on
    the way are implicit in TOML, so nothing else is created)."""
    doc = parse(text)
    parent: Any = doc
    for depth, key in enumerate(path[:-1]):
        if key not in parent:
            break
        parent = parent[key]
        if not isinstance(parent, (Table, InlineTable)) and not hasattr(parent, "keys"):
            raise TomlError(f"'{'.'.join(path[: depth + 1])}' is not a table")
    else:
        if path[-1] in parent:  # exists: rewrite it in place
            if isinstance(parent, InlineTable):
                parent[path[-1]] = tomlkit.inline_table()
                parent[path[-1]].update(value)
            else:
                table = tomlkit.table()
                for k, v in value.items():
                    table[k] = v
                parent[path[-1]] = table
            return tomlkit.dumps(doc), None
        if isinstance(parent, InlineTable):  # `mcp_servers = { ... }`: the entry must go inline too
            inline = tomlkit.inline_table()
            inline.update(value)
            parent[path[-1]] = inline
            return tomlkit.dumps(doc), None
    nl = "\r\n" if "\r\n" in text else "\n"
    if text.strip() == "":
        new = _block(path, value, nl)
    else:
        sep = nl if text.endswith("\n") else nl + nl
        new = text + sep + _block(path, value, nl)
    got = _plain(parse(new))
    if get(new, path) != value or _without(got, path) != _without(_plain(doc), path):
        raise TomlError(f"cannot add [{'.'.join(path)}] to this file without changing other keys")
    return new, None


def _header(path: tuple[str, ...]) -> re.Pattern[str]:
    parts = [rf"(?:{re.escape(k)}|\"{re.escape(k)}\"|'{re.escape(k)}')" for k in path]
    return re.compile(r"^[ \t]*\[[ \t]*" + r"[ \t]*\.[ \t]*".join(parts) + r"[ \t]*\][ \t]*(?:#.*)?\r?$", re.M)


def _body_end(text: str, start: int, end: int) -> int:
    """Where the table whose header line ends at ``start`` stops: after its last key line, before
    ``end``. Blank and comment lines at its foot stay: a comment just above a header belongs to that
    table, and one at the end of the file to the person, not to the table it happens to follow."""
    cut = text.find("\n", start, end) + 1 or end
    pos = cut
    for line in text[cut:end].splitlines(keepends=True):
        pos += len(line)
        if line.strip() and not line.lstrip().startswith("#"):
            cut = pos
    return cut


def remove_table(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the table at ``path``; unchanged when it is absent."""
    doc = parse(text)
    plain = _plain(doc)
    if get(text, path) is None:
        return text
    want = _without(plain, path)
    m = _header(path).search(text)
    if m:
        nxt = re.compile(r"^[ \t]*\[", re.M).search(text, m.end())
        end = _body_end(text, m.end(), nxt.start() if nxt else len(text))
        start = m.start()
        nl = "\r\n" if "\r\n" in text else "\n"
        rest = text[end:]
        if text[:start].endswith(nl + nl) and (rest == "" or rest.startswith(nl)):  # install's blank line
            start -= len(nl)
        candidate = text[:start] + text[end:]
        try:
            if _without(_plain(parse(candidate)), path) == want and get(candidate, path) is None:
                return candidate
        except TomlError:
            pass
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return tomlkit.dumps(doc)
