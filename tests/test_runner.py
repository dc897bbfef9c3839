"""`codepith test` / runner/: real runs of small projects made here (pytest, cargo, node, go), real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write

import codepith
from codepith.errors import CodepithError
from codepith.runner.libtest import parse_libtest
from codepith.runner.process import HEAD_BYTES, TAIL_BYTES, run_process, stop_on_signals
from codepith.runner.render import render_run
from codepith.runner.results import Exit, Output, TestRun
from codepith.runner.run import run_tests
from codepith.runner.runners import check_select, detect, plan
from codepith.surfaces.cli import main


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child pytest loads no third-party plugins (seconds of start-up on a busy machine)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def gone(pid: int, wait: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (a zombie waiting for init counts as gone)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (ProcessLookupError, FileNotFoundError):
            return True
        if state == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


# -- pytest ----------------------------------------------------------------------------------------------
MIXED = """import pytest


def add(a, b):
    return a + b


def test_ok():
    assert add(1, 1) == 2


def test_fail():
    assert add(2, 2) == 5


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_error(broken):
    pass


@pytest.mark.skip(reason="later")
def test_skipped():
    pass
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    write(root, {"conftest.py": "", "tests/test_mixed.py": MIXED})
    return root


def test_pytest_failure_error_and_skip(mixed: Path) -> None:
    run = run_tests(mixed)
    assert run.runner == "pytest" and run.source == "junit"
    assert run.exit.code == 1
    assert run.counts is not None
    assert (run.counts.passed, run.counts.failed, run.counts.skipped, run.counts.errors) == (1, 1, 1, 1)
    by_name = {f.name: f for f in run.failures}
    assert set(by_name) == {"tests/test_mixed.py::test_fail", "tests/test_mixed.py::test_error"}
    fail = by_name["tests/test_mixed.py::test_fail"]
    assert "assert 4 == 5" in fail.message and str(fail.frames[0]) == "tests/test_mixed.py:13"
    error = by_name["tests/test_mixed.py::test_error"]
    assert error.kind == "error" and "RuntimeError: fixture exploded" in error.message
    assert str(error.frames[0]) == "tests/test_mixed.py:18"
    reply = render_run(run)
    assert reply.startswith("$ ") and "-m pytest" in reply.splitlines()[0]
    assert "pytest: exit 1" in reply and "1 passed, 1 failed, 1 skipped, 1 errors" in reply
    assert "FAILED tests/test_mixed.py::test_fail" in reply and "at tests/test_mixed.py:13" in reply
    assert "ERROR tests/test_mixed.py::test_error" in reply


def test_pytest_pass_with_a_node_id_select(mixed: Path) -> None:
    run = run_tests(mixed, "pytest", select="tests/test_mixed.py::test_ok")
    assert run.exit.code == 0 and run.failures == ()
    assert run.counts is not None and (run.counts.passed, run.counts.total) == (1, 1)
    reply = render_run(run)
    assert "pytest: exit 0" in reply and "1 passed, 0 failed" in reply and "FAILED" not in reply
    assert reply.splitlines()[0].endswith(" tests/test_mixed.py::test_ok")


