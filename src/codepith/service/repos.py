"""Which repository a request names (local folders, lists of them, https git URLs) and warm indexes for it.

A server answers many calls about a few repositories, so indexes stay loaded in a small LRU and are
refreshed (not rebuilt) per call; each warm index watches its tree, so a refresh costs what changed.
Git URLs are shallow-cloned once into the cache folder and reused.
Heavy modules (the index, numpy, the model) are imported only when an index is first needed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from codepith.errors import CodepithError, PathError
from codepith.files.names import show_name
from codepith.service.confine import Roots

if TYPE_CHECKING:
    from codepith.api import Index
    from codepith.model.loader import StaticModel

ALLOW_FILE_URLS_ENV = "CODEPITH_ALLOW_FILE_URLS"  # test-only: accept file:// URLs (local bare repositories)
CLONE_TIMEOUT_ENV = "CODEPITH_CLONE_TIMEOUT"
DEFAULT_CLONE_TIMEOUT = 180.0  # seconds for the whole clone, all git commands together
DEFAULT_CAPACITY = 4  # warm indexes kept in memory
MARKER = "codepith-clone.json"  # written inside .git once a clone is complete

Progress = Callable[[int, int], None]  # (files done, files to do), as the index build reports it
Status = Callable[[str], None]  # a one-line note for a person ("cloning ...")

_REF_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,199}$")
_HEX_RE = re.compile(r"^[0-9a-fA-F]{7,40}$")
_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")  # git@host:owner/repo
_HOST_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$")


@dataclass(frozen=True)
class GitSource:
    """A remote repository to clone: an https URL (or file:// in tests) and an optional ref."""

    url: str
    ref: str | None = None

    @property
    def name(self) -> str:
        """The folder name (``https://host/x/y.git`` -> ``y``): the path prefix in a multi-repo corpus."""
        last = self.url.rstrip("/").rsplit("/", 1)[-1]
        if last.endswith(".git"):
            last = last[:-4]
        clean = re.sub(r"[^A-Za-z0-9._-]", "_", last).strip(".")
        return clean or "repo"

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.url}\n{self.ref or ''}".encode()).hexdigest()[:16]


def looks_like_url(text: str) -> bool:
    """True for anything that names a remote (scheme://, git@host:...): it must pass ``parse_git_url``."""
    return "://" in text or bool(_SCP_RE.match(text)) or text.lower().startswith(("https:", "http:", "file:"))


def _file_urls_allowed() -> bool:
    return os.environ.get(ALLOW_FILE_URLS_ENV, "") == "1"


def check_ref(ref: str) -> str:
    """A branch, tag or commit name that git cannot read as an option or a path trick."""
    if not _REF_RE.match(ref) or ".." in ref or "//" in ref or ref.endswith((".lock", "/", ".")) or "@{" in ref:
        raise CodepithError(f"not a valid git ref: {ref!r} (give a branch, tag or commit)")
    return ref


def _private_address(host: str) -> bool:
    """An IP literal that is not a public address (loopback, private, link-local such as the cloud
    metadata service at 169.254.169.254, reserved): an agent must not make the server fetch from the
    operator's own network."""
    try:
        return not ipaddress.ip_address(host).is_global
    except ValueError:
        return False


