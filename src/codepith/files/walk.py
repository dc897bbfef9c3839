"""Find the files to index under a root: stat only, ignore rules applied, every skip accounted for.

The one exception to "stat only": an extensionless file gets its first 128 bytes read for a ``#!`` line,
so scripts in bin/ and libexec/ are indexed under their language; only a regular file is ever opened (a
FIFO would block the walk), which the listing's file type tells without a syscall.

Folders that are excluded (always-skipped names, virtualenvs, gitignored, codepithignored) are pruned
before they are listed, unless a ``.codepithignore`` force-include line could reach inside; such a folder
is counted once in the skip report (as ``"node_modules/"``), not once per file inside it.

Symlinks: links that leave the root are not followed; links inside it are followed after the real tree
has been walked, so a real path always wins over a link to it, and each real folder is walked once
(which also breaks loops).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CodepithError, PathError, shown, whole_number
from . import ignore
from .build_output import BUILD_NAMES, build_output_reason, marker_tool
from .ignore import IgnoreFile
from .secrets import REASON as SECRET
from .secrets import secret_name
from .source import IgnoreHit, SkipReport, SourceFile, WalkResult
from .types import check_content, classify, shebang_language

DEFAULT_MAX_FILE_BYTES = 1_000_000
MAX_FILE_BYTES_ENV = "CODEPITH_MAX_FILE_BYTES"
FORCED_FALLBACK = ("text", "docs")  # a force-included file of unknown type is indexed as plain text
MAX_EXPLAINED = 20_000  # ignored paths kept to name the exact rule that hid each (a folder counts once)


def max_file_bytes_limit(max_file_bytes: int | None = None) -> int:
    """The size limit: the argument, else ``$CODEPITH_MAX_FILE_BYTES``, else 1 MB."""
    if max_file_bytes is not None:
        return whole_number("max_file_bytes", max_file_bytes, 1)
    raw = os.environ.get(MAX_FILE_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_FILE_BYTES
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise CodepithError(f"{MAX_FILE_BYTES_ENV} must be a whole number of bytes, got {shown(raw)}") from None
    if value <= 0:
        raise CodepithError(f"{MAX_FILE_BYTES_ENV} must be a positive number of bytes, got {shown(raw)}")
    return value


@dataclass(frozen=True)
class _Dir:
    """A folder waiting to be listed, with the ignore files that apply to it."""

    path: str  # absolute, symlinks not resolved
    real: str  # the same folder with symlinks resolved (identifies it for loop checks)
    rel: str  # "" for the root, else "a/b/"
    git: tuple[IgnoreFile, ...]
    cpi: tuple[IgnoreFile, ...]
    excluded: bool  # inside an excluded folder: only force-included paths are kept


@dataclass(frozen=True)
class _Link:
    """A symlink inside the root, followed once the real tree is done."""

    path: str
    real: str
    rel: str
    parent: _Dir
    is_dir: bool
    excluded: bool
    found: tuple[str, str] | None  # (language, kind) of a file link


@dataclass
class _Hidden:
    """What one run of ignore lines hid during a walk."""

    layer: IgnoreFile
    run: int
    count: int = 0
    paths: list[tuple[str, bool]] = field(default_factory=list)  # (rel, is_dir), up to MAX_EXPLAINED in all


_SNIFF_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
NOT_REGULAR = "not-a-regular-file"


def _sniff_script(path: str) -> tuple[str, str] | None:
    """Classify an extensionless file by its ``#!`` line: the one read a walk makes (a few bytes).

    Callers pass only regular files (a FIFO would block the open forever); O_NONBLOCK guards against
    one swapped in since the folder was listed.
    """
    try:
        fd = os.open(path, _SNIFF_FLAGS)
        try:
            head = os.read(fd, 128)
        finally:
            os.close(fd)
    except OSError:
        return None
    language = shebang_language(head.split(b"\n", 1)[0].decode("utf-8", "replace"))
    return (language, "code") if language else None


def _child_maker(folder: Path) -> Callable[[str], Path]:
    """Build child paths without re-parsing the folder part (a third of the walk's time otherwise).

    ``_make_child_relpath`` is pathlib's own shortcut for a single already-clean name (CPython 3.10-3.12);
    where it is missing, plain joining is used.
    """
    fast = getattr(folder, "_make_child_relpath", None)
    if callable(fast):
        return fast
    return folder.joinpath


def _readable_by_mode() -> Callable[[os.stat_result], bool]:
    """A stat-only readability check (no extra syscall per file); root reads everything."""
    if not hasattr(os, "geteuid"):
        return lambda info: True
    euid = os.geteuid()
    if euid == 0:
        return lambda info: True
    groups = {os.getegid(), *os.getgroups()}

    def readable(info: os.stat_result) -> bool:
        if info.st_uid == euid:
            return bool(info.st_mode & stat.S_IRUSR)
        if info.st_gid in groups:
            return bool(info.st_mode & stat.S_IRGRP)
        return bool(info.st_mode & stat.S_IROTH)

    return readable


class _Walker:
    def __init__(self, root: str, root_real: str, content: str, limit: int) -> None:
        self.root = root
        self.root_real = root_real
        self.content = content
        self.limit = limit
        self.files: list[SourceFile] = []
        self.report = SkipReport()
        self.visited: set[str] = {root_real}  # real paths of folders already walked
        self.indexed_inodes: set[tuple[int, int]] = set()
        self.links: list[_Link] = []
        self.readable = _readable_by_mode()
        self.every_kind = content == "all"
        # Paths whose stat moves when the walk's answer could change: every folder listed (entries
        # added, removed, renamed) or that could not be, every ignore file read, and files skipped for
        # size or access (a chmod moves no mtime but the ctime, which the stat check compares too).
        self.watch: list[str] = []
        self.hidden: dict[tuple[int, int], _Hidden] = {}  # by (id of the ignore file, run of lines)
        self.hidden_paths = 0
        self.skipped_paths: dict[str, str] = {}  # rel -> reason, for updating the report path by path
        self.linked: list[str] = []  # root-relative paths of symlinks met, and of the targets they reach
        self.pruned: list[str] = []  # folders not entered (ignored, always skipped, virtualenvs, build output)

    def run(self) -> WalkResult:
        exclude = ignore.git_info_exclude(self.root)
        info_exclude = os.path.join(self.root, ".git", "info", "exclude")
        if os.path.exists(info_exclude):
            self.watch.append(info_exclude)
        elif os.path.isdir(os.path.dirname(info_exclude)):
            self.watch.append(os.path.dirname(info_exclude))  # an exclude file created later moves it
        stack = [_Dir(self.root, self.root_real, "", (exclude,) if exclude else (), (), False)]
        while stack or self.links:
            while stack:
                self._list(stack.pop(), stack)
            links, self.links = sorted(self.links, key=lambda link: link.rel), []
            for link in links:
                self._follow(link, stack)
        self.files.sort(key=lambda f: f.rel_path)
        return WalkResult(
            files=self.files,
            skipped=self.report,
            watch=tuple(self.watch),
            hidden=self._hits(),
            skipped_paths=dict(self.skipped_paths),
            linked=tuple(self.linked),
            pruned=set(self.pruned),
        )

    def _hide(self, layers: tuple[IgnoreFile, ...], rel: str, is_dir: bool) -> None:
        """Count a path hidden by an ignore rule against the rule (kept to explain an empty index)."""
        layer = ignore.deciding_layer(layers, rel, is_dir)
        run = layer.decide_run(rel, is_dir) if layer is not None else None
        if layer is None or run is None:
            return
        entry = self.hidden.setdefault((id(layer), run), _Hidden(layer, run))
        entry.count += 1
        if self.hidden_paths < MAX_EXPLAINED:
            entry.paths.append((rel, is_dir))
            self.hidden_paths += 1

    def _hits(self) -> tuple[IgnoreHit, ...]:
        """What each ignore line hid. Exact (each hidden path matched against the lines of its run one
        by one) when ignore rules hid a lot compared with what was found, the only case a report shows;
        otherwise each run's count goes to the line of its first path, which costs next to nothing."""
        total = sum(e.count for e in self.hidden.values())
        exact = total * 2 > len(self.files) and total <= MAX_EXPLAINED
        per_line: dict[tuple[str, int], tuple[str, list[int], list[str]]] = {}
        for entry in self.hidden.values():
            lines = entry.layer.single_lines(entry.run)
            for rel, is_dir in entry.paths if exact else entry.paths[:1]:
                found = next(((n, t) for n, t, one in lines if one.decide(rel, is_dir) is not None), None)
                if found is None:
                    continue
                rule, count, examples = per_line.setdefault((entry.layer.source, found[0]), (found[1], [0], []))
                count[0] += 1 if exact else entry.count
                if len(examples) < 3:
                    examples.append(rel + ("/" if is_dir else ""))
        hits = [
            IgnoreHit(source, line, rule, count[0], tuple(examples))
            for (source, line), (rule, count, examples) in per_line.items()
        ]
        return tuple(sorted(hits, key=lambda h: (-h.count, h.source, h.line)))

    def _list(self, folder: _Dir, stack: list[_Dir]) -> None:
        try:
            with os.scandir(folder.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            self._note("unreadable", folder.rel or "./")
            self.watch.append(folder.path)  # a chmod that lets it be listed moves its stamp (ctime)
            return
        self.watch.append(folder.path)
        names = {entry.name for entry in entries}
        opened = self._open(folder, names)
        if opened is None:
            return
        here = folder = opened
        real_prefix = folder.real.rstrip(os.sep) + os.sep
        child = _child_maker(Path(folder.path))
        subdirs: list[_Dir] = []
        for entry in entries:
            rel = folder.rel + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
                regular = is_link or is_dir or entry.is_file(follow_symlinks=False)  # d_type: no syscall
            except OSError:
                self._skip(here, "unreadable", rel)
                continue
            if is_link:
                self._link(here, entry.path, rel, entry.name)
            elif is_dir:
                sub = self._enter(here, entry.path, real_prefix + entry.name, rel, entry.name, names)
                if sub is None:
                    continue
                if sub.real in self.visited:  # already reached through a symlink
                    self._skip(here, "symlink-duplicate", rel + "/")
                    continue
                self.visited.add(sub.real)
                subdirs.append(sub)
            else:
                include, reason, found = self._judge_file(here, rel, entry.name, regular)
                if not include:
                    self._skip(here, reason, rel)
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    self._skip(here, "unreadable", rel)
                    continue
                self._add_file(child(entry.name), rel, info, found)
        stack.extend(reversed(subdirs))

    def _open(self, folder: _Dir, names: set[str]) -> _Dir | None:
        """The folder with its own ignore files layered on (``names``: its entries); None when it turns
        out to be a virtualenv or build output that nothing force-includes."""
        if "pyvenv.cfg" in names and folder.rel and not folder.excluded:  # a virtualenv, whatever its name
            self._note(ignore.REASON_ALWAYS_SKIPPED, folder.rel)
            if not ignore.opens(folder.cpi, folder.rel):
                self.pruned.append(folder.rel.rstrip("/"))
                return None
            folder = _Dir(folder.path, folder.real, folder.rel, folder.git, folder.cpi, True)
        tool = marker_tool(names) if folder.rel and not folder.excluded else None
        if tool is not None and ignore.decide(folder.cpi, folder.rel.rstrip("/"), True) is not False:
            self._note(f"build output ({tool})", folder.rel)  # CMakeCache.txt, CACHEDIR.TAG, ...
            if not ignore.opens(folder.cpi, folder.rel):
                self.pruned.append(folder.rel.rstrip("/"))
                return None
            folder = _Dir(folder.path, folder.real, folder.rel, folder.git, folder.cpi, True)
        git, cpi = folder.git, folder.cpi
        if ignore.GITIGNORE in names:
            self.watch.append(os.path.join(folder.path, ignore.GITIGNORE))
            layer = ignore.load_ignore_file(
                os.path.join(folder.path, ignore.GITIGNORE), folder.rel, within=self.root_real
            )
            git = (*git, layer) if layer else git
        if ignore.CODEPITHIGNORE in names:
            self.watch.append(os.path.join(folder.path, ignore.CODEPITHIGNORE))
            layer = ignore.load_ignore_file(
                os.path.join(folder.path, ignore.CODEPITHIGNORE), folder.rel, within=self.root_real
            )
            cpi = (*cpi, layer) if layer else cpi
        return _Dir(folder.path, folder.real, folder.rel, git, cpi, folder.excluded)

    def _skip(self, folder: _Dir, reason: str | None, rel: str) -> None:
        """Record a skip, except inside excluded folders (already counted once as a folder)."""
        if reason is not None and not folder.excluded:
            self._note(reason, rel)

    def _note(self, reason: str, rel: str) -> None:
        self.report.add(reason, rel)
        self.skipped_paths[rel] = reason

    def _enter(
        self, parent: _Dir, path: str, real: str, rel: str, name: str, beside: frozenset[str] | set[str] = frozenset()
    ) -> _Dir | None:
        """The folder to walk next (maybe in excluded mode), or None to prune it.

        ``beside`` holds the names next to it, which tell a Cargo ``target/`` from the kernel's.
        """
        if name in ignore.NEVER_OPENED_DIRS:
            if not parent.excluded:
                self._note(ignore.REASON_ALWAYS_SKIPPED, rel + "/")
            self.pruned.append(rel)
            return None
        verdict = ignore.decide(parent.cpi, rel, True)
        if verdict is False:  # force-included by .codepithignore, whatever the other rules say
            return _Dir(path, real, rel + "/", parent.git, parent.cpi, False)
        if not parent.excluded:
            reason = ignore.dir_skip_reason(name)
            if reason is None and (verdict is True or ignore.decide(parent.git, rel, True)):
                reason = ignore.REASON_IGNORED
                self._hide(parent.cpi if verdict is True else parent.git, rel, True)
            if reason is None and name in BUILD_NAMES:
                reason = self._build_output(path, name, beside)
            if reason is None:
                return _Dir(path, real, rel + "/", parent.git, parent.cpi, False)
            self._note(reason, rel + "/")
        if ignore.opens(parent.cpi, rel):
            return _Dir(path, real, rel + "/", parent.git, parent.cpi, True)
        self.pruned.append(rel)
        return None

    def _build_output(self, path: str, name: str, beside: frozenset[str] | set[str]) -> str | None:
        """Why a folder named like build output is build output (markers inside, manifests beside)."""
        try:
            inside = set(os.listdir(path))
        except OSError:
            return None
        self.watch.append(path)  # a marker added or removed later changes the answer
        return build_output_reason(name, inside, beside)

    def _judge_file(
        self, folder: _Dir, rel: str, name: str, regular: bool = True
    ) -> tuple[bool, str | None, tuple[str, str] | None]:
        """(include, skip reason, (language, kind)) by names and ignore rules; a .codepithignore '!' wins.

        ``regular``: False for a FIFO, socket or device, which is never opened to sniff a ``#!`` line.
        """
        found = classify(rel)
        verdict = ignore.decide(folder.cpi, rel, False)
        if verdict is False:
            if secret_name(name):  # no '!' line brings a secret back
                return False, SECRET, found
            if found is None and "." not in name:
                if not regular:
                    return False, NOT_REGULAR, found
                found = _sniff_script(os.path.join(folder.path, name))
            return True, None, found or FORCED_FALLBACK
        if folder.excluded:
            return False, None, found
        if verdict is True or ignore.decide(folder.git, rel, False):
            self._hide(folder.cpi if verdict is True else folder.git, rel, False)
            return False, ignore.REASON_IGNORED, found
        reason = ignore.file_skip_reason(name)
        if reason is not None:
            return False, reason, found
        if found is None and "." not in name:
            if not regular:
                return False, NOT_REGULAR, found
            found = _sniff_script(os.path.join(folder.path, name))
        if found is None or not (self.every_kind or found[1] == self.content):
            return False, "unsupported-type", found
        return True, None, found

    def _add_file(self, path: Path, rel: str, info: os.stat_result, found: tuple[str, str] | None) -> None:
        if not stat.S_ISREG(info.st_mode):
            self._note(NOT_REGULAR, rel)
            return
        if info.st_size > self.limit:
            self._note("too-large", rel)
            self.watch.append(str(path))
            return
        if info.st_size == 0:
            self._note("empty", rel)
            self.watch.append(str(path))
            return
        if not self.readable(info):
            self._note("unreadable", rel)
            self.watch.append(str(path))
            return
        language, kind = found or FORCED_FALLBACK
        self.indexed_inodes.add((info.st_dev, info.st_ino))
        self.files.append(
            SourceFile(path=path, rel_path=rel, language=language, kind=kind,
                       size=info.st_size, mtime_ns=info.st_mtime_ns)
        )  # fmt: skip

    def _inside_root(self, real: str) -> bool:
        return real == self.root_real or real.startswith(self.root_real.rstrip(os.sep) + os.sep)

    def _link(self, folder: _Dir, path: str, rel: str, name: str) -> None:
        """Judge a symlink now by its own name; follow it later if it stays inside the root."""
        self.linked.append(rel)  # a change at either end of a link changes what the walk sees through it
        aim = os.path.realpath(path)
        if self._inside_root(aim) and aim != self.root_real:
            self.linked.append(os.path.relpath(aim, self.root_real).replace(os.sep, "/"))
        try:
            target = os.stat(path)
        except FileNotFoundError:
            include, reason, _ = self._judge_file(folder, rel, name, regular=False)
            dangling = include or reason in ("unsupported-type", NOT_REGULAR)
            self._skip(folder, "broken-symlink" if dangling else reason, rel)
            return
        except OSError:  # ELOOP: a chain of links pointing at each other
            self._skip(folder, "symlink-loop", rel)
            return
        real = os.path.realpath(path)
        is_dir = stat.S_ISDIR(target.st_mode)
        if is_dir:
            sub = self._enter(folder, path, real, rel, name)
            if sub is None:
                return
            excluded, found = sub.excluded, None
        else:
            include, reason, found = self._judge_file(folder, rel, name, stat.S_ISREG(target.st_mode))
            if not include:
                self._skip(folder, reason, rel)
                return
            if secret_name(os.path.basename(real)):  # settings.py -> .env: the name read would refuse
                self._skip(folder, SECRET, rel)
                return
            excluded = False
        if not self._inside_root(real):
            self._skip(folder, "symlink-outside-root", rel + ("/" if is_dir else ""))
            return
        self.links.append(_Link(path, real, rel, folder, is_dir, excluded, found))

    def _follow(self, link: _Link, stack: list[_Dir]) -> None:
        parent = link.parent
        if not link.is_dir:
            try:
                info = os.stat(link.path)
            except OSError:  # changed since it was listed
                self._skip(parent, "broken-symlink", link.rel)
                return
            if (info.st_dev, info.st_ino) in self.indexed_inodes:
                self._skip(parent, "symlink-duplicate", link.rel)
            else:
                self._add_file(Path(link.path), link.rel, info, link.found)
            return
        if link.real in self.visited:
            here = parent.real
            loop = here == link.real or here.startswith(link.real.rstrip(os.sep) + os.sep)
            self._skip(parent, "symlink-loop" if loop else "symlink-duplicate", link.rel + "/")
            return
        self.visited.add(link.real)
        stack.append(_Dir(link.path, link.real, link.rel + "/", parent.git, parent.cpi, link.excluded))


def walk(root: Path, content: str = "code", max_file_bytes: int | None = None) -> WalkResult:
    """List the files under ``root`` that belong to the ``content`` selection, sorted by rel_path."""
    check_content(content)
    limit = max_file_bytes_limit(max_file_bytes)
    root_str = os.path.abspath(os.fspath(root))
    try:
        info = os.stat(root_str)
    except FileNotFoundError:
        raise PathError(f"no such folder: {root}") from None
    except OSError as err:
        raise PathError(f"cannot open {root}: {err.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise PathError(f"not a folder: {root}")
    return _Walker(root_str, os.path.realpath(root_str), content, limit).run()


@dataclass(frozen=True)
class Region:
    """What a full walk would find today at one root-relative path: the file there, or a folder and
    everything under it (``files`` to index, ``skipped`` entries rel -> reason); both empty when the
    path is gone or ignored."""

    rel: str
    files: list[SourceFile]
    skipped: dict[str, str]
    pruned: set[str]  # folders inside the region that a walk does not enter
    watch: tuple[str, ...] = ()  # the walk's watch list inside the region (see ``_Walker.watch``)

    def holds(self, rel: str) -> bool:
        return holds(self.rel, rel)


def holds(region: str, rel: str) -> bool:
    """True when ``rel`` (a file, or a folder entry ending in '/') is ``region`` or lies under it."""
    return rel == region or rel.startswith(region + "/")


def walk_region(root: Path, rel: str, content: str = "code", max_file_bytes: int | None = None) -> Region | None:
    """The part of ``walk(root)`` at ``rel``, found by descending only the folders on its way (reading
    their ignore files as the walk does), so a watcher's change costs its depth, not the tree size.

    None when the path cannot be judged alone: a symlink on the way or inside (links are followed
    after the whole real tree, so only a full walk decides what they show).
    """
    check_content(content)
    limit = max_file_bytes_limit(max_file_bytes)
    root_str = os.path.abspath(os.fspath(root))
    w = _Walker(root_str, os.path.realpath(root_str), content, limit)
    exclude = ignore.git_info_exclude(root_str)
    folder: _Dir | None = _Dir(root_str, w.root_real, "", (exclude,) if exclude else (), (), False)
    parts = rel.split("/")
    for depth, name in enumerate(parts):
        assert folder is not None
        try:
            names = set(os.listdir(folder.path))  # markers inside and manifests beside decide too
        except OSError:
            return None
        folder = w._open(folder, names)
        if folder is None:  # inside a virtualenv nothing force-includes
            break
        path = os.path.join(folder.path, name)
        sub_rel = folder.rel + name
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            break  # gone
        except OSError:
            return None
        last = depth == len(parts) - 1
        if stat.S_ISLNK(info.st_mode):
            return None
        if stat.S_ISDIR(info.st_mode):
            real = folder.real.rstrip(os.sep) + os.sep + name
            folder = w._enter(folder, path, real, sub_rel, name, names)
            if folder is None:  # pruned: ignored or always skipped
                break
            if last:
                w.visited.add(folder.real)
                stack = [folder]
                while stack:
                    w._list(stack.pop(), stack)
                if w.links or w.linked:
                    return None
            continue
        if last:
            include, reason, found = w._judge_file(folder, sub_rel, name, stat.S_ISREG(info.st_mode))
            if include:
                w._add_file(Path(path), sub_rel, info, found)
            else:
                w._skip(folder, reason, sub_rel)
        break  # a file where the path needs a folder: nothing below it
    w.files.sort(key=lambda f: f.rel_path)
    here = os.path.join(root_str, *parts)
    return Region(
        rel,
        [f for f in w.files if holds(rel, f.rel_path)],
        {k: v for k, v in w.skipped_paths.items() if holds(rel, k)},
        {k for k in w.pruned if holds(rel, k)},
        tuple(p for p in w.watch if p == here or p.startswith(here + os.sep)),
    )