def test_pytest_collection_error(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\n", "test_ok.py": "def test_a():\n    pass\n"})
    write(tmp_path, {"test_broken.py": "import os\nimport not_a_module_anywhere\n"})
    run = run_tests(tmp_path)
    assert run.exit.code == 2
    assert run.counts is not None and run.counts.errors == 1
    (failure,) = run.failures
    assert failure.kind == "error" and failure.name == "test_broken.py"
    assert "No module named 'not_a_module_anywhere'" in failure.message
    assert [str(f) for f in failure.frames] == ["test_broken.py:2"]


def test_the_output_names_the_report_folder_as_the_command_does(tmp_path: Path) -> None:
    write(tmp_path, {"conftest.py": ""})  # no tests: pytest exits 5 and the reply shows its output
    run = run_tests(tmp_path)
    reply = render_run(run)
    assert run.exit.code == 5 and "--junitxml=$TMP/junit.xml" in reply.splitlines()[0]
    assert "generated xml file: $TMP/junit.xml" in reply and "codepith-test-" not in reply


@pytest.mark.parametrize(
    ("code", "output", "reply"),
    [
        (0, "", "pytest: exit 0 in 0.1s; no structured results"),
        (0, "all good\n", "pytest: exit 0 in 0.1s; no structured results"),  # a pass shows no output
        (1, "", "pytest: exit 1 in 0.1s; no structured results\n(no output)"),
        (1, "boom\n", "pytest: exit 1 in 0.1s; no structured results; raw output below\noutput:\nboom"),
    ],
)
def test_without_a_report_the_summary_says_what_follows(code: int, output: str, reply: str) -> None:
    run = TestRun("pytest", "pytest -v", Exit(code, seconds=0.1), Output(output, "", 0))
    assert render_run(run) == "$ pytest -v\n" + reply


def test_a_huge_number_after_a_file_name_is_not_a_line(tmp_path: Path) -> None:
    # int() refuses more than 4300 digits: "data.bin:" + 5000 digits once crashed the reply
    digits = "7" * 5000
    test = f'def test_digits():\n    raise AssertionError("checksum mismatch in data.bin:{digits}")\n'
    write(tmp_path, {"conftest.py": "", "test_big.py": test})
    run = run_tests(tmp_path)
    (failure,) = run.failures
    assert "data.bin:777" in failure.message and [str(f) for f in failure.frames] == ["test_big.py:2"]
    assert "FAILED test_big.py::test_digits" in render_run(run)
    tail = "failed; 0 ignored; 0 measured; 0 filtered out\n"
    block = f"---- tests::big stdout ----\ntest result: ok. {digits} passed; 0 {tail}"  # printed by the test
    summary = f"test result: FAILED. 1 passed; 1 {tail}"
    counts, failures = parse_libtest(f"failures:\n\n{block}\nfailures:\n    tests::big\n\n{summary}", tmp_path)
    assert counts is not None and (counts.passed, counts.failed) == (1, 1)  # the lookalike line is not a count
    assert [f.name for f in failures] == ["tests::big"]


HANG = """import os
import subprocess
import time


def test_hangs():
    child = subprocess.Popen(["sleep", "300"])
    with open("pids.txt", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    time.sleep(300)
"""


def test_timeout_kills_the_child_and_its_grandchild(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"conftest.py": "", "test_hang.py": HANG})
    t0 = time.monotonic()
    code = main(["test", "pytest", str(tmp_path), "--timeout", "6"])
    assert code == 124
    assert time.monotonic() - t0 < 15  # SIGTERM, then SIGKILL after a short grace
    out = capsys.readouterr().out
    assert "pytest: timed out after 6s (process group killed)" in out
    assert out.rstrip().endswith("test_hang.py::test_hangs")  # the tail names the test that hung
    pids = [int(p) for p in (tmp_path / "pids.txt").read_text().split()]  # the test really ran
    assert len(pids) == 2 and pids[0] != pids[1]
    for pid in pids:  # pytest itself (the child) and the `sleep` it spawned (the grandchild)
        assert gone(pid), f"process {pid} survived the timeout"


SLEEPER = """import os
import time


def test_sleeps():
    with open("pid.txt", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(300)
"""
# the CLI as a person starts it, with SIGINT and SIGHUP at their defaults (a harness may ignore them)
CLI = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
    "from codepith.surfaces.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_the_cli_kills_the_run_and_removes_its_folder(tmp_path: Path, sig: int) -> None:
    root, tmp = tmp_path / "proj", tmp_path / "tmp"
    write(root, {"conftest.py": "", "test_sleep.py": SLEEPER})
    tmp.mkdir()
    src = str(Path(codepith.__file__).parent.parent)
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": src}
    cmd = [sys.executable, "-c", CLI, "test", "pytest", str(root), "--timeout", "600"]
    cli = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = root / "pid.txt"
    try:
        while not pid_file.is_file() or not pid_file.read_text():  # the test is running
            assert cli.poll() is None, cli.communicate()
            time.sleep(0.05)
        assert list(tmp.iterdir())  # the run's report folder
        cli.send_signal(sig)
        out, err = cli.communicate(timeout=60)
        assert cli.returncode == 128 + sig, (out, err)
        assert (out, err) == ("", "")
        assert gone(int(pid_file.read_text())), "pytest outlived the CLI"
        assert list(tmp.iterdir()) == []  # /tmp/codepith-test-* removed
    finally:
        cli.kill()
        if pid_file.is_file() and not gone(int(pid_file.read_text()), 0):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)  # a failed check leaves no sleeper behind


