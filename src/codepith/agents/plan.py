"""Install and uninstall as a plan: every file's bytes before and after, computed before anything is
written, so ``--dry-run`` prints the exact diff and a file that does not parse stops only itself."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codepith.agents import jsonc, markdown, tomlfile, writes
from codepith.agents.clients import CLIENTS, Target
from codepith.agents.state import Record, State
from codepith.agents.texts import MANAGED
from codepith.errors import CodepithError

LABELS = {"mcp": "MCP server", "instructions": "instruction block", "subagent": "search sub-agent"}


def describe(t: Target, clients: tuple[str, ...] = ()) -> str:
    names = ", ".join(CLIENTS[c].name for c in (clients or (t.client,)))
    return f"{names} {LABELS[t.kind]}"


@dataclass(frozen=True)
class Change:
    target: Target
    label: str
    before: bytes | None
    after: bytes | None  # None: delete the file
    action: str  # add | update | remove | restore
    record: Record | None  # what to remember after the write (install); None forgets the key (uninstall)
    original_is_before: bool = False  # the backup of ``before`` is the pristine file uninstall restores


@dataclass(frozen=True)
class Note:
    target: Target
    label: str
    status: str  # unchanged | absent | conflict | error
    message: str

    @property
    def problem(self) -> bool:
        return self.status in ("conflict", "error")


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # records of entries that are gone already
    records: list[Record] = field(default_factory=list)  # records to update with no file to write

    @property
    def problems(self) -> list[Note]:
        return [n for n in self.notes if n.problem]

    def diff(self) -> str:
        out: list[str] = []
        for c in self.changes:
            a = (c.before or b"").decode("utf-8").splitlines(keepends=True)
            b = (c.after or b"").decode("utf-8").splitlines(keepends=True)
            src = str(c.target.path) if c.before is not None else "/dev/null"
            dst = str(c.target.path) if c.after is not None else "/dev/null"
            lines = list(difflib.unified_diff(a, b, src, dst, n=3))
            out.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
        return "".join(out)

    def bookkeep(self, state: State) -> None:
        """Update the records that change with no file written (saved with the next ``state.save()``)."""
        for key in self.stale:
            state.forget(key)
        for rec in self.records:
            state.put(rec)

    def _fail(self, c: Change, message: str) -> None:
        self.notes.append(Note(c.target, c.label, "error", message))

    def apply(self, state: State) -> list[str]:
        """Write every change (backup first, atomic replace) and update the record; returns report lines.

        A file that cannot be backed up, written or recorded is reported and left as it was; the other
        changes go ahead. A config is never left changed without the record uninstall needs to undo it:
        when the record cannot be saved, the file's old bytes are put back.
        """
        done: list[str] = []
        emptied: list[Path] = []  # folders install made for files deleted here: removed at the end if empty
        self.bookkeep(state)
        for c in self.changes:
            path = c.target.path
            try:
                now = writes.read(path)
            except OSError as exc:
                self._fail(c, f"cannot read {path} ({_why(exc)}); untouched")
                continue
            if now != c.before:  # the client (or the person) wrote it while we planned/asked
                self._fail(c, f"{path} changed since the plan was made; untouched, run again")
                continue
            try:
                saved = None if c.before is None else writes.backup(c.before, path, state.backups)
            except OSError as exc:
                self._fail(c, f"cannot keep a backup copy of {path} in {state.backups} ({_why(exc)}); untouched")
                continue
            new_dirs = writes.missing_dirs(path.parent) if c.after is not None else []
            old = state.get(c.target.key)
            try:
                if c.after is None:
                    writes.remove(path)
                else:
                    writes.write_atomic(path, c.after)
            except OSError as exc:
                writes.remove_empty_dirs(new_dirs)
                self._fail(c, f"cannot write {path} ({_why(exc)}); untouched")
                continue
            records = dict(state.records)
            if c.record is None:
                state.forget(c.target.key)
            else:
                rec = c.record
                if c.original_is_before:
                    rec = replace(rec, original=str(saved) if saved else None)
                rec = replace(rec, dirs_created=_dirs_holding(path, new_dirs, rec, state))
                state.put(rec)
            try:
                state.save()
            except OSError as exc:  # without the record uninstall could not undo this write: undo it now
                state.records = records
                self._fail(c, f"cannot save the install record {state.file} ({_why(exc)}); {_undo(c, new_dirs, saved)}")
                continue
            if c.after is None and old is not None:
                emptied.extend(Path(d) for d in old.dirs_created)
            verb = {"add": "added", "update": "updated", "remove": "removed", "restore": "restored"}[c.action]
            extra = f" (backup: {saved})" if saved else ""
            done.append(f"{verb} {c.label}: {path}{extra}")
        writes.remove_empty_dirs(emptied)
        return done


def _dirs_holding(path: Path, new_dirs: list[Path], rec: Record, state: State) -> tuple[str, ...]:
    """The folders install made that hold ``path``: made for it now, or earlier for another file in
    them. Every file's record names them, so whichever file uninstall deletes last takes them along."""
    parent = path.parent
    made = {str(d) for d in new_dirs} | set(rec.dirs_created)
    for other in state.records.values():
        made.update(d for d in other.dirs_created if Path(d) == parent or Path(d) in parent.parents)
    return tuple(sorted(made, key=lambda d: len(Path(d).parts)))


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _undo(c: Change, new_dirs: list[Path], saved: Path | None) -> str:
    """Put back the bytes ``c.target.path`` held before ``c`` was written; says what became of the file."""
    path = c.target.path
    try:
        if c.before is None:
            writes.remove(path)
            writes.remove_empty_dirs(new_dirs)
        else:
            writes.write_atomic(path, c.before)
    except OSError as exc:
        where = f"; its old bytes are in {saved}" if saved else ""
        return f"{path} was changed and could not be put back ({_why(exc)}){where}"
    return f"{path} left as it was"


