"""JUnit XML reports (pytest ``--junitxml``, node's ``--test-reporter=junit``) -> counts and failures."""

from __future__ import annotations

import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from codepith.errors import CodepithError
from codepith.runner.frames import repo_frames
from codepith.runner.results import Counts, Failure

_PYTEST_E = re.compile(r"^E {1,3}(.*)$", re.M)
_JS_AT = re.compile(r"^\s+(?:at |\u276f )")  # a stack line: node's "at f (file:line)", vitest's "❯ file:line"


def _pytest_id(classname: str, name: str, root: Path) -> str:
    """``tests.test_a.TestX`` + ``test_y`` -> ``tests/test_a.py::TestX::test_y``, the id pytest accepts back."""
    if not classname:  # a collection error names the module itself
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            rel = "/".join(parts[:cut]) + ".py"
            if (root / rel).is_file():
                return rel
        return name
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        rel = "/".join(parts[:cut]) + ".py"
        if (root / rel).is_file():
            return "::".join([rel, *parts[cut:], name])
    return f"{classname}::{name}"


def _message(attr: str, body: str) -> str:
    """The error as the runner phrased it: pytest's ``E`` lines, node's ``cause``, else the attribute."""
    e_lines = _PYTEST_E.findall(body)
    if e_lines:
        return textwrap.dedent("\n".join(e_lines)).strip()
    cause = body.find("cause: ")
    if cause >= 0:
        lines: list[str] = []
        for line in body[cause + len("cause: ") :].splitlines():
            if _JS_AT.match(line):
                break
            lines.append(line)
        text = (lines[0] + "\n" + textwrap.dedent("\n".join(lines[1:]))) if lines else ""
        if text.strip():
            return re.sub(r"\n{3,}", "\n\n", text.strip())
    lines = []
    for line in body.strip().splitlines():
        if _JS_AT.match(" " + line):
            break
        lines.append(line)
    return "\n".join(lines).strip() or attr.strip()


def _path(case: ET.Element, suites: list[str]) -> str:
    return " > ".join([*suites, case.get("name", "?")])


def parse_junit(report: Path, root: Path, runner: str) -> tuple[Counts, tuple[Failure, ...]]:
    try:
        tree = ET.parse(report)
    except (OSError, ET.ParseError) as exc:
        raise CodepithError(f"unreadable JUnit report: {exc}") from exc
    passed = failed = skipped = errors = 0
    failures: list[Failure] = []

    def walk(node: ET.Element, suites: list[str]) -> None:
        nonlocal passed, failed, skipped, errors
        for child in node:
            if child.tag == "testsuite":
                name = child.get("name", "")
                inner = suites + [name] if runner != "pytest" and name else suites
                walk(child, inner)
            elif child.tag == "testcase":
                if runner == "pytest":
                    name = _pytest_id(child.get("classname", ""), child.get("name", "?"), root)
                else:
                    name = _path(child, suites)
                bad = child.find("failure")
                kind = "failed"
                if bad is None:
                    bad = child.find("error")
                    kind = "error"
                if bad is not None:
                    if kind == "failed":
                        failed += 1
                    else:
                        errors += 1
                    body = bad.text or ""
                    frames = repo_frames(body, root, innermost_last=runner == "pytest")
                    failures.append(Failure(name, _message(bad.get("message", ""), body), frames, kind))
                elif child.find("skipped") is not None:
                    skipped += 1
                else:
                    passed += 1

    walk(tree.getroot(), [])
    return Counts(passed, failed, skipped, errors), tuple(failures)
