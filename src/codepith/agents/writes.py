"""Writing a person's config files safely: a backup copy first, then an atomic replace.

A crash or a full disk mid-write must never leave ``~/.claude.json`` half written, so the new bytes go
to a temporary file in the same folder and replace the old one in one rename. A symlinked config (a
dotfiles repository) is written through the link, and the file keeps its permission bits.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from pathlib import Path


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def backup(data: bytes, path: Path, backups: Path) -> Path:
    """Keep a copy of ``data`` (the bytes ``path`` held) in ``backups``; returns the copy's path."""
    backups.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(path).strip("/\\"))[-120:]
    digest = hashlib.sha256(data).hexdigest()[:10]
    dest = backups / f"{stamp}-{digest}-{name}"
    if not dest.exists():  # private whatever the original's mode: ~/.claude.json can hold account details
        write_atomic(dest, data, mode=0o600)
    return dest


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename; the file keeps its mode (``mode`` for a new file)."""
    path = _real(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".codepith-tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove(path: Path) -> None:
    _real(path).unlink(missing_ok=True)


def missing_dirs(folder: Path) -> list[Path]:
    """The folders (outermost first) that writing into ``folder`` would create."""
    out: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out[::-1]


def remove_empty_dirs(folders: list[Path]) -> None:
    """Remove ``folders`` (innermost first) where they are empty; a folder with anything in it stays."""
    for folder in sorted(set(folders), key=lambda f: len(f.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass
