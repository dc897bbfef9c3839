"""The one confinement rule: a request may reach only the folders its operator chose.

An agent talks to the server, and an agent can be steered by what it reads (a hostile README asking it
to ``read_snippet(path="etc/shadow", repo="/")``). So every folder a request names is checked here
before anything is indexed, searched or read: the MCP server's PATH(s), the folders given with
``--allow DIR`` and the clones the server itself makes of git URLs (those never reach this check:
their folder is chosen by the server, not by the request). Everything is compared by realpath, so
``..``, ``~`` and symlinks that lead out are refused like the folder they lead to.

Every tool that touches the file system goes through ``Roots.check`` (via ``service/repos.py``'s
resolution), so a new tool (run_tests, outline) gets the same rule by calling it too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codepith.errors import PathError
from codepith.files.names import show_name


class OutsideRootsError(PathError):
    """A request named a folder or file outside the operator's chosen roots."""


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


@dataclass(frozen=True)
class Roots:
    """The folders (realpaths) requests may reach: a folder is allowed when it is one of them or inside one."""

    allowed: tuple[Path, ...]

    @classmethod
    def of(cls, folders: Iterable[Path | str]) -> Roots:
        """Roots from the operator's folders (resolved now, so a later symlink swap changes nothing)."""
        return cls(tuple(dict.fromkeys(_real(f) for f in folders)))

    @classmethod
    def for_server(cls, paths: Iterable[Path], allow: Iterable[Path], cwd: Path, named: bool) -> Roots:
        """A server's roots: its PATH folders and ``--allow`` folders; with no PATH named at all, its
        working folder, unless that is ``/`` or the home folder (where a client may start a server
        without thinking): those are never implied, only allowed by naming them."""
        chosen = list(paths)
        if not named:
            real = _real(cwd)
            if real not in (Path("/"), _real("~")):
                chosen.append(real)
        return cls.of([*chosen, *allow])

    def contains(self, path: Path | str) -> bool:
        """Whether ``path`` (resolved with realpath) is an allowed root or lies inside one."""
        real = _real(path)
        return any(real == root or root in real.parents for root in self.allowed)

    def check(self, path: Path | str) -> Path:
        """The realpath of ``path`` when it is inside an allowed root; else OutsideRootsError, one line.

        Use this for every folder or file a request names, before touching it: ``..`` segments, ``~``
        and symlinks are resolved first, so a link that leads out of a root is refused.
        """
        real = _real(path)
        if any(real == root or root in real.parents for root in self.allowed):
            return real
        shown = ", ".join(str(r) for r in self.allowed) or "none"
        name = show_name(os.fspath(path))
        if os.path.abspath(os.fspath(path)) != str(real):  # a link (or ..) that leads elsewhere: say where
            name += f" (it leads to {show_name(str(real))})"
        raise OutsideRootsError(
            f"refused: {name} is outside the folders this server may read ({shown}); "
            "the operator can add it with --allow DIR"
        )
