"""What install wrote, remembered so that uninstall removes exactly that and nothing else.

One JSON file in codepith's state folder. For each entry: the value written, the objects created to hold
it, and the file's hash right after the write with the backup of its bytes before it. Uninstall restores
those original bytes when the file has not changed since; when the client or the person has edited it
since, only codepith's entry is cut out.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from codepith.agents.clients import Env
from codepith.agents.writes import write_atomic

STATE_FILE = "installed.json"


@dataclass(frozen=True)
class Record:
    path: str
    where: tuple[str, ...]
    value: Any  # the entry, block or file text codepith wrote
    created: tuple[str, ...] | None  # the object install created to hold the entry, if any
    file_created: bool  # the file did not exist before install
    installed_sha256: str  # the file right after codepith's last write
    original: str | None  # backup of the bytes before install, when uninstall can restore them exactly
    replaced: Any = None  # someone else's entry that ``--force`` replaced: uninstall puts it back
    dirs_created: tuple[str, ...] = ()  # folders made to hold a new file, removed with it when empty
    clients: tuple[str, ...] = ()  # the clients installed into it (several share AGENTS.md); () unknown
    # What was inside the braces of the empty JSON object install put its entry into (``{\n}`` holds a
    # newline): when uninstall cuts the entry and that object is left empty, it gets this back, not ``{}``.
    emptied: str | None = None

    @property
    def key(self) -> str:
        return f"{self.path}::{'.'.join(self.where)}"


def state_dir(env: Env) -> Path:
    """``$CODEPITH_STATE_DIR``, else the platform's user state folder for codepith."""
    named = env.var("CODEPITH_STATE_DIR")
    if named:
        return Path(named)
    if env.platform == "darwin":
        return env.home / "Library" / "Application Support" / "codepith" / "state"
    if env.platform.startswith("win"):
        local = env.var("LOCALAPPDATA")
        return (Path(local) if local else env.home / "AppData" / "Local") / "codepith" / "state"
    xdg = env.var("XDG_STATE_HOME")
    return (Path(xdg) if xdg else env.home / ".local" / "state") / "codepith"


class State:
    """The records, read at start and written whole by ``save``.

    Nothing a run cannot read is dropped: a record it cannot make sense of (written by another version,
    edited by hand) is written back as it was, fields it does not know are ignored, and a file it cannot
    read at all (``unreadable``) stops install and uninstall before they write anything, since saving
    over it would lose what earlier installs changed, which only it can undo."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.records: dict[str, Record] = {}
        self.unreadable: str | None = None  # why the file could not be read, when it exists and could not
        self._foreign: list[Any] = []  # records this version cannot read, written back untouched
        try:
            raw = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
            items = raw.get("records", [])
            if not isinstance(items, list):
                raise ValueError("'records' is not a list")
        except FileNotFoundError:
            return
        except (OSError, ValueError, AttributeError) as exc:
            self.unreadable = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            return
        for item in items:
            rec = _record(item)
            if rec is None:
                self._foreign.append(item)
            else:
                self.records[rec.key] = rec

    @property
    def file(self) -> Path:
        return self.folder / STATE_FILE

    @property
    def backups(self) -> Path:
        return self.folder / "backups"

    def get(self, key: str) -> Record | None:
        return self.records.get(key)

    def put(self, rec: Record) -> None:
        self.records[rec.key] = rec

    def forget(self, key: str) -> None:
        self.records.pop(key, None)

    def save(self) -> None:
        if self.unreadable is not None:  # never reached through install.run, which stops first
            raise OSError(f"{self.file} could not be read ({self.unreadable}); not written over")
        data = {"version": 1, "records": [*(asdict(r) for r in self.records.values()), *self._foreign]}
        write_atomic(self.file, (json.dumps(data, indent=1) + os.linesep).encode())


_FIELDS = frozenset(f.name for f in fields(Record))


def _record(item: Any) -> Record | None:
    """A record from its JSON form, fields this version does not know left out; None when it cannot be one."""
    try:
        known = {k: v for k, v in item.items() if k in _FIELDS}
        return Record(
            **{
                **known,
                "where": tuple(item["where"]),
                "created": None if item.get("created") is None else tuple(item["created"]),
                "dirs_created": tuple(item.get("dirs_created") or ()),
                "clients": tuple(item.get("clients") or ()),
            }
        )
    except (TypeError, KeyError, AttributeError, ValueError):
        return None
