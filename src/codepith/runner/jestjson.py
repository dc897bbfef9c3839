"""jest's ``--json`` report -> counts and failures (suites that failed to run count as errors)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from codepith.errors import CodepithError
from codepith.runner.frames import repo_frames
from codepith.runner.results import Counts, Failure

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_AT = re.compile(r"^\s+at ")


def _rel(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except (OSError, ValueError):
        return path


def _message(text: str) -> str:
    lines: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if _AT.match(line):
            break
        lines.append(line)
    return "\n".join(lines).strip()


def _int(data: dict[str, object], key: str) -> int:
    value = data.get(key, 0)
    return value if isinstance(value, int) else 0


def parse_jest_json(report: Path, root: Path) -> tuple[Counts, tuple[Failure, ...]]:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CodepithError(f"unreadable jest report: {exc}") from exc
    if not isinstance(data, dict):
        raise CodepithError("unreadable jest report: not an object")
    failures: list[Failure] = []
    for suite in data.get("testResults") or []:
        if not isinstance(suite, dict):
            continue
        rel = _rel(str(suite.get("name", "?")), root)
        failed_here = False
        for case in suite.get("assertionResults") or []:
            if not isinstance(case, dict) or case.get("status") != "failed":
                continue
            failed_here = True
            text = "\n".join(str(m) for m in case.get("failureMessages") or [])
            frames = repo_frames(_ANSI.sub("", text), root, innermost_last=False)
            failures.append(Failure(f"{rel} > {case.get('fullName', '?')}", _message(text), frames))
        if suite.get("status") == "failed" and not failed_here:  # the file itself did not run
            text = str(suite.get("message", ""))
            text = text.split("Details:", 1)[-1]  # past jest's generic advice, to the error itself
            frames = repo_frames(_ANSI.sub("", text), root, innermost_last=False)
            failures.append(Failure(rel, _message(text), frames, "error"))
    counts = Counts(
        _int(data, "numPassedTests"),
        _int(data, "numFailedTests"),
        _int(data, "numPendingTests") + _int(data, "numTodoTests"),
        _int(data, "numRuntimeErrorTestSuites"),
    )
    return counts, tuple(failures)