def test_a_stop_signal_before_the_run_starts_kills_it_at_once(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)  # e.g. while the runner is being detected
        exit_, _ = run_process([sys.executable, "-c", "import time; time.sleep(300)"], tmp_path, 20)
    assert stop.signal == signal.SIGTERM and stop.exit_code == 143
    assert exit_.signal == signal.SIGKILL
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is put back
    exit_, _ = run_process([sys.executable, "-c", "pass"], tmp_path, 600)  # later runs run
    assert exit_.code == 0


def test_200_passing_and_2_failing_fit_in_2000_characters(tmp_path: Path) -> None:
    passing = "\n\n".join(f"def test_ok_{i}():\n    assert {i} == {i}" for i in range(200))
    write(tmp_path, {"conftest.py": "", "tests/test_many.py": passing + "\n"})
    write(
        tmp_path,
        {
            "tests/test_two.py": (
                "def parse(text):\n    return int(text)\n\n\n"
                "def test_parse_number():\n    assert parse('41') == 42\n\n\n"
                "def test_parse_word():\n    parse('forty-two')\n"
            )
        },
    )
    run = run_tests(tmp_path)
    assert run.counts is not None and (run.counts.passed, run.counts.failed) == (200, 2)
    reply = render_run(run, max_chars=2000)
    assert len(reply) < 2000
    assert "200 passed, 2 failed" in reply
    assert "FAILED tests/test_two.py::test_parse_number" in reply and "assert 41 == 42" in reply
    assert "at tests/test_two.py:6" in reply
    assert "FAILED tests/test_two.py::test_parse_word" in reply
    assert "ValueError: invalid literal for int() with base 10: 'forty-two'" in reply
    assert "tests/test_two.py:10" in reply and "tests/test_two.py:2" in reply  # the test, then where it broke
    assert "test_ok_" not in reply  # passing tests cost nothing
    tiny = render_run(run, max_chars=300)  # too small for both: the rest is named, never cut mid-way
    assert len(tiny) <= 300 and "test_parse_word" in tiny


# -- select and runner checks -------------------------------------------------------------------------
@pytest.mark.parametrize("runner", ["pytest", "npm", "cargo", "go"])
@pytest.mark.parametrize(
    "select",
    ["--rootdir=/ -p evil", "x; rm -rf /", "$(id)", "`id`", "-k", " -x", "a\nb", "a\0b", "t && id", "a > /tmp/x"],
)
def test_select_injection_is_refused_in_one_line(tmp_path: Path, runner: str, select: str) -> None:
    with pytest.raises(CodepithError) as err:
        plan(runner, tmp_path, select, tmp_path)
    assert "\n" not in str(err.value) and "select" in str(err.value)


def test_select_refusals_specific_to_a_runner(tmp_path: Path) -> None:
    write(tmp_path, {"test/a.test.js": "", "package.json": '{"scripts": {"test": "node --test"}}'})
    for runner, select in [
        ("pytest", "@args.txt"),  # pytest reads arguments from @files
        ("pytest", "../elsewhere/test_x.py::test_y"),
        ("npm", "test/missing.test.js"),
        ("npm", "../a.test.js"),
        ("npm", "test/a test.js"),
        ("pnpm", "a|b"),
    ]:
        with pytest.raises(CodepithError):
            check_select(runner, select, tmp_path)
    assert check_select("npm", "test/a.test.js", tmp_path) == "test/a.test.js"
    assert check_select("go", "^TestA$|TestB", tmp_path) == "^TestA$|TestB"  # a go regular expression


def test_select_is_one_argument_that_reaches_the_runner_literally(tmp_path: Path) -> None:
    """A `-k` expression with spaces and parentheses stays one argument; nothing is parsed by a shell."""
    marker = tmp_path / "executed"
    argv = plan("pytest", tmp_path, f"not (slow or touch_{marker.name})", tmp_path).argv
    assert argv[-2:] == ("-k", f"not (slow or touch_{marker.name})")
    if shutil.which("cargo"):
        assert plan("cargo", tmp_path, "tests::it works", tmp_path).argv[-1] == "tests::it works"
    with pytest.raises(CodepithError):
        run_tests(tmp_path, "pytest", select=f"$(touch {marker})")
    assert not marker.exists()


