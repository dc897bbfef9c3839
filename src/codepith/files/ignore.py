"""Ignore rules: built-in skips, ``.gitignore`` and ``.codepithignore`` files, with git's semantics.

Patterns are translated to regular expressions by ``pathspec`` (gitwildmatch); this module only decides
precedence the way git does, which a flat pathspec list cannot express for nested ignore files:

* every ignore file applies to its own folder's subtree, patterns relative to that folder;
* within a file the last matching line wins, and a deeper file beats a shallower one;
* a pattern decides only for the path it matches itself: the walker checks each folder before entering
  it and prunes excluded ones, which gives git's rule that nothing under an excluded folder can be
  re-included by ``.gitignore``;
* ``.codepithignore`` files (same syntax) are consulted after ``.gitignore`` and the built-in skips, and
  their ``!`` lines force-include: a file they name is indexed even if it is gitignored, a lockfile, of
  an unknown type (indexed as text) or of a kind outside the content selection; an anchored ``!`` line
  (one with a ``/`` inside, e.g. ``!dist/keep.js``) also opens the excluded folders on its way.
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import logging
import os
import re
import stat
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .names import show_name
from .secrets import REASON as SECRET
from .secrets import secret_name

log = logging.getLogger("codepith")

GITIGNORE = ".gitignore"
CODEPITHIGNORE = ".codepithignore"
# An ignore file is read up to this size; past it a warning says so and only the lines within it count.
MAX_IGNORE_BYTES = 1_000_000
MAX_GITFILE_BYTES = 4096  # a ``.git`` file or ``commondir``: one path
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# Folders that hold tools' state, dependencies or build output, never the project's own code (``build``,
# ``target``, ``out`` and ``dist`` are judged by what is inside them: see build_output.py). ``vendor``
# is skipped too (Go modules, Composer, Bundler): it is third-party code that drowns a project's own
# results; a ``!vendor/`` line in .codepithignore brings it back. ``env`` is skipped only when it is a
# virtualenv (any folder holding ``pyvenv.cfg`` is), since plain ``env/`` folders often hold real code.
ALWAYS_SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
        "node_modules", "bower_components", "jspm_packages", ".pnpm-store", ".yarn",
        ".venv", "venv", "__pycache__", "site-packages", ".eggs", "__pypackages__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".pytype",
        "_build",
        ".next", ".nuxt", ".svelte-kit", ".angular", ".turbo", ".parcel-cache", ".vercel", ".serverless",
        ".gradle", ".idea", ".vscode", ".vs", ".cache", ".dart_tool", ".pub-cache", ".stack-work",
        ".terraform", "elm-stuff", "Pods", "vendor", "coverage", "htmlcov", ".nyc_output",
        ".codepith", ".semble",
    }
)  # fmt: skip
_SKIP_DIR_SUFFIXES = (".egg-info",)
# Version-control folders are never walked, not even when a '!' line (say '!/*') force-includes their
# parent's entries: they hold object stores, hooks and remote URLs with tokens, never the project's code.
NEVER_OPENED_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})

_LOCKFILES = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
        "Cargo.lock", "poetry.lock", "Pipfile.lock", "pdm.lock", "uv.lock", "composer.lock", "Gemfile.lock",
        "go.sum", "go.work.sum", "mix.lock", "Podfile.lock", "pubspec.lock", "flake.lock",
        "packages.lock.json", "gradle.lockfile", "Package.resolved", "deno.lock", "conda-lock.yml",
    }
)  # fmt: skip
_LOCK_SUFFIXES = (".lock", ".lockb", ".lockfile")
_MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js", ".bundle.js")
_SOURCE_MAP_SUFFIXES = (".map",)

REASON_ALWAYS_SKIPPED = "always-skipped folder"
REASON_IGNORED = "ignored"


def dir_skip_reason(name: str) -> str | None:
    """Why a folder is skipped by name alone, or None (virtualenvs are detected by the walker)."""
    if name in ALWAYS_SKIP_DIRS or name.endswith(_SKIP_DIR_SUFFIXES):
        return REASON_ALWAYS_SKIPPED
    return None


def file_skip_reason(name: str) -> str | None:
    """Why a file is skipped by name alone ("lockfile", "minified", "source-map", "secret"), or None."""
    if name in _LOCKFILES or name.endswith(_LOCK_SUFFIXES):
        return "lockfile"
    lower = name.lower()
    if lower.endswith(_MINIFIED_SUFFIXES):
        return "minified"
    if lower.endswith(_SOURCE_MAP_SUFFIXES):
        return "source-map"
    if secret_name(name):
        return SECRET
    return None


@dataclass(frozen=True)
class _Run:
    """Consecutive lines of one ignore file with the same sign, merged into regexes for speed.

    Lines without a slash match the last path component only, so they are tested against the name
    (cheap) instead of the whole path (pathspec's ``^(?:.+/)?`` prefix scans every ``/``).
    """

    include: bool  # True: the path is ignored; False: a '!' line re-includes it
    path_regex: re.Pattern[str] | None
    name_regex: re.Pattern[str] | None

    def matches(self, local: str, name: str) -> bool:
        if self.name_regex is not None and self.name_regex.fullmatch(name):
            return True
        return self.path_regex is not None and self.path_regex.fullmatch(local) is not None


@dataclass(frozen=True)
class IgnoreFile:
    """The parsed lines of one ignore file and the folder they are relative to."""

    base: str  # folder holding the file, relative to the walk root: "" or "a/b/"
    runs: tuple[_Run, ...]
    openers: tuple[tuple[str, ...], ...]  # path components of anchored '!' lines
    source: str = ""  # the ignore file, relative to the walk root (".gitignore", "a/.codepithignore")
    lines: tuple[tuple[tuple[int, str], ...], ...] = ()  # per run: (line number, line) it was built from

    def decide(self, rel_path: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a '!' line, None = no line matches this path."""
        hit = self.decide_run(rel_path, is_dir)
        return None if hit is None else self.runs[hit].include

    def decide_run(self, rel_path: str, is_dir: bool) -> int | None:
        """Index of the run that decides this path (see ``decide``), None when no line matches."""
        local = rel_path[len(self.base) :]
        name = local.rpartition("/")[2]
        if is_dir:
            local += "/"
            name += "/"
        for i in range(len(self.runs) - 1, -1, -1):
            if self.runs[i].matches(local, name):
                return i
        return None

    def single_lines(self, run: int) -> list[tuple[int, str, IgnoreFile]]:
        """Each line of one run compiled on its own, last line first: what tells which line of a
        merged run matched. Costs a compile per line, so it is for explaining, not for walking."""
        out: list[tuple[int, str, IgnoreFile]] = []
        for number, text in reversed(self.lines[run] if run < len(self.lines) else ()):
            single = parse_ignore_lines([text], self.base)
            if single is not None:
                out.append((number, text.rstrip("\r"), single))
        return out

    def opens(self, rel_dir: str) -> bool:
        """Whether some anchored '!' line could match this folder or something below it."""
        if not self.openers:
            return False
        parts = tuple(rel_dir[len(self.base) :].strip("/").split("/"))
        return any(_could_match_below(parts, opener) for opener in self.openers)


def _could_match_below(dir_parts: Sequence[str], pattern: Sequence[str]) -> bool:
    """Component-wise glob prefix match: can a path starting with ``dir_parts`` match ``pattern``?

    Deliberately generous (it only decides whether to look inside an excluded folder; pathspec then
    judges every file found there).
    """
    if not dir_parts:
        return True
    if not pattern:
        return True  # the pattern named an ancestor folder, which covers everything below it
    if pattern[0] == "**":
        return _could_match_below(dir_parts, pattern[1:]) or _could_match_below(dir_parts[1:], pattern)
    if not fnmatch.fnmatchcase(dir_parts[0], pattern[0].replace("\\", "")):
        return False
    return _could_match_below(dir_parts[1:], pattern[1:])


def _normalize_line(line: str) -> str:
    """Rewrite the few forms whose pathspec regex is a bare prefix into equivalent full-path forms.

    ``a/**`` compiles to ``^a/`` (a prefix of everything inside ``a``) and ``**/`` to a pattern that
    never matches at the start; git means "everything inside a" and "every folder".
    """
    line = line.rstrip("\r")
    sign = "!" if line.startswith("!") else ""
    body = line[1:] if sign else line
    stripped = body.rstrip(" ")
    if stripped.endswith("\\"):  # an escaped trailing space is part of the name
        return line
    if stripped in ("**/", "/**/"):
        stripped = "*/"
    elif stripped.endswith("/**"):
        stripped += "/*"
    elif stripped.endswith("/**/"):
        stripped = stripped[:-1] + "/*/"
    return sign + stripped


# git's POSIX classes inside brackets ("[[:digit:]]"), as the ASCII ranges git's wildmatch tests (it uses
# its own ctype tables, whatever the locale). pathspec copies a bracket's inside into a regex set as it
# is, and Python's sets have no such classes (it read "[[:digit:]" as a set of '[', ':', 'd', ... and the
# closing ']' as a literal). No expansion starts with '!' or '^' (which would negate the set) or holds a
# literal ']', '[' or '\\'.
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": "\t ",
    "cntrl": "\x01-\x1f\x7f",
    "digit": "0-9",
    "graph": '"-~!',
    "lower": "a-z",
    "print": " -~",
    "punct": ":-@!-.[-`{-~",  # and "/", which no name holds (and would split the pattern)
    "space": "\t-\r ",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def _expand_posix_classes(line: str) -> str | None:
    """``line`` with each ``[:name:]`` inside a bracket expression replaced by its ranges, parsing brackets
    as git's wildmatch does; None when a class name is unknown (git never matches such a pattern).

    A bracket with no closing ``]`` is left as it was (pathspec takes its ``[`` literally).
    """
    if "[:" not in line:
        return line
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "\\":
            out.append(line[i : i + 2])
            i += 2
            continue
        if ch != "[":
            out.append(ch)
            i += 1
            continue
        body = ["["]
        j = i + 1
        if j < n and line[j] in "!^":
            body.append(line[j])
            j += 1
        start, closed, prev = j, False, False  # prev: a member a '-' may make a range from
        while j < n:
            c = line[j]
            if c == "]" and j > start:
                body.append(c)
                j += 1
                closed = True
                break
            if c == "\\":
                body.append(line[j : j + 2])
                j += 2
                prev = True
            elif c == "-" and prev and j + 1 < n and line[j + 1] != "]":
                width = 3 if line[j + 1] == "\\" else 2
                body.append(line[j : j + width])
                j += width
                prev = False
            elif c == "[" and line.startswith(":", j + 1):
                end = line.find("]", j + 2)
                if end == -1:
                    break  # unclosed: git never matches; left as it was
                if end - 1 >= j + 2 and line[end - 1] == ":":
                    ranges = _POSIX_CLASSES.get(line[j + 2 : end - 1])
                    if ranges is None:
                        return None
                    body.append(ranges)
                    j = end + 1
                    prev = False
                else:  # no ":]": the '[' is an ordinary member
                    body.append(c)
                    j += 1
                    prev = True
            else:
                body.append(c)
                j += 1
                prev = True
        if not closed:
            out.append(line[i:])
            break
        out.append("".join(body))
        i = j
    return "".join(out)


_GROUP = re.compile(r"\(\?P<[^>]+>")
_ANY_FOLDER = "^(?:.+/)?"


def _pattern_regex(line: str) -> tuple[bool, str] | None:
    """(include, regex source) for one gitignore line, or None for blanks, comments and invalid lines."""
    import pathspec  # here: only a walk compiles patterns, and the import was 25 ms of a cold CLI search

    try:
        spec = pathspec.GitIgnoreSpec.from_lines([line])
    except Exception:  # pathspec rejects a few malformed globs; git ignores such lines too
        return None
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue
        source = regex.pattern if isinstance(regex.pattern, str) else regex.pattern.decode()
        if source == ".":  # "*", "**", "/**": anything at all
            source = ".+"
        return bool(pattern.include), _GROUP.sub("(?:", source)
    return None


def parse_ignore_lines(lines: Iterable[str], base: str = "", source: str = "") -> IgnoreFile | None:
    """Compile gitignore-syntax lines relative to folder ``base`` ("" or "a/b/"); None if nothing applies.

    ``source`` names the file the lines came from, so a report can say which line hid a path.
    """
    with warnings.catch_warnings():
        # A '[' right inside a bracket ("[[]") makes re warn "Possible nested set" on every compile; the
        # pattern means what git means by it, and the warning would reach the user's stderr each run.
        warnings.simplefilter("ignore", FutureWarning)
        return _parse_ignore_lines(lines, base, source)


def _parse_ignore_lines(lines: Iterable[str], base: str, source: str) -> IgnoreFile | None:
    compiled: list[tuple[bool, str, bool]] = []  # (include, regex source, matches the name only)
    numbered: list[tuple[int, str]] = []
    openers: list[tuple[str, ...]] = []
    for number, raw in enumerate(lines, 1):
        line = _expand_posix_classes(_normalize_line(raw))
        hit = None if line is None else _pattern_regex(line)
        if line is None or hit is None:
            continue
        include, regex = hit
        body = (line if include else line[1:]).rstrip(" ").rstrip("/")
        name_only = "/" not in body and regex.startswith(_ANY_FOLDER)
        compiled.append((include, regex[len(_ANY_FOLDER) :] if name_only else regex, name_only))
        numbered.append((number, raw))
        if not include and "/" in body:
            openers.append(tuple(body.lstrip("/").split("/")))
    if not compiled:
        return None
    runs: list[_Run] = []
    run_lines: list[tuple[tuple[int, str], ...]] = []
    start = 0
    for i in range(1, len(compiled) + 1):
        if i == len(compiled) or compiled[i][0] != compiled[start][0]:
            group = compiled[start:i]
            runs.append(
                _Run(
                    include=group[0][0],
                    path_regex=_merge([src for _, src, by_name in group if not by_name]),
                    name_regex=_merge([src for _, src, by_name in group if by_name]),
                )
            )
            run_lines.append(tuple(numbered[start:i]))
            start = i
    return IgnoreFile(base, tuple(runs), tuple(openers), source, tuple(run_lines))


def _merge(sources: list[str]) -> re.Pattern[str] | None:
    if not sources:
        return None
    return re.compile("|".join(f"(?:{src})" for src in sources), re.DOTALL)


def load_ignore_file(
    path: str | Path, base: str = "", source: str | None = None, within: str | None = None
) -> IgnoreFile | None:
    """Read and compile one ignore file; an unreadable file counts as absent (the walk must go on).

    ``source`` (default: ``base`` + the file's name) is how reports name the file. ``within`` (a real
    folder path, the walk's root) bounds where a symlinked ignore file may lead: one whose real path is
    outside it is not read. Only a regular file is read, and at most its first ``MAX_IGNORE_BYTES``
    (see ``read_ignore_bytes``).
    """
    if source is None:
        source = base + os.path.basename(os.fspath(path))
    data = read_ignore_bytes(path, within)
    if data is None:
        return None
    return _compiled(data, base, source)


def read_ignore_bytes(path: str | Path, within: str | None = None) -> bytes | None:
    """The bytes of an ignore file, or None (with a warning when it is there but refused).

    Refused: anything but a regular file (a FIFO or a device is never read: the open does not block and
    the type is checked on the open descriptor), and, when ``within`` is given, a symlink whose real path
    is not inside it. A file over ``MAX_IGNORE_BYTES`` gives a warning, and only the lines that end
    within its first ``MAX_IGNORE_BYTES`` are used.
    """
    name = os.fspath(path)
    try:
        fd = os.open(name, _READ_FLAGS | (_NOFOLLOW if within is not None else 0))
    except OSError as exc:
        if within is None or exc.errno != errno.ELOOP:  # absent or unreadable: as if there were none
            return None
        real = os.path.realpath(name)  # a symlink: read only if it stays inside ``within``
        if not _inside(real, within):
            _warn_once(f"{show_name(name)} is a symlink that leads out of {show_name(within)}; not read")
            return None
        try:
            fd = os.open(real, _READ_FLAGS | _NOFOLLOW)
        except OSError:
            return None
    chunks: list[bytes] = []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _warn_once(f"{show_name(name)} is not a regular file; not read")
            return None
        got = 0
        while got <= MAX_IGNORE_BYTES:
            chunk = os.read(fd, MAX_IGNORE_BYTES + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_IGNORE_BYTES:
        _warn_once(
            f"{show_name(name)} is larger than {MAX_IGNORE_BYTES:,} bytes; only the lines within its first "
            f"{MAX_IGNORE_BYTES:,} bytes are used"
        )
        data = data[: data.rfind(b"\n", 0, MAX_IGNORE_BYTES) + 1]
    return data


def _inside(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """Log a warning about an ignore file once per process (a watched index walks again and again)."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


@functools.lru_cache(maxsize=256)
def _compiled(data: bytes, base: str, source: str) -> IgnoreFile | None:
    """Compiled once per content: a watcher's change re-reads the ignore files on its path, and
    compiling a big one (the kernel's top .gitignore) costs tens of milliseconds."""
    # surrogateescape keeps non-UTF-8 names in patterns comparable to os.fsdecode'd file names.
    return parse_ignore_lines(data.decode("utf-8", "surrogateescape").splitlines(), base, source)


def git_info_exclude(root: str | Path) -> IgnoreFile | None:
    """The repository-local ``.git/info/exclude`` of a root (also for worktrees whose .git is a file).

    Read only when its real path is inside the root's ``.git`` folder or, for a ``.git`` file (a
    worktree, a submodule), inside the git folder that file names, which must look like one (``HEAD``,
    ``objects/``): a symlinked ``.git`` or ``info``, or a ``.git`` file naming any other folder, is not
    followed.
    """
    root_real = os.path.realpath(root)
    git = os.path.join(root_real, ".git")
    try:
        info = os.lstat(git)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        common = git
    elif stat.S_ISREG(info.st_mode):
        first = _small_text(git).partition("\n")[0].strip()
        if not first.startswith("gitdir:"):
            return None
        gitdir = os.path.join(root_real, first[len("gitdir:") :].strip())
        pointer = _small_text(os.path.join(gitdir, "commondir")).strip()
        common = os.path.realpath(os.path.join(gitdir, pointer) if pointer else gitdir)
        if not (os.path.isfile(os.path.join(common, "HEAD")) and os.path.isdir(os.path.join(common, "objects"))):
            return None
    else:
        return None  # a symlinked .git is not followed
    exclude = os.path.join(common, "info", "exclude")
    if not os.path.lexists(exclude):
        return None
    real = os.path.realpath(exclude)
    if not _inside(real, common):
        _warn_once(f"{show_name(exclude)} is a symlink that leads out of {show_name(common)}; not read")
        return None
    return load_ignore_file(real, "", ".git/info/exclude", within=common)


def _small_text(path: str) -> str:
    """The start of a short regular file ("" when absent, not a regular file, or unreadable)."""
    try:
        fd = os.open(path, _READ_FLAGS | _NOFOLLOW)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, MAX_GITFILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def decide(layers: Sequence[IgnoreFile], rel_path: str, is_dir: bool) -> bool | None:
    """Decision of the deepest ignore file with a matching line (None if no line matches)."""
    for layer in reversed(layers):
        verdict = layer.decide(rel_path, is_dir)
        if verdict is not None:
            return verdict
    return None


def deciding_layer(layers: Sequence[IgnoreFile], rel_path: str, is_dir: bool) -> IgnoreFile | None:
    """The ignore file whose line decides this path (the deepest with a matching line), or None."""
    for layer in reversed(layers):
        if layer.decide_run(rel_path, is_dir) is not None:
            return layer
    return None


def opens(layers: Sequence[IgnoreFile], rel_dir: str) -> bool:
    """Whether any force-include line could reach into this (excluded) folder."""
    return any(layer.opens(rel_dir) for layer in layers)
