"""``go test -json`` events -> counts and failures (leaf tests only; build errors from the plain lines)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from codepith.runner.frames import repo_frames
from codepith.runner.results import Counts, Failure

_NOISE = re.compile(r"^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:FAIL|PASS|SKIP):)")
_GO_ERROR = re.compile(r"^(\S+\.go:\d+(?::\d+)?: .+)$", re.M)


def _module(root: Path) -> str:
    try:
        for line in (root / "go.mod").read_text(encoding="utf-8").splitlines():
            if line.startswith("module "):
                return line.split(None, 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def _package_dir(root: Path, module: str, package: str) -> Path:
    if module and (package == module or package.startswith(module + "/")):
        return root / package[len(module) :].lstrip("/")
    return root


def parse_go_json(text: str, root: Path) -> tuple[Counts | None, tuple[Failure, ...]]:
    module = _module(root)
    outputs: dict[tuple[str, str], list[str]] = {}
    results: dict[tuple[str, str], str] = {}
    plain: list[str] = []
    failed_packages: list[str] = []
    for line in text.splitlines():
        if not line.startswith("{"):
            plain.append(line)
            continue
        try:
            event = json.loads(line)
        except ValueError:
            plain.append(line)
            continue
        if not isinstance(event, dict):
            continue
        package, test, action = event.get("Package", ""), event.get("Test"), event.get("Action")
        if not test:
            if action == "fail":
                failed_packages.append(package)
            continue
        key = (package, test)
        if action == "output":
            outputs.setdefault(key, []).append(str(event.get("Output", "")))
        elif action in ("pass", "fail", "skip"):
            results[key] = action
    failing = {k for k, v in results.items() if v == "fail"}
    leaves = {k for k in failing if not any(o[0] == k[0] and o[1].startswith(k[1] + "/") for o in failing)}
    failures: list[Failure] = []
    for package, test in sorted(leaves):
        lines = [ln.rstrip("\n") for ln in outputs.get((package, test), []) if not _NOISE.match(ln)]
        message = textwrap.dedent("\n".join(lines)).strip()
        base = _package_dir(root, module, package)
        frames = repo_frames(message, root, innermost_last=False, bases=[base, root])
        failures.append(Failure(f"{package}.{test}" if package else test, message, frames))
    passed = sum(1 for v in results.values() if v == "pass")
    skipped = sum(1 for v in results.values() if v == "skip")
    built = [
        Failure("build", m.group(1), repo_frames(m.group(1), root, innermost_last=False), "error")
        for m in _GO_ERROR.finditer("\n".join(plain))
    ]  # compiler lines (older go prints them outside the JSON stream)
    if not results:
        return None, tuple(built)  # nothing ran: what did not build, or (none found) the raw output
    errors = len([p for p in failed_packages if not any(k[0] == p for k in failing)])
    return Counts(passed, len(leaves), skipped, errors), tuple(failures) + (tuple(built) if errors else ())
