"""``run_tests`` as the surfaces call it: which folder (confined like every read), run, render.

The repository goes through ``Repos.resolve`` like search does, so whatever root confinement the
service applies to reads applies here too. Remote URLs are refused outright: running a clone's tests
would execute code fetched from the internet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from codepith.errors import CodepithError
from codepith.runner.render import render_run
from codepith.runner.results import TestRun
from codepith.runner.run import DEFAULT_TIMEOUT, run_tests
from codepith.runner.runners import RUNNERS
from codepith.service.repos import Repos, looks_like_url

DEFAULT_MAX_CHARS = 6000


def local_repo(repo: str | Sequence[str] | None) -> str | None:
    """The one local folder a request names (None: the server's default), or a one-line refusal."""
    if repo is None or isinstance(repo, str):
        items = [] if repo is None or not repo.strip() else [repo]
    else:
        items = list(repo)
        if len(items) != 1:
            raise CodepithError("run_tests takes one repository folder, not a list")
    if items and looks_like_url(items[0].strip()):
        raise CodepithError("run_tests runs local folders only, not git URLs (that would run downloaded code)")
    return items[0] if items else None


def run_tests_reply(
    repos: Repos,
    *,
    runner: str | None = None,
    select: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT,
    max_chars: int = DEFAULT_MAX_CHARS,
    repo: str | Sequence[str] | None = None,
    status: Callable[[str], None] | None = None,
) -> str:
    """Resolve the folder as reads do, run its tests, and render the reply within ``max_chars``."""
    folder = local_repo(repo)
    default = repos.default
    defaults = [default] if isinstance(default, str) else list(default or [])
    if folder is None and any(isinstance(d, str) and looks_like_url(d.strip()) for d in defaults):
        raise CodepithError("run_tests runs local folders only; this server's default repository is a git URL")
    found = repos.resolve(folder, clone=False)
    if len(found) != 1:
        raise CodepithError("run_tests takes one repository folder; name it with repo")
    return render_run(run_tests(found[0], runner, select, timeout_s, status), max_chars)


def cli_target(words: Sequence[str]) -> tuple[str | None, Path]:
    """``[RUNNER] [PATH]``: a first word naming a runner is the runner, anything else the folder."""
    if len(words) > 2:
        raise CodepithError(f"expected at most RUNNER and PATH, got {len(words)} words")
    runner = words[0] if words and words[0].lower() in RUNNERS else None
    rest = list(words[1:] if runner else words)
    if len(rest) == 2 or (len(words) == 2 and runner is None):
        raise CodepithError(f"unknown test runner {words[0]!r}; choose one of: {', '.join(RUNNERS)}")
    return runner, Path(rest[0] if rest else ".")


def run_cli(words: Sequence[str], select: str | None, timeout_s: float, max_chars: int) -> tuple[str, TestRun]:
    """The CLI's run: returns the reply and the run (its exit code becomes the command's)."""
    runner, path = cli_target(words)
    if not path.is_dir():
        raise CodepithError(f"not a folder: {path}")
    run = run_tests(path, runner, select, timeout_s)
    return render_run(run, max_chars), run