def _read_text(path: Path) -> tuple[bytes | None, str]:
    data = writes.read(path)
    if data is None:
        return None, ""
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        raise CodepithError("not UTF-8 text") from None


def _encode(text: str) -> bytes:
    return text.encode("utf-8")


# -- one format at a time: (current value of codepith's part, set it, remove it) -------------------------


def _current(t: Target, text: str) -> Any:
    if t.fmt == "json":
        node = jsonc.find(jsonc.parse(text), t.where)
        return None if node is None else node.value
    if t.fmt == "toml":
        return tomlfile.get(text, t.where)
    if t.fmt == "markdown":
        return markdown.current(text)
    return text if text else None


def _set(t: Target, text: str) -> tuple[str, tuple[str, ...] | None]:
    if t.fmt == "json":
        return jsonc.set_member(text, t.where, t.value)
    if t.fmt == "toml":
        return tomlfile.set_table(text, t.where, t.value)
    if t.fmt == "markdown":
        return markdown.set_block(text, t.value), None
    return t.value, None


def _remove(t: Target, text: str, rec: Record | None) -> str | None:
    """The text without codepith's part; None when nothing else is left and the file should go."""
    created = rec.created if rec else None
    if t.fmt == "json":
        new = jsonc.remove_member(text, t.where)
        if created is not None:  # the objects install made to hold the entry go too, once empty
            for depth in range(len(t.where) - 1, len(created) - 1, -1):
                holder = t.where[:depth]
                if not jsonc.is_empty_object(new, holder):
                    break
                new = jsonc.remove_member(new, holder) if holder else jsonc.remove_root(new)
        if rec is not None and rec.emptied is not None:  # the object install filled: as it was ({\n} stays so)
            new = jsonc.refill(new, _filled(t.where, created), rec.emptied)
        return new
    if t.fmt == "toml":
        return tomlfile.remove_table(text, t.where)
    if t.fmt == "markdown":
        new = markdown.remove_block(text)
        existed = rec is not None and not rec.file_created  # the person's file, empty or not: it stays
        return None if new.strip() == "" and not existed else new
    return None