def test_unknown_runner_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CodepithError, match="unknown test runner 'make'; choose one of: pytest, npm"):
        run_tests(tmp_path, "make")
    assert main(["test", "rake", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown test runner 'rake'" in err


def test_detection(tmp_path: Path) -> None:
    def folder(name: str, files: dict[str, str]) -> Path:
        root = tmp_path / name
        root.mkdir()
        write(root, files)
        return root

    node = '{"scripts": {"test": "node --test"}}'
    assert detect(folder("py", {"pyproject.toml": ""})) == "pytest"
    assert detect(folder("ini", {"pytest.ini": ""})) == "pytest"
    assert detect(folder("conf", {"conftest.py": ""})) == "pytest"
    assert detect(folder("npm", {"package.json": node, "package-lock.json": "{}"})) == "npm"
    assert detect(folder("nolock", {"package.json": node})) == "npm"
    assert detect(folder("pnpm", {"package.json": node, "pnpm-lock.yaml": ""})) == "pnpm"
    assert detect(folder("yarn", {"package.json": node, "yarn.lock": ""})) == "yarn"
    assert detect(folder("go", {"go.mod": "module x\n"})) == "go"
    assert detect(folder("cargo", {"Cargo.toml": ""})) == "cargo"
    with pytest.raises(CodepithError, match=r"several test runners fit .*: pytest .*cargo .*one of: pytest, cargo"):
        detect(folder("both", {"pyproject.toml": "", "Cargo.toml": ""}))
    with pytest.raises(CodepithError, match="name one of: pnpm, yarn"):
        detect(folder("locks", {"package.json": node, "pnpm-lock.yaml": "", "yarn.lock": ""}))
    default_script = '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'
    for name, files in [("empty", {}), ("npminit", {"package.json": default_script})]:
        with pytest.raises(CodepithError) as err:
            detect(folder(name, files))
        assert "no test runner detected" in str(err.value) and "pytest, npm, pnpm, yarn, go, cargo" in str(err.value)
        assert "\n" not in str(err.value)


# -- process control ----------------------------------------------------------------------------------
def test_capture_keeps_head_and_tail_and_says_what_was_dropped(tmp_path: Path) -> None:
    script = "import sys\nfor i in range(200000): sys.stdout.write(f'line {i:06d}\\n')\n"
    exit_, out = run_process([sys.executable, "-c", script], tmp_path, 60)
    assert exit_.code == 0
    assert out.head.startswith("line 000000\n") and out.tail.endswith("line 199999\n")
    assert len(out.head) == HEAD_BYTES and len(out.tail) == TAIL_BYTES
    assert out.dropped == 200000 * 12 - HEAD_BYTES - TAIL_BYTES
    assert f"({out.dropped} bytes of output dropped)" in out.text


def test_processes_left_behind_by_a_finished_run_are_killed(tmp_path: Path) -> None:
    script = "import subprocess, sys\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid, flush=True)\nsys.exit(3)\n"
    t0 = time.monotonic()
    exit_, out = run_process([sys.executable, "-c", script], tmp_path, 60)
    assert exit_.code == 3 and exit_.shell_code == 3
    assert time.monotonic() - t0 < 10  # the sleep held the pipe open: it was killed, not waited for
    assert gone(int(out.text.split()[0]))


def test_a_long_run_reports_how_long_it_has_been_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codepith.runner import process

    monkeypatch.setattr(process, "TICK_EVERY", 0.1)
    ticks: list[float] = []
    exit_, _ = run_process([sys.executable, "-c", "import time; time.sleep(1)"], tmp_path, 60, tick=ticks.append)
    assert exit_.code == 0
    assert len(ticks) >= 3 and ticks == sorted(ticks) and ticks[-1] < exit_.seconds


# -- cargo ------------------------------------------------------------------------------------------
CARGO_TOML = '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
LIB_RS = """pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }

    #[test]
    fn breaks() {
        assert_eq!(add(1, 1), 3, "math is off");
    }

    #[test]
    #[ignore]
    fn slow() {}
}
"""


@pytest.fixture(scope="session")
def crate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    root = tmp_path_factory.mktemp("crate")
    write(root, {"Cargo.toml": CARGO_TOML, "src/lib.rs": LIB_RS})
    return root


def test_cargo_failure_through_the_cli(
    crate: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    assert main(["test", str(crate), "--max-chars", "1000"]) == 101  # detected from Cargo.toml; cargo's own code
    reply = capsys.readouterr().out
    assert reply.startswith("$ cargo test --no-fail-fast --color never\ncargo: exit 101")
    assert "1 passed, 1 failed, 1 skipped, 0 errors" in reply
    assert "FAILED tests::breaks" in reply and "math is off" in reply and "left: 2" in reply
    assert "at src/lib.rs:16" in reply
    assert "rust_begin_unwind" not in reply and "/rustc/" not in reply  # no frames outside the repository


def test_cargo_filter_select(crate: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    run = run_tests(crate, "cargo", select="adds")
    assert run.exit.code == 0 and run.failures == ()
    assert run.counts is not None and (run.counts.passed, run.counts.failed) == (1, 0)


# -- node's built-in runner behind npm test ---------------------------------------------------------------
NODE_FAILING = """const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib.js');

test('adds', () => { assert.strictEqual(add(1, 1), 2); });
test('breaks', () => { assert.strictEqual(add(1, 1), 3, 'math is off'); });
test.describe('group', () => {
  test.it('throws', () => { add(null, 1); });
});
test.skip('later', () => {});
"""
NODE_LIB = """function add(a, b) {
  if (a === null) throw new TypeError('a is null');
  return a + b;
}
module.exports = { add };
"""


@pytest.fixture(scope="module")
def npm_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed")
    root = tmp_path_factory.mktemp("npmproj")
    write(
        root,
        {
            "package.json": json.dumps({"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}),
            "package-lock.json": json.dumps({"name": "p", "lockfileVersion": 3, "packages": {}}),
            "lib.js": NODE_LIB,
            "test/a.test.js": NODE_FAILING,
            "test/b.test.js": "const test = require('node:test');\ntest('fine', () => {});\n",
        },
    )
    return root


def test_npm_test_with_node_runner(npm_project: Path) -> None:
    run = run_tests(npm_project)
    assert run.runner == "npm" and run.source == "junit" and run.exit.code == 1
    assert run.counts is not None
    assert (run.counts.passed, run.counts.failed, run.counts.skipped) == (2, 2, 1)
    reply = render_run(run)
    assert "FAILED breaks\n  AssertionError [ERR_ASSERTION]: math is off" in reply and "2 !== 3" in reply
    assert "at test/a.test.js:6" in reply
    assert "FAILED group > throws" in reply and "a is null" in reply and "at lib.js:2, test/a.test.js:8" in reply
    assert "node:internal" not in reply


def test_npm_select_a_test_file(npm_project: Path) -> None:
    run = run_tests(npm_project, "npm", select="test/b.test.js")
    assert run.exit.code == 0 and run.command.endswith(" test/b.test.js")
    assert run.counts is not None and (run.counts.passed, run.counts.failed) == (1, 0)


@pytest.mark.parametrize(
    ("script", "parser", "option"),
    [
        ("node --test", "junit", "--test-reporter=junit"),
        ("node --experimental-vm-modules --test test/", "junit", "--test-reporter=junit"),
        ("jest", "jest-json", "--json"),
        ("npx jest --ci", "jest-json", "--json"),
        ("vitest run", "junit", "--reporter=junit"),
        ("jest && eslint .", "text", None),  # the options would reach eslint: not added
        ("mocha", "text", None),
    ],
)
def test_npm_family_asks_the_scripts_runner_for_a_report(
    tmp_path: Path, script: str, parser: str, option: str | None
) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": script}})})
    chosen = plan("npm", tmp_path, None, tmp_path)
    assert chosen.parser == parser
    if option is None:
        assert chosen.argv == ("npm", "test") and chosen.report is None
    else:
        assert chosen.argv[:3] == ("npm", "test", "--") and option in chosen.argv
        assert chosen.report is not None and any(str(chosen.report) in arg for arg in chosen.argv)


@pytest.mark.parametrize(("script", "passed"), [("jest", r"__tests__/c\+\+\.test\.js"), ("node --test", None)])
def test_a_test_file_reaches_jest_as_a_literal_pattern(tmp_path: Path, script: str, passed: str | None) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": script}}), "__tests__/c++.test.js": ""})
    chosen = plan("npm", tmp_path, "__tests__/c++.test.js", tmp_path)
    assert chosen.argv[-1] == (passed or "__tests__/c++.test.js")  # node takes a path, not a pattern


NOISY = """let out = [];
for (let i = 0; i < 300; i++) out.push(`checking record ${i} ok`);
out.push('FAIL totals are wrong', '  expected 3, received 2', '  at check.js:4');
for (let i = 0; i < 100; i++) out.push(`cleanup step ${i}`);
out.push('done: 1 problem');
console.log(out.join('\\n'));
process.exit(1);
"""


def test_unstructured_runner_output_is_filtered(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write(tmp_path, {"package.json": json.dumps({"scripts": {"test": "node check.js"}}), "check.js": NOISY})
    run = run_tests(tmp_path, "npm")
    assert run.exit.code == 1 and run.source == "text" and run.counts is None
    reply = render_run(run, max_chars=1500)
    assert len(reply) <= 1500 and "no structured results" in reply
    assert "lines that mention a failure:\nFAIL totals are wrong\n  expected 3, received 2" in reply
    assert reply.endswith("done: 1 problem") and "checking record 5 ok" not in reply


# -- go (optional toolchain) ----------------------------------------------------------------------------
GO_TEST = """package sub

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("bad")
	}
}

func TestBreaks(t *testing.T) {
	if got := Add(1, 1); got != 3 {
		t.Errorf("Add(1, 1) = %d, want 3", got)
	}
}

func TestTable(t *testing.T) {
	t.Run("one", func(t *testing.T) {})
	t.Run("two", func(t *testing.T) { t.Error("two is wrong") })
}
"""


@pytest.mark.skipif(shutil.which("go") is None, reason="go is optional and not installed (apt-get install golang-go)")
def test_go_test_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOTOOLCHAIN", "local")  # never download a toolchain; go's build cache stays warm
    write(
        tmp_path,
        {
            "go.mod": "module example.com/m\n\ngo 1.19\n",
            "sub/calc.go": "package sub\n\nfunc Add(a, b int) int { return a + b }\n",
            "sub/calc_test.go": GO_TEST,
        },
    )
    run = run_tests(tmp_path)
    assert run.runner == "go" and run.exit.code == 1
    names = [f.name for f in run.failures]
    assert names == ["example.com/m/sub.TestBreaks", "example.com/m/sub.TestTable/two"]  # leaves, not parents
    assert "Add(1, 1) = 2, want 3" in run.failures[0].message
    assert [str(f) for f in run.failures[0].frames] == ["sub/calc_test.go:13"]
    assert run.counts is not None and run.counts.failed == 2


def test_run_tests_tool_refuses_remote_and_several_repositories(tmp_path: Path) -> None:
    from codepith.runner.tool import run_tests_reply
    from codepith.service.repos import Repos

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    repos = Repos(tmp_path)
    for repo, expected in [
        ("https://github.com/o/r", "local folders only"),
        ("git@github.com:o/r.git", "local folders only"),
        ([str(tmp_path / "a"), str(tmp_path / "b")], "one repository folder"),
        ("missing", "unknown repository"),
    ]:
        with pytest.raises(CodepithError, match=expected):
            run_tests_reply(repos, repo=repo)
    with pytest.raises(CodepithError, match="default repository is a git URL"):
        run_tests_reply(Repos(tmp_path, default="https://github.com/o/r"))
    with pytest.raises(CodepithError, match="no test runner detected"):  # resolved, then nothing to run
        run_tests_reply(repos, repo="a")


def test_cli_refuses_what_it_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(tmp_path / "missing")]) == 2
    assert main(["test", str(tmp_path)]) == 2  # nothing to detect
    assert main(["test", "pytest", str(tmp_path), "--select=--rootdir=/ -p evil"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(line.startswith("codepith: error: ") for line in lines)
    assert "not a folder" in lines[0] and "no test runner detected" in lines[1] and "may not start with '-'" in lines[2]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("--select=--", "select may not start with '-'"),
        ("--timeout=--", "argument --timeout: not a whole number: '--'"),
        ("--max-chars=--", "argument --max-chars: not a whole number: '--'"),
    ],
)
def test_cli_refuses_an_option_given_as_two_dashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, expected: str
) -> None:
    # argparse (Python 3.11) stores --opt=-- as an empty list, not as "--"
    write(tmp_path, {"conftest.py": ""})
    try:  # Python 3.13's argparse judges "--" itself and exits through the parser's error: the same line
        code = main(["test", "pytest", str(tmp_path), option])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("codepith: error: ") and expected in line
