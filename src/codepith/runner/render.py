"""A test run as reply text for an agent: what ran, how it ended, then only what explains the failures.

The budget is spent breadth first, like a search packet: every failure gets its name, the first line of
its message and its innermost repository frame before any failure gets more; what is left grows the
failures in order (more message lines, more frames). Failures that do not fit are named in a trailer.
When nothing structured explains a non-zero exit, the last lines of the raw output are shown instead.
The reply never exceeds ``max_chars``.
"""

from __future__ import annotations

from codepith.runner.results import Exit, Failure, TestRun

MAX_MESSAGE_LINES = 12
MAX_FRAMES = 3
MAX_LINE = 240  # a longer line (a huge repr) is shortened
TRAILER_RESERVE = 120  # room kept for naming the failures that did not fit


def _clip(line: str, width: int = MAX_LINE) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _ending(exit_: Exit) -> str:
    if exit_.timed_out:
        return f"timed out after {exit_.seconds:.0f}s (process group killed)"
    if exit_.signal is not None:
        return f"killed by signal {exit_.signal} after {exit_.seconds:.1f}s"
    return f"exit {exit_.code} in {exit_.seconds:.1f}s"


def _summary(run: TestRun) -> str:
    c = run.counts
    if c is None:
        if run.failures:
            return "did not build: no tests ran"
        return "no structured results" + ("" if run.exit.timed_out else "; raw output below")
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
        body.append("last lines of output:")
        body += _tail(run.output.text, budget - _cost(body))
    text = "\n".join(head + body)
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."
