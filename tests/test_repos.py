"""Repository resolution: folders, lists, https git URLs (and refusals), clones of a bare repo, the LRU."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from codepith.errors import CodepithError, PathError
from codepith.service.repos import (
    ALLOW_FILE_URLS_ENV,
    GitSource,
    Repos,
    check_ref,
    clone_dir,
    ensure_clone,
    is_cloned,
    looks_like_url,
    parse_git_url,
    resolve_repo,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(*args: str, cwd: Path | None = None) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


@pytest.fixture
def bare_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare repository with two commits on main, a tag v1 on the first and a branch 'dev'."""
    work = tmp_path / "src-work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / "app.py").write_text("def first_version():\n    return 1\n")
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "one", cwd=work)
    first = _git("rev-parse", "HEAD", cwd=work)
    _git("tag", "v1", cwd=work)
    (work / "app.py").write_text("def second_version():\n    return 2\n")
    _git("commit", "-q", "-am", "two", cwd=work)
    second = _git("rev-parse", "HEAD", cwd=work)
    _git("branch", "dev", first, cwd=work)
    bare = tmp_path / "proj.git"
    _git("clone", "-q", "--bare", str(work), str(bare))
    return bare, first, second


# -- URL parsing -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "url", "ref"),
    [
        ("https://github.com/owner/repo", "https://github.com/owner/repo", None),
        ("https://github.com/owner/repo.git@v1.2", "https://github.com/owner/repo.git", "v1.2"),
        ("https://git.example.org:8443/a/b/c.git/", "https://git.example.org:8443/a/b/c.git", None),
        ("https://host.io/x/y@feature/thing", "https://host.io/x/y", "feature/thing"),
        ("https://host.io/x/y@0123abcd", "https://host.io/x/y", "0123abcd"),
    ],
)
def test_parse_accepts_https(text: str, url: str, ref: str | None) -> None:
    assert parse_git_url(text) == GitSource(url, ref)


def test_separate_ref_field_and_conflict() -> None:
    assert parse_git_url("https://h.io/x/y", "main").ref == "main"
    assert parse_git_url("https://h.io/x/y@main", "main").ref == "main"
    with pytest.raises(CodepithError, match="two different refs"):
        parse_git_url("https://h.io/x/y@main", "dev")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("git@github.com:owner/repo.git", "ssh"),
        ("ssh://git@github.com/owner/repo", "ssh://"),
        ("http://github.com/owner/repo", "http://"),
        ("git://github.com/owner/repo", "git://"),
        ("file:///tmp/repo", "file://"),
        ("https:///tmp/repo", "local path"),
        ("https:/tmp/repo", "local path"),
        ("https://tmp/repo", "local path"),
        ("https://user:secret@github.com/o/r", "credentials"),
        ("https://github.com/", "no repository"),
        ("https://github.com/o/../../etc", "not a repository URL"),
        ("https://github.com/o/r?x=1", "query"),
        ("ext::sh -c touch% /tmp/pwned", "not accepted"),
        # an agent must not make the server fetch from the operator's network (the metadata service)
        ("https://169.254.169.254/latest/meta-data", "private address"),
        ("https://127.0.0.1/o/r", "private address"),
        ("https://10.1.2.3:8443/o/r", "private address"),
        ("https://localhost/o/r", "local path"),
    ],
)
def test_parse_refuses(text: str, why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_FILE_URLS_ENV, raising=False)
    with pytest.raises(CodepithError) as err:
        parse_git_url(text)
    message = str(err.value)
    assert why in message
    assert "\n" not in message


@pytest.mark.parametrize("ref", ["-upload-pack=x", "a..b", "main.lock", "x y", "", "@{u}", "a//b", "/abs"])
def test_bad_refs_refused(ref: str) -> None:
    with pytest.raises(CodepithError, match="not a valid git ref"):
        check_ref(ref)


def test_a_host_name_that_leads_to_a_private_address_is_not_cloned(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import socket

    from codepith.service import repos

    seen: list[str] = []

    def fake_dns(host: str, *args: object, **kw: object) -> list[tuple[object, ...]]:
        seen.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 443))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    monkeypatch.setattr(repos, "_fetch_into", lambda *a: pytest.fail("fetched from a private address"))
    with pytest.raises(CodepithError, match="private address"):
        repos.ensure_clone(parse_git_url("https://git.internal.example.com/o/r"), cache=tmp_path)
    assert seen == ["git.internal.example.com"]


def test_looks_like_url() -> None:
    assert looks_like_url("https://a.b/c")
    assert looks_like_url("git@github.com:o/r")
    assert looks_like_url("file:///x")
    assert not looks_like_url("src/app")
    assert not looks_like_url("/home/me/project")


def test_file_urls_only_with_test_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ALLOW_FILE_URLS_ENV, raising=False)
    with pytest.raises(CodepithError, match="file://"):
        parse_git_url(f"file://{tmp_path}/proj.git")
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    assert parse_git_url(f"file://{tmp_path}/proj.git@v1") == GitSource(f"file://{tmp_path}/proj.git", "v1")
    assert GitSource(f"file://{tmp_path}/proj.git").name == "proj"


