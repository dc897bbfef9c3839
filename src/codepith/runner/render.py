"""A test run as reply text for an agent: what ran, how it ended, then only what explains the failures.

The budget is spent breadth first, like a search packet: every failure gets its name, the first line of
its message and its innermost repository frame before any failure gets more; what is left grows the
failures in order (more message lines, more frames). Failures that do not fit are named in a trailer.
When nothing structured explains a non-zero exit, the raw output is filtered instead: the lines that
mention a failure (with the two lines after each), then the last lines.
The reply never exceeds ``max_chars``.
"""

from __future__ import annotations

import re

from codepith.runner.results import Exit, Failure, TestRun

MAX_MESSAGE_LINES = 12
MAX_FRAMES = 3
FLAGGED_SHARE = 60  # percent of the room the failure-mentioning lines may take before the tail
FLAG_CONTEXT = 2  # lines shown after each line that mentions a failure
_FLAG = re.compile(
    r"\b(?:FAIL(?:ED|URE|S)?|ERROR|[A-Z]\w*(?:Error|Exception)|Traceback|assert\w*|[Ee]xpected|[Rr]eceived|panicked)\b"
    r"|[\u2715\u2716\u2717\u25cf\u00d7]"  # the cross and bullet marks JS runners print before a failure
)
MAX_LINE = 240  # a longer line (a huge repr) is shortened
TRAILER_RESERVE = 120  # room kept for naming the failures that did not fit


def _clip(line: str, width: int = MAX_LINE) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _ending(exit_: Exit) -> str:
    if exit_.timed_out:
        return f"timed out after {exit_.limit:g}s (process group killed)"
    if exit_.signal is not None:
        return f"killed by signal {exit_.signal} after {exit_.seconds:.1f}s"
    return f"exit {exit_.code} in {exit_.seconds:.1f}s"


def _summary(run: TestRun) -> str:
    c = run.counts
    if c is None:
        if run.failures:
            return "did not build: no tests ran"
        # raw output follows only for a non-zero exit (see render_run), and only if there was some
        shown = run.exit.shell_code != 0 and bool(run.output.text.strip())
        return "no structured results" + ("; raw output below" if shown and not run.exit.timed_out else "")
    return f"{c.passed} passed, {c.failed} failed, {c.skipped} skipped, {c.errors} errors"


def _failure_lines(f: Failure, message_lines: int, frames: int) -> list[str]:
    label = "ERROR" if f.kind == "error" else "FAILED"
    lines = [f"{label} {_clip(f.name)}"]
    msg = [ln for ln in f.message.splitlines() if ln.strip()] or ["(no message)"]
    shown = msg[:message_lines]
    lines += ["  " + _clip(ln) for ln in shown]
    if len(msg) > len(shown):
        lines.append(f"  ... ({len(msg) - len(shown)} more lines)")
    if f.frames and frames:
        lines.append("  at " + ", ".join(str(fr) for fr in f.frames[:frames]))
    return lines


def _cost(lines: list[str]) -> int:
    return sum(len(ln) + 1 for ln in lines)


def _tail(text: str, room: int) -> list[str]:
    """The last lines of ``text`` that fit in ``room`` characters."""
    out: list[str] = []
    used = 0
    for line in reversed(text.rstrip().splitlines()):
        line = _clip(line)
        if used + len(line) + 1 > room:
            break
        out.append(line)
        used += len(line) + 1
    return list(reversed(out))


def _flagged(lines: list[str], room: int) -> tuple[list[str], int]:
    """The last groups (a line that mentions a failure, plus context) that fit; and the first line index
    they cover, so the tail can start after it."""
    groups: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        if _FLAG.search(line):
            end = min(len(lines), i + 1 + FLAG_CONTEXT)
            if groups and i <= groups[-1][1]:
                groups[-1] = (groups[-1][0], end)
            else:
                groups.append((i, end))
    chosen: list[tuple[int, int]] = []
    used = 0
    for start, end in reversed(groups):
        cost = _cost([_clip(ln) for ln in lines[start:end]]) + 4
        if used + cost > room:
            break
        chosen.append((start, end))
        used += cost
    out: list[str] = []
    for start, end in reversed(chosen):
        if out:
            out.append("  ...")
        out += [_clip(ln) for ln in lines[start:end]]
    return out, (chosen[0][1] if chosen else 0)


def _raw(text: str, room: int) -> list[str]:
    """Raw output within ``room``: all of it when it fits, else failure-mentioning lines and the tail."""
    lines = text.rstrip().splitlines()
    if not lines:
        return ["(no output)"]
    if _cost([_clip(ln) for ln in lines]) + 30 <= room:
        return ["output:", *[_clip(ln) for ln in lines]]
    flagged, after = _flagged(lines, room * FLAGGED_SHARE // 100)
    out = ["lines that mention a failure:", *flagged] if flagged else []
    tail = _tail("\n".join(lines[after:]), room - _cost(out) - 25)
    return [*out, "last lines of output:", *tail] if tail else out


def render_run(run: TestRun, max_chars: int = 6000) -> str:
    head = [f"$ {_clip(run.command, 400)}", f"{run.runner}: {_ending(run.exit)}; {_summary(run)}"]
    if run.output.dropped:
        head.append(f"(output capture kept head and tail; {run.output.dropped} bytes dropped)")
    budget = max_chars - _cost(head)
    body: list[str] = []
    if run.failures:
        # pass 1: every failure compact, in order, while they fit (room kept for the trailer)
        views = [(1, 1)] * len(run.failures)
        compact = [_cost(_failure_lines(f, 1, 1)) for f in run.failures]
        shown = used = 0
        for cost in compact:
            last = shown + 1 == len(compact)
            if used + cost + (0 if last else TRAILER_RESERVE) > budget:
                break
            used += cost
            shown += 1
        left = budget - used - (TRAILER_RESERVE if shown < len(compact) else 0)
        # pass 2: grow each shown failure, in order, as far as the room allows
        for i, f in enumerate(run.failures[:shown]):
            current = _cost(_failure_lines(f, *views[i]))
            best = views[i]
            for lines_n in range(MAX_MESSAGE_LINES, 1, -1):
                grown = (lines_n, MAX_FRAMES)
                extra = _cost(_failure_lines(f, *grown)) - current
                if extra <= left:
                    best = grown
                    left -= extra
                    break
            views[i] = best
        for i, f in enumerate(run.failures[:shown]):
            body += _failure_lines(f, *views[i])
        if shown < len(run.failures):
            rest = run.failures[shown:]
            names = ", ".join(f.name for f in rest)
            room = max(0, budget - _cost(body) - 1)
            body.append(_clip(f"... {len(rest)} more failing: {names}", max(20, room)))
    elif run.exit.timed_out or run.exit.shell_code != 0:
        body += _raw(run.output.text, budget)
    text = "\n".join(head + body)
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."
