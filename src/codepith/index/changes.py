"""Which parts of the tree a watcher's change set asks to look at again, instead of walking it all.

Each changed path becomes a region (the file there, or a folder and everything below it) that is
judged afresh with the walk's own rules (``files.walk.walk_region``); the index then replaces what it
held inside those regions. Anything a region cannot decide alone sends the caller to a full walk:
an ignore file or a virtualenv marker changed (its rules reach other paths), a symlink at either end,
or more regions than a walk would cost.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codepith.files import ignore
from codepith.files.build_output import BUILD_NAMES, MANIFEST_NAMES, MARKER_NAMES
from codepith.files.source import SourceFile
from codepith.files.walk import holds, walk_region
from codepith.index.repo import RepoData

RULE_FILES = frozenset({ignore.GITIGNORE, ignore.CODEPITHIGNORE, "pyvenv.cfg"})  # change what others mean
GIT_EXCLUDE = ".git/info/exclude"
MAX_REGIONS = 256  # beyond this many changed paths (a branch switch), one walk is cheaper
MAX_SCANS = 32  # regions that need a pass over every record (folders, unknown deletions)


@dataclass(frozen=True)
class Delta:
    """The regions to redo: what they hold on disk now, and what the index held in them before."""

    regions: tuple[str, ...]
    files: list[SourceFile]  # files to index inside the regions, as a walk would list them
    skipped: dict[str, str]  # skip entries inside the regions now (rel -> reason)
    old_files: list[str]  # records the index holds inside the regions
    old_skipped: dict[str, str]  # skip entries held inside the regions
    pruned: set[str]  # folders inside the regions that a walk does not enter now
    moved: bool  # something was added, removed or renamed: the folders' recorded mtimes are stale
    watch: tuple[str, ...] = ()  # the walk's watch list inside the regions, as they are now


def _outermost(rels: Iterable[str], pruned: set[str]) -> list[str]:
    """Changed paths that matter: not inside a folder the walk does not enter (.git/, node_modules/,
    ignored ones: a change there costs nothing), nor inside another changed path (a new folder covers
    its files)."""
    wanted = {r.strip("/") for r in rels if r.strip("/")}
    out = []
    for rel in sorted(wanted):
        if rel == GIT_EXCLUDE:
            out.append(rel)
            continue
        parts = rel.split("/")
        above = ["/".join(parts[:i]) for i in range(1, len(parts))]
        if not any(a in wanted or a in pruned for a in above):
            out.append(rel)
    return out


def _judged_at(data: RepoData, rel: str) -> str | None:
    """Where a change must be judged: the path itself, or the folder holding it when the path decides
    whether that folder (or one beside it) is build output; None for the root (a walk)."""
    parts = rel.strip("/").split("/")
    name, parent = parts[-1], (parts[-2] if len(parts) > 1 else "")
    if name in MARKER_NAMES or parent in BUILD_NAMES:  # a marker inside, or setuptools' lib/ in build/
        return "/".join(parts[:-1]) or None
    if name in MANIFEST_NAMES:  # decides the folders beside it, but only by being there or not
        assert data.skipped_paths is not None
        was = rel in data.files or rel in data.skipped_paths
        if was != os.path.lexists(os.path.join(data.root, rel)):
            return "/".join(parts[:-1]) or None
    return rel


def _top_changes(data: RepoData) -> list[str] | None:
    """The names at the top of the tree that came or went since the index last looked (the root
    folder's stamp moved): a listing of the root says which to judge, instead of a walk of the tree."""
    assert data.skipped_paths is not None
    try:
        now = set(os.listdir(data.root))
    except OSError:
        return None
    known = {rel.split("/", 1)[0] for rel in (*data.files, *data.skipped_paths, *data.pruned)}
    top = data.root.rstrip(os.sep) + os.sep
    known |= {path[len(top) :].split(os.sep, 1)[0] for path, *_ in data.watch if path.startswith(top)}
    known.discard("")
    return sorted(now ^ known)


def plan(data: RepoData, changed: Iterable[str], max_file_bytes: int | None) -> Delta | None:
    """The delta for ``changed`` (root-relative, '/'-separated paths; "" for the root folder itself),
    or None when only a walk can tell."""
    if data.skipped_paths is None:
        return None
    changed = list(changed)
    relisted: tuple[str, ...] = ()
    if any(not r.strip("/") for r in changed):
        top = _top_changes(data)
        if top is None:
            return None
        changed += top
        relisted = tuple(p for p, *_ in data.watch if p.rstrip(os.sep) == data.root.rstrip(os.sep)) or (data.root,)
    where = [_judged_at(data, r) for r in changed if r.strip("/")]
    if None in where:
        return None
    rels = _outermost([w for w in where if w is not None], data.pruned)
    if not rels:
        return Delta((), [], {}, [], {}, set(), False, relisted)
    if len(rels) > MAX_REGIONS:
        return None
    regions: list[str] = []
    files: list[SourceFile] = []
    skipped: dict[str, str] = {}
    old_files: list[str] = []
    old_skipped: dict[str, str] = {}
    pruned: set[str] = set()
    watch: list[str] = []
    moved = False
    scans = 0
    for rel in rels:
        if rel.rsplit("/", 1)[-1] in RULE_FILES or rel == GIT_EXCLUDE:
            return None
        if any(holds(rel, end) or holds(end, rel) for end in data.linked):
            return None
        region = walk_region(Path(data.root), rel, data.content, max_file_bytes)
        if region is None:
            return None
        regions.append(rel)
        watch.extend(region.watch)
        files.extend(region.files)
        skipped.update(region.skipped)
        pruned |= region.pruned
        known_file = rel in data.files
        now_file = [f.rel_path for f in region.files] == [rel] or list(region.skipped) == [rel]
        if known_file and now_file:
            old_files.append(rel)  # the common case: a file edited in place
            continue
        if rel in data.skipped_paths and now_file:
            old_skipped[rel] = data.skipped_paths[rel]
            continue
        moved = True
        if rel in data.files:
            old_files.append(rel)
        for key in (rel, rel + "/"):
            if key in data.skipped_paths:
                old_skipped[key] = data.skipped_paths[key]
        # Records and skip entries below it: everything there is redone. One prefix pass (6 ms for
        # the kernel's 60k records); a set of every record's folders cost 0.22 s to build, which a
        # watched save through a temporary file paid on its first refresh.
        prefix = rel + "/"
        below = [k for k in data.files if k.startswith(prefix)]
        skipped_below = {k: v for k, v in data.skipped_paths.items() if k.startswith(prefix)}
        if below or skipped_below:
            scans += 1
            if scans > MAX_SCANS:
                return None
            old_files.extend(below)
            old_skipped.update(skipped_below)
    return Delta(tuple(regions), files, skipped, old_files, old_skipped, pruned, moved, (*relisted, *watch))


def settle(data: RepoData, delta: Delta, racy_after: int) -> None:
    """Bring the skip report in line with the regions, and drop folder stamps a move made stale."""
    assert data.skipped_paths is not None
    for rel, reason in delta.old_skipped.items():
        if delta.skipped.get(rel) != reason:
            data.skipped_paths.pop(rel, None)
            data.walk_skipped.remove(reason, rel)
    for rel, reason in delta.skipped.items():
        if delta.old_skipped.get(rel) != reason:
            data.skipped_paths[rel] = reason
            data.walk_skipped.add(reason, rel)
    if delta.moved:
        data.pruned = {p for p in data.pruned if not any(holds(r, p) for r in delta.regions)} | delta.pruned
    data.watch = _restamped(data, delta, racy_after)


def _restamped(data: RepoData, delta: Delta, racy_after: int) -> list[tuple[str, int, int]]:
    """The stat shortcut's watch list with the regions' part replaced by what their walks listed now,
    so a folder that gained or lost an entry costs a walk of that folder, not of the tree. A stamp too
    recent to trust is kept as -1: the next check looks at that region again (cheaply) until it ages.
    An empty list stays empty (the next check walks): a region's stamps never stand for the whole tree."""
    if not data.watch:
        return []
    tops = [os.path.join(data.root, *r.split("/")) for r in delta.regions]

    def inside(path: str) -> bool:
        return any(path == t or path.startswith(t + os.sep) for t in tops)

    again = set(delta.watch)  # also the root folder when it was listed: its stamp is renewed, not kept
    kept = [entry for entry in data.watch if not inside(entry[0]) and entry[0] not in again]
    for path in dict.fromkeys(delta.watch):
        try:
            info = os.stat(path)
        except OSError:
            return []  # moved again meanwhile: the next check walks
        mtime = info.st_mtime_ns
        kept.append((path, mtime if mtime < racy_after else -1, info.st_ctime_ns))
    return kept