# -- local folders -----------------------------------------------------------------------------------
def test_resolve_local(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "f.txt").write_text("x")
    assert resolve_repo(None, base=tmp_path) == (tmp_path.resolve(),)
    assert resolve_repo("a", base=tmp_path) == ((tmp_path / "a").resolve(),)
    assert resolve_repo(["a", str(tmp_path / "b"), "a"], base=tmp_path) == (
        (tmp_path / "a").resolve(),
        (tmp_path / "b").resolve(),
    )
    with pytest.raises(PathError, match="unknown repository"):
        resolve_repo("nope", base=tmp_path)
    with pytest.raises(PathError, match="not a folder"):
        resolve_repo("f.txt", base=tmp_path)
    with pytest.raises(CodepithError, match="empty list"):
        resolve_repo([], base=tmp_path)
    with pytest.raises(CodepithError, match="only meaningful with a repository URL"):
        resolve_repo("a", base=tmp_path, ref="main")


# -- cloning -----------------------------------------------------------------------------------------
@needs_git
def test_clone_default_branch_and_reuse(
    bare_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _, _ = bare_repo
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    cache = tmp_path / "cache"
    notes: list[str] = []
    (root,) = resolve_repo(f"file://{bare}", base=tmp_path, cache=cache, status=notes.append)
    assert root == clone_dir(parse_git_url(f"file://{bare}"), cache)
    assert root.name == "proj"
    assert "second_version" in (root / "app.py").read_text()
    assert notes and "cloning" in notes[0]
    # reused: no second clone, and local edits to the clone are not overwritten
    (root / "marker.txt").write_text("kept")
    notes.clear()
    assert resolve_repo(f"file://{bare}", base=tmp_path, cache=cache, status=notes.append) == (root,)
    assert notes == []
    assert (root / "marker.txt").read_text() == "kept"


@needs_git
@pytest.mark.parametrize("which", ["tag", "branch", "commit"])
def test_clone_at_ref(
    which: str, bare_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, first, _ = bare_repo
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    ref = {"tag": "v1", "branch": "dev", "commit": first}[which]
    (root,) = resolve_repo(f"file://{bare}@{ref}", base=tmp_path, cache=tmp_path / "cache")
    assert "first_version" in (root / "app.py").read_text()
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert head.strip() == first


@needs_git
def test_clone_errors_are_one_line(
    bare_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _, _ = bare_repo
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    with pytest.raises(CodepithError) as err:
        ensure_clone(GitSource(f"file://{bare}", "no-such-branch"), cache=tmp_path / "cache")
    assert "could not clone" in str(err.value) and "\n" not in str(err.value)
    assert not is_cloned(GitSource(f"file://{bare}", "no-such-branch"), tmp_path / "cache")
    with pytest.raises(CodepithError, match="could not clone"):
        ensure_clone(GitSource(f"file://{tmp_path}/missing.git"), cache=tmp_path / "cache")


@needs_git
def test_clone_not_required_mode(
    bare_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _, _ = bare_repo
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    with pytest.raises(CodepithError, match="not cloned yet"):
        resolve_repo(f"file://{bare}", base=tmp_path, cache=tmp_path / "c", clone=False)


@needs_git
def test_concurrent_clones_share_one_checkout(
    bare_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, _, _ = bare_repo
    monkeypatch.setenv(ALLOW_FILE_URLS_ENV, "1")
    src = GitSource(f"file://{bare}")
    got: list[Path] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            got.append(ensure_clone(src, cache=tmp_path / "cache"))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(got)) == 1
    leftovers = [p.name for p in got[0].parent.iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


# -- the LRU of warm indexes -------------------------------------------------------------------------
def test_lru_keeps_indexes_warm_and_evicts(tmp_path: Path, model: object) -> None:
    folders = []
    for name in "abc":
        d = tmp_path / name
        d.mkdir()
        (d / f"{name}_mod.py").write_text(f"def func_{name}():\n    return '{name}'\n")
        folders.append(d.resolve())
    repos = Repos(tmp_path, capacity=2)
    repos._model = model  # type: ignore[assignment]  # the session's model: no second load
    with repos.index((folders[0],)) as first:
        pass
    with repos.index((folders[0],)) as again:
        assert again is first  # warm: the same object, not rebuilt
    with repos.index((folders[1],)):
        pass
    with repos.index((folders[2],)):
        pass
    warm = [k[0] for k in repos.warm()]
    assert warm == [(folders[1],), (folders[2],)]
    with repos.index((folders[0],)) as rebuilt:
        assert rebuilt is not first
        assert [r.chunk.file_path for r in rebuilt.search("func_a", top_k=1)] == ["a_mod.py"]


def test_default_repo_is_used_when_none(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    repos = Repos(tmp_path, default=str(tmp_path / "proj"))
    assert repos.resolve(None) == ((tmp_path / "proj").resolve(),)
    assert repos.resolve("") == ((tmp_path / "proj").resolve(),)
    assert Repos(tmp_path).resolve(None) == (tmp_path.resolve(),)
