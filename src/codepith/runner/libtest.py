"""cargo test output -> counts and failures, from libtest's summary lines and failure blocks.

libtest's JSON format is unstable (nightly only), so this reads the lines stable libtest has printed
for years: ``test result: ...`` per test binary, ``---- NAME stdout ----`` blocks, and the compiler's
``error...`` / ``--> path:line`` pairs when the crate does not build.
"""

from __future__ import annotations

import re
from pathlib import Path

from codepith.runner.frames import repo_frames
from codepith.runner.results import Counts, Failure

# counts of at most 18 digits: a failing test's captured stdout may print a lookalike line, and int()
# refuses more than 4300 digits
_N = r"(\d{1,18})"
_RESULT = re.compile(
    rf"^test result: \w+\. {_N} passed; {_N} failed; {_N} ignored; {_N} measured; {_N} filtered out", re.M
)
_BLOCK = re.compile(r"^---- (.+?) stdout ----$", re.M)
_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at ([^\n]+?):?$", re.M)
_COMPILE = re.compile(r"^(error(?:\[E\d+\])?: .+)$\n(?:.*\n){0,3}?\s*--> ([^\n]+)$", re.M)
_END = re.compile(r"^(?:failures:|test result:)", re.M)


def _message(block: str) -> str:
    panic = _PANIC.search(block)
    if panic is None:
        return block.strip()
    lines = []
    for line in block[panic.end() :].lstrip("\n").splitlines():
        if line.startswith(("note: run with `RUST_BACKTRACE", "stack backtrace:")):
            break
        lines.append(line)
    return "\n".join(lines).strip() or panic.group(0)


def parse_libtest(text: str, root: Path) -> tuple[Counts | None, tuple[Failure, ...]]:
    results = _RESULT.findall(text)
    failures: list[Failure] = []
    for m in _BLOCK.finditer(text):
        end = _END.search(text, m.end())
        nxt = _BLOCK.search(text, m.end())
        stop = min(x.start() for x in (end, nxt) if x is not None) if (end or nxt) else len(text)
        block = text[m.end() : stop]
        failures.append(Failure(m.group(1), _message(block), repo_frames(block, root, innermost_last=False)))
    if not results:
        for m in _COMPILE.finditer(text):
            if "could not compile" in m.group(1):
                continue
            frames = repo_frames(m.group(2), root, innermost_last=False)
            failures.append(Failure("build", m.group(1), frames, "error"))
        return None, tuple(failures)
    passed = sum(int(r[0]) for r in results)
    failed = sum(int(r[1]) for r in results)
    ignored = sum(int(r[2]) for r in results)
    return Counts(passed, failed, ignored, 0), tuple(failures)
