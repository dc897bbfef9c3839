"""The allowlist: which runners exist, how each is detected, and the fixed argument vector it runs.

Nothing here goes through a shell. The only caller-controlled piece of a command is ``select``, passed
as one argument that has been checked so it cannot become an option, a second command or a path
outside the repository.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from codepith.errors import CodepithError

RUNNERS = ("pytest", "npm", "pnpm", "yarn", "go", "cargo")
LOCKFILES = {"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock"}
PYTEST_MARKERS = ("pyproject.toml", "pytest.ini", "conftest.py")
NPM_DEFAULT_TEST = "no test specified"  # what `npm init` writes into scripts.test
MAX_SELECT = 500

# test scripts whose runner has a structured reporter, with nothing after them that a shell would read as
# a second command (the reporter's options are appended to the script's command line)
_PLAIN_ARGS = r"(?:\s+[^;&|<>`$()]*)?$"
_NODE_TEST = re.compile(r"^\s*node\s+(?:--[\w-]+(?:=\S+)?\s+)*--test" + _PLAIN_ARGS)
_JEST = re.compile(r"^\s*(?:npx\s+)?jest" + _PLAIN_ARGS)
_VITEST = re.compile(r"^\s*(?:npx\s+)?vitest(?:\s+run)?" + _PLAIN_ARGS)
# shell syntax: nothing here runs through a shell, but a value that looks like a command is refused rather
# than passed on (npm-family scripts do run in one); go keeps | and $ for its -run regular expressions
_SHELLISH = re.compile(r"[;`&<>]|\$[({]")
_SAFE_PATH = re.compile(r"^[\w./@+,=-]+$")  # a test file for the npm family: the scripts run in a shell
_REGEX_SYNTAX = re.compile(r"[\\^$.*+?()[\]{}|]")  # what a JavaScript regular expression reads as syntax


@dataclass(frozen=True)
class Plan:
    """One allowlisted run: the argument vector, and where its structured report lands (if any)."""

    runner: str
    argv: tuple[str, ...]
    parser: str  # "junit", "jest-json", "go-json", "libtest" or "text"
    report: Path | None = None


def choices_line() -> str:
    return ", ".join(RUNNERS)


def check_runner(name: str) -> str:
    runner = name.strip().lower()
    if runner not in RUNNERS:
        raise CodepithError(f"unknown test runner {name!r}; choose one of: {choices_line()}")
    return runner


def _package_json(root: Path) -> dict[str, object] | None:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _test_script(root: Path) -> str | None:
    data = _package_json(root)
    scripts = data.get("scripts") if data else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or NPM_DEFAULT_TEST in test:
        return None
    return test


def detect(root: Path) -> str:
    """The runner the repository's files name; one line listing the choices when none or several fit."""
    found: list[tuple[str, str]] = []
    markers = [m for m in PYTEST_MARKERS if (root / m).is_file()]
    if markers:
        found.append(("pytest", markers[0]))
    if _test_script(root) is not None:
        locks = [name for name, lock in LOCKFILES.items() if (root / lock).is_file()]
        if not locks:
            found.append(("npm", "package.json scripts.test"))
        for name in locks:
            found.append((name, f"package.json scripts.test + {LOCKFILES[name]}"))
    if (root / "go.mod").is_file():
        found.append(("go", "go.mod"))
    if (root / "Cargo.toml").is_file():
        found.append(("cargo", "Cargo.toml"))
    if len(found) == 1:
        return found[0][0]
    if not found:
        raise CodepithError(
            f"no test runner detected in {root} (no pyproject.toml, pytest.ini, conftest.py, package.json "
            f"scripts.test, go.mod or Cargo.toml); name one: {choices_line()}"
        )
    listed = "; ".join(f"{name} ({why})" for name, why in found)
    raise CodepithError(f"several test runners fit {root}: {listed}; name one of: {', '.join(n for n, _ in found)}")


