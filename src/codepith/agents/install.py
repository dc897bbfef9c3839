"""`codepith install` / `uninstall`: choose the clients, plan, show, confirm, write.

The person chooses on a terminal; scripts name clients with ``--agent`` and confirm with ``--yes``.
Without a terminal and without ``--yes`` nothing is written: the plan is shown and the exit status says
nothing was done. Every file is planned first (``--dry-run`` prints that plan's exact diff), so a file
that does not parse, or a ``codepith`` entry someone else wrote, stops only that one change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from codepith.agents.clients import CLIENTS, KINDS, SCOPES, Client, Env, Target
from codepith.agents.launcher import Launcher, current, ephemeral_warning
from codepith.agents.plan import Plan, describe, plan_install, plan_uninstall
from codepith.agents.state import State, state_dir
from codepith.agents.texts import block_cost
from codepith.errors import CodepithError

ALIASES = {"claude-code": "claude", "vs-code": "vscode", "code": "vscode", "gemini-cli": "gemini"}
EXIT_OK, EXIT_INCOMPLETE = 0, 1


@dataclass(frozen=True)
class Options:
    agents: tuple[str, ...] = ()
    kinds: tuple[str, ...] = KINDS
    scope: str = "user"
    yes: bool = False
    dry_run: bool = False
    force: bool = False


@dataclass(frozen=True)
class Ui:
    out: Callable[[str], None]
    err: Callable[[str], None]
    ask: Callable[[str], str]
    interactive: bool


def client_ids(names: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for name in names:
        key = ALIASES.get(name.lower(), name.lower())
        if key not in CLIENTS:
            raise CodepithError(f"unknown agent {name!r}; choose from {', '.join(CLIENTS)}")
        if key not in out:
            out.append(key)
    return tuple(out)


def _detect(env: Env, ui: Ui) -> list[Client]:
    """The clients set up on this machine; one whose folder cannot be looked at is said so, in one line."""
    found = []
    for c in CLIENTS.values():
        if c.detected(env):
            found.append(c)
        elif (where := c.unreadable(env)) is not None:
            ui.err(f"codepith: warning: cannot look at {where}; {c.name} not detected (--agent {c.id} names it)")
    return found


def _choose(env: Env, ui: Ui, action: str) -> list[Client]:
    found = _detect(env, ui) if action == "install" or ui.interactive else []
    if not ui.interactive:
        return found if action == "install" else list(CLIENTS.values())
    everything = list(CLIENTS.values())
    ui.out(f"Agent clients ({'detected ones marked *' if found else 'none detected'}):")
    for i, c in enumerate(everything, 1):
        ui.out(f"  {i}. {'*' if c in found else ' '} {c.name} ({c.id})")
    default = found if action == "install" else everything
    hint = ", ".join(str(everything.index(c) + 1) for c in default) or "none"
    answer = ui.ask(f"{action.capitalize()} for which? numbers or ids, 'all' [{hint}]: ").strip().lower()
    if not answer:
        return default
    if answer == "all":
        return everything
    chosen: list[Client] = []
    for word in answer.replace(",", " ").split():
        if word.isdigit() and 1 <= int(word) <= len(everything):
            c = everything[int(word) - 1]
        else:
            c = CLIENTS[client_ids((word,))[0]]
        if c not in chosen:
            chosen.append(c)
    return chosen


def _canonical(t: Target, state: State) -> Target:
    """``t`` under the name its install record has, when the record names the same file another way
    (CLAUDE.md a symlink to AGENTS.md, the record written through AGENTS.md)."""
    if state.get(t.key) is not None:
        return t
    real = os.path.realpath(t.path)
    for rec in state.records.values():
        if rec.where == t.where and os.path.realpath(rec.path) == real:
            return replace(t, path=Path(rec.path))
    return t


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:  # a folder on the way that cannot be read: the plan reports the file
        return False


def _targets(
    clients: list[Client], env: Env, opts: Options, launcher: Launcher, state: State
) -> list[tuple[Target, str, tuple[str, ...]]]:
    """Every target of the chosen clients; one file shared by several (AGENTS.md, or CLAUDE.md linked to
    it) is one target, named as its record names it, else by its real name rather than a symlink."""
    seen: dict[tuple[str, tuple[str, ...]], tuple[list[Target], list[str]]] = {}
    for c in clients:
        for t in c.targets(env, opts.kinds, opts.scope, launcher):
            t = _canonical(t, state)
            same = seen.setdefault((os.path.realpath(t.path), t.where), ([], []))
            same[0].append(t)
            if c.id not in same[1]:
                same[1].append(c.id)
    out: list[tuple[Target, str, tuple[str, ...]]] = []
    for names, ids in seen.values():
        recorded = [t for t in names if state.get(t.key) is not None]
        plain = [t for t in names if not _is_link(t.path)]
        t = (recorded or plain or names)[0]
        out.append((t, describe(t, tuple(ids)), tuple(ids)))
    return out


def _show(plan: Plan, ui: Ui, action: str, quiet_absent: bool) -> None:
    for n in plan.notes:
        if n.status == "absent" and quiet_absent:
            continue
        if n.problem:
            ui.err(f"codepith: {n.label}: {n.message}")
        else:
            ui.out(f"  = {n.label}: {n.message}")
    sign = "+" if action == "install" else "-"
    for c in plan.changes:
        ui.out(f"  {sign} {c.action} {c.label}: {c.target.path}")


def _no_answer(ui: Ui) -> int:
    """Input ended at a question (Ctrl-D): that is no, not an error."""
    ui.out("")  # the prompt's line was left open
    ui.err("codepith: no answer (end of input): nothing written")
    return EXIT_INCOMPLETE


def run(action: str, opts: Options, env: Env, ui: Ui, launcher: Launcher | None = None) -> int:
    if opts.scope not in SCOPES:
        raise CodepithError(f"unknown scope {opts.scope!r}; choose from {', '.join(SCOPES)}")
    launcher = launcher or current()
    if opts.agents:
        clients = [CLIENTS[i] for i in client_ids(opts.agents)]
    else:
        try:
            clients = _choose(env, ui if not opts.yes else Ui(ui.out, ui.err, ui.ask, False), action)
        except EOFError:
            return _no_answer(ui)
    if not clients:
        raise CodepithError(f"no agent client found on this machine; name one with --agent ({', '.join(CLIENTS)})")
    for c in clients:
        missing = [k for k in opts.kinds if not c.supports(env, k, opts.scope)]
        if missing and opts.kinds != KINDS:
            ui.err(f"codepith: {c.name} has no {' or '.join(missing)} at {opts.scope} scope; skipped")
    state = State(state_dir(env))
    if state.unreadable is not None:
        why = f"cannot read the install record {state.file} ({state.unreadable})"
        if not opts.dry_run:  # saving over it would lose what earlier installs changed
            raise CodepithError(f"{why}; nothing written: repair it or move it aside, then run again")
        ui.err(f"codepith: warning: {why}; the plan below does not know what it records")
    targets = _targets(clients, env, opts, launcher, state)
    if action == "install":
        plan = plan_install(targets, state, opts.force)
    else:
        plan = plan_uninstall(targets, state, opts.force)
    status = EXIT_INCOMPLETE if plan.problems else EXIT_OK
    warning = ephemeral_warning(launcher) if action == "install" and opts.kinds != ("instructions",) else None
    if warning:
        ui.err(f"codepith: warning: {warning}")
    ui.out(f"codepith {action} ({opts.scope} scope): {', '.join(c.name for c in clients)}")
    _show(plan, ui, action, quiet_absent=not opts.agents)
    if opts.dry_run:
        diff = plan.diff()
        ui.out(diff.rstrip("\n") if diff else "no changes")
        return status
    if not plan.changes:
        if plan.stale or plan.records:  # entries removed by hand, or a shared block's users changed
            plan.bookkeep(state)
            try:
                state.save()
            except OSError as exc:  # a stale record is harmless: the next run drops it again
                ui.err(f"codepith: warning: cannot update the install record {state.file}: {exc.strerror or exc}")
        ui.out("nothing to change")
        return status
    problems_before = plan.problems
    if not opts.yes:
        if not ui.interactive:
            ui.err(
                "codepith: not a terminal: nothing written; run again with --yes to apply (--dry-run shows the diff)"
            )
            return EXIT_INCOMPLETE
        try:
            answer = ui.ask("Apply these changes? [y/N] ")
        except EOFError:
            return _no_answer(ui)
        if answer.strip().lower() not in ("y", "yes"):
            ui.out("nothing written")
            return EXIT_INCOMPLETE
    for line in plan.apply(state):
        ui.out(line)
    failed = plan.problems[len(problems_before) :]
    for n in failed:
        ui.err(f"codepith: {n.label}: {n.message}")
        status = EXIT_INCOMPLETE
    written = [c for c in plan.changes if all(n.target is not c.target for n in failed)]
    if action == "install" and any(c.target.kind == "instructions" for c in written):
        chars, tokens = block_cost()
        ui.out(f"the instruction block adds {chars} characters (~{tokens} tokens) to each session")
    return status