def _filled(where: tuple[str, ...], created: tuple[str, ...] | None) -> tuple[str, ...]:
    """The existing object install put its entry (or the first object it created) into."""
    return (created if created is not None else where)[:-1]


def _emptied(t: Target, text: str, created: tuple[str, ...] | None) -> str | None:
    """What was inside the braces of the object install filled, when it was empty (else None)."""
    if t.fmt != "json" or created == ():  # () : install made the whole document
        return None
    try:
        return jsonc.inside_empty(text, _filled(t.where, created))
    except CodepithError:
        return None


def _put_back(t: Target, text: str, value: Any) -> str:
    """The text with the entry install replaced (under ``--force``) set back."""
    if t.fmt == "json":
        return jsonc.set_member(text, t.where, value)[0]
    if t.fmt == "toml":
        return tomlfile.set_table(text, t.where, value)[0]
    return str(value)


def _ours_by_look(t: Target, value: Any) -> bool:
    """A block between codepith's markers, or a sub-agent file carrying the managed line, is codepith's."""
    if t.fmt == "markdown":
        return True
    if t.fmt == "file":
        return isinstance(value, str) and MANAGED in value
    return False


def _parse_error(t: Target, exc: Exception) -> str:
    if isinstance(exc, OSError):  # a folder on the way or the file itself cannot be read: not a parse error
        return f"{t.path}: cannot read it ({_why(exc)}); left untouched"
    kind = {"json": "JSON", "toml": "TOML", "markdown": "markdown", "file": "file"}[t.fmt]
    return f"{t.path}: cannot read it as {kind} ({exc}); left untouched"


def _users(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for g in groups for c in g))


def plan_install(targets: list[tuple[Target, str, tuple[str, ...]]], state: State, force: bool) -> Plan:
    plan = Plan()
    for t, label, ids in targets:
        try:
            before, text = _read_text(t.path)
            existing = _current(t, text)
        except (CodepithError, OSError) as exc:
            plan.notes.append(Note(t, label, "error", _parse_error(t, exc)))
            continue
        rec = state.get(t.key)
        if existing == t.value:
            plan.notes.append(Note(t, label, "unchanged", f"already installed: {t.path}"))
            if rec is not None and not set(ids) <= set(rec.clients):  # one more client uses the shared block
                plan.records.append(replace(rec, clients=_users(rec.clients, ids)))
            continue
        ours = existing is not None and ((rec is not None and rec.value == existing) or _ours_by_look(t, existing))
        if existing is not None and not ours and not force:
            what = "a 'codepith' entry" if t.fmt in ("json", "toml") else "a file"
            plan.notes.append(
                Note(
                    t,
                    label,
                    "conflict",
                    f"{t.path} already has {what} that codepith did not write; left alone (--force replaces it)",
                )
            )
            continue
        try:
            new, created = _set(t, text)
        except (CodepithError, ValueError) as exc:
            plan.notes.append(Note(t, label, "error", _parse_error(t, exc)))
            continue
        after = _encode(new)
        if ours:  # updating codepith's own entry: what uninstall restores stays the same
            pristine = False
            if rec is not None:
                unchanged_since = before is not None and writes.sha256(before) == rec.installed_sha256
                record = replace(
                    rec,
                    value=t.value,
                    installed_sha256=writes.sha256(after) or "",
                    original=rec.original if unchanged_since else None,
                    clients=_users(rec.clients, ids),
                )
            else:  # codepith's by its markers, record lost: no pristine bytes to go back to
                record = Record(
                    str(t.path), t.where, t.value, None, False, writes.sha256(after) or "", None, clients=ids
                )
        else:  # the file holds nothing of codepith's (or, forced, someone else's entry): its bytes are the original
            pristine = True
            record = Record(
                str(t.path),
                t.where,
                t.value,
                created,
                before is None,
                writes.sha256(after) or "",
                None,
                replaced=existing,
                clients=ids,
                emptied=_emptied(t, text, created),
            )
        plan.changes.append(
            Change(
                t,
                label,
                before,
                after,
                "update" if existing is not None else "add",
                record,
                original_is_before=pristine and before is not None,
            )
        )
    return plan