def check_select(runner: str, select: str, root: Path) -> str:
    """``select`` as one safe argument, or a one-line refusal."""
    if not select.strip():
        raise CodepithError("select is empty; omit it to run every test")
    if len(select) > MAX_SELECT:
        raise CodepithError(f"select is longer than {MAX_SELECT} characters")
    if any(c in select for c in "\0\n\r"):
        raise CodepithError("select must be one line without NUL characters")
    if select.lstrip().startswith("-"):
        raise CodepithError(f"select may not start with '-' (it cannot add options): {select!r}")
    if _SHELLISH.search(select) or ("|" in select and runner != "go"):
        raise CodepithError(f"select may not contain shell syntax (; & | < > ` $( ${{): {select!r}")
    if runner == "pytest":
        if select.startswith("@"):
            raise CodepithError(f"select may not start with '@' (pytest reads arguments from such files): {select!r}")
        if _is_node_id(select):
            _inside(root, select.split("::", 1)[0], select)
    elif runner in LOCKFILES:
        if not _SAFE_PATH.match(select):
            raise CodepithError(
                f"select for {runner} must be a test file path (letters, digits, . / _ - @ + , =): {select!r}"
            )
        if not _inside(root, select, select).exists():
            raise CodepithError(f"select for {runner} must be an existing test file in the repository: {select!r}")
    return select


def _is_node_id(select: str) -> bool:
    """A pytest node id or path (``tests/test_x.py::test_y``), as opposed to a ``-k`` expression."""
    head = select.split("::", 1)[0]
    return "::" in select or head.endswith(".py") or "/" in head


def _inside(root: Path, rel: str, select: str) -> Path:
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise CodepithError(f"select names a path outside the repository: {select!r}")
    return path


def _python(root: Path) -> list[str]:
    """The interpreter that has the project's pytest: its own virtualenv first, then ours, then PATH."""
    for venv in (".venv", "venv"):
        exe = root / venv / "bin" / "python"
        if exe.is_file():
            return [str(exe), "-m", "pytest"]
    if importlib.util.find_spec("pytest") is not None:
        return [sys.executable, "-m", "pytest"]
    found = shutil.which("pytest")
    if found:
        return [found]
    raise CodepithError("pytest was not found (no .venv/bin/python in the repository, none importable, none on PATH)")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise CodepithError(f"{name} was not found on PATH")
    return name


def _reporter(script: str, tmp: Path) -> tuple[list[str], Path | None, str]:
    """Options that make the npm family's test script write a structured report, beside its usual output."""
    if _NODE_TEST.match(script):  # node's built-in runner: JUnit
        report = tmp / "junit.xml"
        args = ["--test-reporter=spec", "--test-reporter-destination=stdout", "--test-reporter=junit"]
        return [*args, f"--test-reporter-destination={report}"], report, "junit"
    if _JEST.match(script):
        report = tmp / "jest.json"
        return ["--json", f"--outputFile={report}"], report, "jest-json"
    if _VITEST.match(script):
        report = tmp / "junit.xml"
        return ["--reporter=default", "--reporter=junit", f"--outputFile.junit={report}"], report, "junit"
    return [], None, "text"


def plan(runner: str, root: Path, select: str | None, tmp: Path) -> Plan:
    """The fixed argument vector for ``runner``; structured reports are written under ``tmp``."""
    extra = [check_select(runner, select, root)] if select is not None else []
    if runner == "pytest":
        report = tmp / "junit.xml"
        argv = [*_python(root), "-v", "--tb=short", "--color=no", f"--junitxml={report}", "-o", "junit_family=xunit2"]
        if extra and not _is_node_id(extra[0]):
            argv += ["-k", extra[0]]
        else:
            argv += extra
        return Plan(runner, tuple(argv), "junit", report)  # -v: a timeout's tail names the test that hung
    if runner in LOCKFILES:
        script = _test_script(root)
        if script is None:
            raise CodepithError(f"package.json in {root} has no scripts.test for {runner} test to run")
        args, report_file, parser = _reporter(script, tmp)
        if parser == "jest-json":  # jest reads the path as a regular expression (c++.test.js ran every test)
            extra = [_REGEX_SYNTAX.sub(r"\\\g<0>", s) for s in extra]
        args += extra
        argv = [_tool(runner), "test"] + (["--"] if runner == "npm" and args else []) + args
        return Plan(runner, tuple(argv), parser, report_file)
    if runner == "go":
        argv = [_tool("go"), "test", "-json"] + [f"-run={s}" for s in extra] + ["./..."]
        return Plan(runner, tuple(argv), "go-json")
    if runner == "cargo":
        argv = [_tool("cargo"), "test", "--no-fail-fast", "--color", "never", *extra]
        return Plan(runner, tuple(argv), "libtest")
    raise CodepithError(f"unknown test runner {runner!r}; choose one of: {choices_line()}")