def _resolves_privately(host: str) -> bool:
    """Whether a host name leads to such an address (``localtest.me``, an internal DNS name)."""
    try:
        infos = socket.getaddrinfo(host, 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False  # unresolvable: git says so itself
    return any(_private_address(str(info[4][0])) for info in infos)


def parse_git_url(text: str, ref: str | None = None) -> GitSource:
    """Validate a repository URL: ``https://host/owner/repo(.git)`` with an optional ``@ref`` suffix.

    Only https is accepted (plus file:// when CODEPITH_ALLOW_FILE_URLS=1, for tests); ssh, git@,
    http, file and URLs that are really local paths are refused with one line saying so.
    """
    raw = text.strip()
    if _SCP_RE.match(raw):
        raise CodepithError(f"ssh git URLs are not accepted: {raw} (use the https:// URL)")
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if not _file_urls_allowed():
            raise CodepithError(f"file:// URLs are not accepted: {raw} (give the local folder path instead)")
        path = parts.path
        if parts.netloc not in ("", "localhost") or not path.startswith("/"):
            raise CodepithError(f"not a valid file:// URL: {raw}")
    elif scheme != "https":
        what = f"{scheme}://" if scheme else "this"
        raise CodepithError(f"{what} URLs are not accepted: {raw} (only https:// git URLs can be cloned)")
    else:
        if "\\" in raw or any(ord(c) < 33 for c in raw):
            raise CodepithError(f"not a valid https URL: {raw!r}")
        if parts.password is not None or parts.username is not None:
            raise CodepithError("URLs with credentials are not accepted; give a public https:// URL")
        host = parts.netloc
        name = host.split(":")[0]
        if not _HOST_RE.match(host) or "." not in name:
            raise CodepithError(f"not a repository URL: {raw} (a local path? give the folder itself)")
        if _private_address(name):
            raise CodepithError(f"refused: {name} is a local or private address; only public https:// URLs are cloned")
        path = parts.path
        if parts.query or parts.fragment:
            raise CodepithError(f"URLs with ?query or #fragment are not accepted: {raw}")
        if not path.strip("/") or path.startswith("//"):
            raise CodepithError(f"no repository in URL: {raw}")
    url_ref: str | None = None
    at = path.rfind("@")
    if at >= 0:
        path, url_ref = path[:at], path[at + 1 :]
        if not url_ref:
            raise CodepithError(f"empty ref after '@' in {raw}")
    segments = path.split("/")
    if any(seg in (".", "..") for seg in segments) or not path.rstrip("/"):
        raise CodepithError(f"not a repository URL: {raw}")
    if url_ref and ref and url_ref != ref:
        raise CodepithError(f"two different refs given: {url_ref!r} in the URL and ref={ref!r}")
    chosen = url_ref or ref or None
    base = f"{scheme}://{parts.netloc}{path.rstrip('/')}"
    return GitSource(base, check_ref(chosen) if chosen else None)


def clone_timeout() -> float:
    try:
        return max(1.0, float(os.environ.get(CLONE_TIMEOUT_ENV, DEFAULT_CLONE_TIMEOUT)))
    except ValueError:
        return DEFAULT_CLONE_TIMEOUT


def repos_root(cache: Path | None = None) -> Path:
    """Where clones live: ``<cache>/repos`` (the index cache's root unless given)."""
    if cache is not None:
        return cache / "repos"
    from codepith.store.layout import cache_root

    return cache_root() / "repos"


@dataclass(frozen=True)
class Clone:
    """A clone in the cache: what it is of (``?`` for one never completed) and what it takes."""

    url: str
    ref: str | None
    folder: Path  # the clone's own folder under repos/, removed whole
    bytes: int


def list_clones(cache: Path | None = None) -> list[Clone]:
    """Every clone under the cache's ``repos/`` (for ``codepith cache`` and ``clear all``)."""
    from codepith.store.layout import folder_bytes

    out: list[Clone] = []
    try:
        folders = sorted(p for p in repos_root(cache).iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return out
    for folder in folders:
        url, ref = "?", None
        for marker in folder.glob(f"*/.git/{MARKER}"):
            try:
                got = json.loads(marker.read_text(encoding="utf-8"))
                url, ref = str(got.get("url", "?")), got.get("ref")
            except (OSError, ValueError, AttributeError):
                pass
        out.append(Clone(url, ref if isinstance(ref, str) else None, folder, folder_bytes(folder)))
    return out


def remove_clone(clone: Clone) -> str | None:
    """Delete one clone: None when it is gone, else why (part of) it is still there."""
    from codepith.store.layout import remove_folder

    return remove_folder(clone.folder)


def clone_dir(src: GitSource, cache: Path | None = None) -> Path:
    """The folder a clone of ``src`` lives in; named after the repository so corpus prefixes read well."""
    return repos_root(cache) / src.key / src.name


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",  # never wait for a password on a terminal nobody watches
        GCM_INTERACTIVE="never",
        GIT_ALLOW_PROTOCOL="file" if _file_urls_allowed() else "https",
        GIT_LFS_SKIP_SMUDGE="1",
        LC_ALL="C",
    )
    return env


def _git(args: Sequence[str], deadline: float, what: str) -> None:
    left = deadline - time.monotonic()
    if left <= 0:
        raise CodepithError(f"{what}: timed out")
    try:
        proc = subprocess.run(
            ["git", "-c", "advice.detachedHead=false", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=left,
            env=_git_env(),
        )
    except subprocess.TimeoutExpired:
        raise CodepithError(f"{what}: timed out after {clone_timeout():.0f}s") from None
    except FileNotFoundError:
        raise CodepithError("git is not installed; it is needed to clone repository URLs") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        detail = lines[-1] if lines else f"git exited with {proc.returncode}"
        raise CodepithError(f"{what}: {detail}")


def _fetch_into(src: GitSource, dest: Path, deadline: float) -> None:
    what = f"could not clone {src.url}" + (f" at {src.ref}" if src.ref else "")
    if src.ref is None:
        _git(["clone", "--quiet", "--depth", "1", "--no-tags", "--", src.url, str(dest)], deadline, what)
        return
    try:  # branches and tags
        _git(
            ["clone", "--quiet", "--depth", "1", "--branch", src.ref, "--", src.url, str(dest)],
            deadline,
            what,
        )
        return
    except CodepithError:
        if not _HEX_RE.match(src.ref) or time.monotonic() >= deadline:
            raise
        shutil.rmtree(dest, ignore_errors=True)
    # a commit: fetch just it when the server allows, else a full clone and a checkout
    dest.mkdir(parents=True)
    _git(["init", "--quiet", str(dest)], deadline, what)
    try:
        _git(["-C", str(dest), "fetch", "--quiet", "--depth", "1", "--", src.url, src.ref], deadline, what)
        _git(["-C", str(dest), "checkout", "--quiet", "FETCH_HEAD"], deadline, what)
    except CodepithError:
        shutil.rmtree(dest, ignore_errors=True)
        _git(["clone", "--quiet", "--no-checkout", "--", src.url, str(dest)], deadline, what)
        _git(["-C", str(dest), "checkout", "--quiet", src.ref, "--"], deadline, what)


def is_cloned(src: GitSource, cache: Path | None = None) -> bool:
    return (clone_dir(src, cache) / ".git" / MARKER).is_file()


def ensure_clone(
    src: GitSource,
    *,
    cache: Path | None = None,
    timeout: float | None = None,
    status: Status | None = None,
) -> Path:
    """A local checkout of ``src``: reused when already cloned, else shallow-cloned (atomically) now.

    Safe with several processes: a file lock serialises clones of one source, and the clone is
    built in a temporary folder that is renamed into place only once complete.
    """
    import filelock

    dest = clone_dir(src, cache)
    if is_cloned(src, cache):
        return dest
    limit = timeout if timeout is not None else clone_timeout()
    deadline = time.monotonic() + limit
    dest.parent.mkdir(parents=True, exist_ok=True)
    from codepith.store.layout import tag_cache_folder

    tag_cache_folder(dest.parent.parent)  # repos/: skipped by a walk of a tree holding the cache
    try:
        with filelock.FileLock(str(dest.parent / ".lock"), timeout=limit):
            if is_cloned(src, cache):
                return dest
            host = urlsplit(src.url).hostname or ""
            if src.url.startswith("https://") and _resolves_privately(host):
                raise CodepithError(f"refused: {host} leads to a local or private address; only public hosts")
            if status is not None:
                status(f"cloning {src.url}" + (f" at {src.ref}" if src.ref else ""))
            if dest.exists():  # a clone interrupted before it was complete
                shutil.rmtree(dest, ignore_errors=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=dest.parent)) / "checkout"
            try:
                _fetch_into(src, tmp, deadline)
                marker = {"url": src.url, "ref": src.ref, "cloned_at": time.time()}
                (tmp / ".git" / MARKER).write_text(json.dumps(marker), encoding="utf-8")
                os.replace(tmp, dest)
            finally:
                shutil.rmtree(tmp.parent, ignore_errors=True)
    except filelock.Timeout:
        raise CodepithError(f"timed out waiting for another clone of {src.url}") from None
    except OSError as exc:
        raise CodepithError(f"could not clone {src.url}: {exc.strerror or exc}") from None
    return dest


def resolve_repo(
    repo: str | Sequence[str] | None,
    *,
    base: Path,
    ref: str | None = None,
    cache: Path | None = None,
    status: Status | None = None,
    clone: bool = True,
    roots: Roots | None = None,
) -> tuple[Path, ...]:
    """The folders a ``repo`` argument names: ``base`` when absent; a path (relative to ``base``), a
    list of paths searched as one corpus, or an https git URL (``@ref`` suffix or ``ref``) cloned once.

    With ``clone=False`` a URL must already be cloned (for calls that follow a search of it). With
    ``roots`` every local folder must lie inside them (``Roots.check``), checked before it is looked at;
    clones of URLs are the server's own folders and pass. This is also the function the CLI calls to
    accept URLs where it takes a folder (the CLI's user is the operator: no roots there).
    """
    if repo is None or (isinstance(repo, str) and not repo.strip()):
        if ref:
            raise CodepithError("ref is only meaningful with a repository URL")
        return (_local(str(base), base, roots),)
    items = [repo] if isinstance(repo, str) else list(repo)
    if not items:
        raise CodepithError("repo is an empty list; give a folder, a list of folders or an https:// URL")
    urls = [i for i in items if isinstance(i, str) and looks_like_url(i.strip())]
    if ref and not urls:
        raise CodepithError("ref is only meaningful with a repository URL")
    if ref and len(urls) > 1:
        raise CodepithError("ref is ambiguous with several URLs; put @ref on each URL instead")
    found: list[Path] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise CodepithError("each repo must be a non-empty string (a folder path or an https:// URL)")
        text = item.strip()
        if looks_like_url(text):
            src = parse_git_url(text, ref)
            if not clone and not is_cloned(src, cache):
                raise CodepithError(f"{src.url} is not cloned yet; search it first (search(repo=...))")
            found.append(ensure_clone(src, cache=cache, status=status))
        else:
            found.append(_local(text, base, roots))
    return tuple(dict.fromkeys(found))


def _local(text: str, base: Path, roots: Roots | None = None) -> Path:
    shown = show_name(text, limit=200)
    if "\x00" in text:
        raise PathError(f"not a folder path (it holds a NUL character): {shown}")
    # os.path's expanduser leaves ``~nobody`` as it is (Path's raises); it is then a name like any other
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = base / p
    try:
        if roots is not None:
            roots.check(p)  # before anything is looked at: not even existence leaks out
        if not p.exists():
            raise PathError(f"unknown repository: no such folder {shown}")
        if not p.is_dir():
            raise PathError(f"not a folder: {shown} (give the repository folder)")
        return p.resolve()
    except OSError as exc:  # a name too long, a folder that cannot be entered
        raise PathError(f"cannot open the folder {shown}: {exc.strerror or exc}") from None


@dataclass
class _Slot:
    lock: threading.Lock
    index: Index | None = None


class Repos:
    """Warm indexes for the last few repositories asked about (an LRU), one model shared by all.

    Thread-safe: calls about one repository run one at a time (an index is refreshed in place),
    calls about different repositories do not wait for each other.
    """

    def __init__(
        self,
        base: Path,
        *,
        default: str | Sequence[str] | None = None,
        content: str = "code",
        model: str | None = None,
        capacity: int = DEFAULT_CAPACITY,
        cache: Path | None = None,
        roots: Roots | None = None,
    ) -> None:
        self.base = base
        self.default = default
        self.roots = roots
        self.content = content
        self.model_name = model
        self.capacity = max(1, capacity)
        self.cache = cache
        self._slots: OrderedDict[tuple[tuple[Path, ...], str], _Slot] = OrderedDict()
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._model: StaticModel | None = None

    def resolve(
        self,
        repo: str | Sequence[str] | None,
        ref: str | None = None,
        *,
        status: Status | None = None,
        clone: bool = True,
    ) -> tuple[Path, ...]:
        """Folders for a request's ``repo`` (the server's default repository when absent), confined to
        ``self.roots`` when the server has them (see confine.py)."""
        if repo is None or (isinstance(repo, str) and not repo.strip()):
            repo = self.default
        return resolve_repo(
            repo, base=self.base, ref=ref, cache=self.cache, status=status, clone=clone, roots=self.roots
        )

    def model(self) -> StaticModel:
        with self._model_lock:
            if self._model is None:
                from codepith.model.loader import load_model

                self._model = load_model(self.model_name)
            return self._model

    def warm(self) -> list[tuple[tuple[Path, ...], str]]:
        """Keys (roots, content) of the indexes in memory, least recently used first."""
        with self._lock:
            return [k for k, s in self._slots.items() if s.index is not None]

    def _slot(self, key: tuple[tuple[Path, ...], str]) -> _Slot:
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = _Slot(threading.Lock())
                self._slots[key] = slot
            self._slots.move_to_end(key)
            while len(self._slots) > self.capacity:
                oldest = next(iter(self._slots))
                if oldest == key:
                    break
                gone = self._slots.pop(oldest)  # a call still using it keeps its own reference
                if gone.index is not None:
                    gone.index.close()  # its watcher stops; a call still using it checks the tree instead
            return slot

    @contextmanager
    def index(
        self,
        roots: tuple[Path, ...],
        content: str | None = None,
        progress: Progress | None = None,
    ) -> Iterator[Index]:
        """The warm index for ``roots``, built (from the disk cache when possible) on first use.

        Held exclusively while the ``with`` block runs; the caller refreshes it (``search(refresh=True)``).
        """
        kind = content or self.content
        slot = self._slot((roots, kind))
        with slot.lock:
            if slot.index is None:
                from codepith.api import Index
                from codepith.index.workers import keep_helper

                keep_helper()  # a long-lived process: no file's parse may hang or crash it (see workers.py)
                slot.index = Index.from_paths(
                    list(roots),
                    content=kind,
                    model=self.model(),
                    progress=progress,
                    cache_dir=self.cache,
                    background_save=True,
                    watch=True,
                )
            yield slot.index
