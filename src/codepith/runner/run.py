"""One test run end to end: choose the runner, run its fixed command, read its structured report."""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from codepith.errors import CodepithError
from codepith.files.build_output import tag_folder
from codepith.runner.gojson import parse_go_json
from codepith.runner.jestjson import parse_jest_json
from codepith.runner.junit import parse_junit
from codepith.runner.libtest import parse_libtest
from codepith.runner.process import held_folder, run_process
from codepith.runner.results import Counts, Failure, Output, TestRun
from codepith.runner.runners import check_runner, detect, plan

DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 3600.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"NO_COLOR": "1", "CARGO_TERM_COLOR": "never", "PY_COLORS": "0"})
    env.pop("FORCE_COLOR", None)
    return env


def run_tests(
    root: Path,
    runner: str | None = None,
    select: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    status: Callable[[str], None] | None = None,
) -> TestRun:
    """Run the repository's tests with an allowlisted runner (detected when ``runner`` is None);
    ``status`` hears what runs, then how long it has been running, now and then."""
    if not root.is_dir():
        raise CodepithError(f"not a folder: {root}")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise CodepithError(f"timeout must be between 1 and {MAX_TIMEOUT:.0f} seconds, got {timeout:g}")
    root = root.resolve()
    name = check_runner(runner) if runner else detect(root)
    # ignore_cleanup_errors: stop_all may have removed it first (a server ending on SIGTERM)
    with tempfile.TemporaryDirectory(prefix="codepith-test-", ignore_cleanup_errors=True) as tmp, held_folder(tmp):
        tag_folder(tmp)  # a TMPDIR inside the tree: a look during the run skips the reports written here
        return _run_in(name, root, select, timeout, status, tmp)


def _run_in(
    name: str,
    root: Path,
    select: str | None,
    timeout: float,
    status: Callable[[str], None] | None,
    tmp: str,
) -> TestRun:
    """The run itself, its report and temporary files in ``tmp``."""
    chosen = plan(name, root, select, Path(tmp))
    tick: Callable[[float], None] | None = None
    if status is not None:
        say = status
        say(f"running {name} in {root}")

        def tick(seconds: float) -> None:
            say(f"{name} running for {seconds:.0f}s")

    try:
        exit_, output = run_process(chosen.argv, root, timeout, _env(), tick)
    except OSError as exc:
        raise CodepithError(f"could not start {chosen.argv[0]}: {exc.strerror or exc}") from exc
    command = shlex.join(chosen.argv).replace(tmp, "$TMP")
    # the output names the report as the command does (pytest prints "generated xml file: ...")
    output = Output(output.head.replace(tmp, "$TMP"), output.tail.replace(tmp, "$TMP"), output.dropped)
    counts: Counts | None = None
    failures: tuple[Failure, ...] = ()
    source = "text"
    if not exit_.timed_out:
        if chosen.parser == "junit" and chosen.report is not None and chosen.report.is_file():
            try:
                counts, failures = parse_junit(chosen.report, root, name)
                source = "junit"
            except CodepithError:
                pass
        elif chosen.parser == "jest-json" and chosen.report is not None and chosen.report.is_file():
            try:
                counts, failures = parse_jest_json(chosen.report, root)
                source = "jest-json"
            except CodepithError:
                pass
        elif chosen.parser == "go-json":
            counts, failures = parse_go_json(output.text, root)
            source = "go-json"
        elif chosen.parser == "libtest":
            counts, failures = parse_libtest(output.text, root)
            source = "libtest"
    return TestRun(name, command, exit_, output, counts, failures, source)