def _still_there(t: Target, text: str) -> bool:
    try:
        return _current(t, text) is not None
    except (CodepithError, ValueError):
        return True  # unreadable: certainly not to be removed here


def _backup(rec: Record) -> bytes | None:
    """The original bytes install kept, or None when gone or unreadable (uninstall then cuts its entry)."""
    try:
        return writes.read(Path(rec.original)) if rec.original else None
    except OSError:
        return None


def _had_no_final_newline(rec: Record) -> bool:
    """The file install first wrote into did not end with a newline (from its backup; False unknown)."""
    original = _backup(rec)
    return original is not None and original != b"" and not original.endswith(b"\n")


def _without_final_newline(text: str) -> str:
    for nl in ("\r\n", "\n"):
        if text.endswith(nl):
            return text[: -len(nl)]
    return text


def plan_uninstall(targets: list[tuple[Target, str, tuple[str, ...]]], state: State, force: bool) -> Plan:
    plan = Plan()
    for t, label, ids in targets:
        rec = state.get(t.key)
        try:
            before, text = _read_text(t.path)
        except (CodepithError, OSError) as exc:
            plan.notes.append(Note(t, label, "error", _parse_error(t, exc)))
            continue
        if before is None:
            plan.notes.append(Note(t, label, "absent", f"not installed: {t.path} does not exist"))
            if rec is not None:
                plan.stale.append(t.key)
            continue
        others = tuple(c for c in rec.clients if c not in ids) if rec is not None else ()
        if rec is not None and others and _still_there(t, text):  # another client still reads this block
            names = ", ".join(CLIENTS[c].name for c in others if c in CLIENTS)
            plan.notes.append(
                Note(t, label, "unchanged", f"kept in {t.path}: {names} still use{'s' * (len(others) == 1)} it")
            )
            plan.records.append(replace(rec, clients=others))
            continue
        if rec is not None and writes.sha256(before) == rec.installed_sha256:
            original = _backup(rec)
            if rec.file_created or original is not None:
                plan.changes.append(Change(t, label, before, original, "restore", None))
                continue
        try:
            existing = _current(t, text)
        except (CodepithError, ValueError) as exc:
            plan.notes.append(Note(t, label, "error", _parse_error(t, exc)))
            continue
        if existing is None:
            plan.notes.append(Note(t, label, "absent", f"not installed: nothing of codepith's in {t.path}"))
            if rec is not None:
                plan.stale.append(t.key)
            continue
        ours = existing == t.value or (rec is not None and rec.value == existing) or _ours_by_look(t, existing)
        if not ours and not force:
            plan.notes.append(
                Note(
                    t,
                    label,
                    "conflict",
                    f"{t.path}: its 'codepith' entry was not written by codepith; left alone (--force removes it)",
                )
            )
            continue
        new: str | None
        try:
            if rec is not None and rec.replaced is not None and t.fmt != "markdown":
                new = _put_back(t, text, rec.replaced)
            else:
                new = _remove(t, text, rec)
        except (CodepithError, ValueError) as exc:
            plan.notes.append(Note(t, label, "error", _parse_error(t, exc)))
            continue
        if new is not None and rec is not None and rec.file_created and t.fmt == "json":
            if jsonc.parse(new).value in ({}, None):
                new = None
        if new is not None and rec is not None and text.startswith(new) and _had_no_final_newline(rec):
            new = _without_final_newline(new)  # install's block went at the end, after a newline it added
        plan.changes.append(Change(t, label, before, None if new is None else _encode(new), "remove", None))
    return plan
