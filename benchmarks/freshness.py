"""What freshness costs on a big tree, without indexing it (the kernel takes 15 min and 17 GB to index).

    PYTHONPATH=src python benchmarks/freshness.py /work/kernel/linux-source-6.1 [--edits 10] [--git-dir DIR]
    PYTHONPATH=src python benchmarks/freshness.py /work/corpora/fastapi --search   # a small tree, indexed

The index's records are stood in for by the walk's own stat data (no chunks, nothing embedded), which
is all a freshness check reads. Printed, each a median over ``--repeat`` runs:

- walk: the full walk with ignore rules (what a refresh did whenever the stat check failed, and what
  a freshly loaded index did before the walk's stamps were saved with it);
- stat check: ``build.quick_check``, one stat per listed folder, ignore file and indexed file (what an
  unwatched process, e.g. the one-shot CLI, pays per search);
- folders only: the stat of listed folders alone: cheaper, but blind to a file edited in place;
- git status: ``git status --porcelain`` when ``--git-dir`` names a git repository of the tree (git's
  index also needs an lstat per tracked file; listed for comparison);
- watched, nothing moved: ``watcher.take()`` plus ``build.refresh(changed=...)`` (what a watched
  index pays per search);
- with ``--edits N``: a hard-link copy of the tree is watched, N files in it are replaced (a new
  inode, so the shared tree is never written) and one new file added; for each, the time from the
  write until a refresh has re-read it (chunked and embedded): "an edit is in the next search".
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codepith.files.walk import max_file_bytes_limit, walk
from codepith.files.watch import TreeWatcher
from codepith.index import build
from codepith.index.corpus import Corpus, CorpusPart
from codepith.index.repo import FileRecord, RepoData
from codepith.model.loader import StaticModel, load_model
from codepith.store.manifest import Store
from codepith.store.view import View


def _median_ms(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), min(times)


def skeleton(root: Path, dims: int, content: str = "code") -> RepoData:
    """An index of ``root`` as a freshness check sees it: every file's stat, no chunks."""
    walked = walk(root, content)
    data = RepoData(str(root), content, "none", "none", dims)
    racy_after = time.time_ns() - build.RACY_NS
    for sf in walked.files:
        rec = FileRecord(sf.rel_path, sf.size, sf.mtime_ns, "-")
        rec.racy = sf.mtime_ns >= racy_after
        rec.language = sf.language
        data.files[sf.rel_path] = rec
    data.walk_skipped = walked.skipped
    data.skipped_paths = walked.skipped_paths
    data.linked = walked.linked
    data.pruned = walked.pruned
    data.watch = build._stamp(walked.watch, racy_after)
    data.watch_key = (max_file_bytes_limit(None), content)
    return data


def skeleton_store(root: Path, model: StaticModel, folder: Path) -> tuple[Store, RepoData]:
    """The skeleton committed to a real store (file rows without chunks), so edits go through the
    store as in a long-lived process: the edited file is chunked, embedded and committed as a segment."""
    info = model.info
    data = skeleton(root, info.dims)
    data.model_name, data.model_digest = info.name, info.digest
    st = Store(
        folder, root=str(root), content=data.content, model_name=info.name, model_digest=info.digest, dims=info.dims
    )
    metas = [build._meta(r) for r in data.files.values()]
    with st.building() as w:
        for i in range(0, len(metas), 5000):
            w.commit([], metas[i : i + 5000])
        w.finish(walk_skipped=build._skipped_json(data), refreshed_at=time.time(), fresh=build._fresh(data))
    data.generation = st.generation()
    return st, data


def _folders_only(data: RepoData) -> bool:
    return all(os.stat(p).st_mtime_ns == m for p, m in data.watch)


def _edit_latency(tree: Path, edits: int, model_name: str | None) -> list[tuple[str, float]]:
    model = load_model(model_name)
    tmp = Path(tempfile.mkdtemp(prefix="codepith-fresh-"))
    copy = tmp / "tree"
    try:
        subprocess.run(["cp", "-al", str(tree), str(copy)], check=True)
        st, data = skeleton_store(copy, model, tmp / "store")
        watcher = TreeWatcher(copy)
        if not watcher.start():
            raise SystemExit("cannot watch the copy (inotify limits?)")
        try:
            rels = sorted(r for r, rec in data.files.items() if rec.language in ("c", "python", "rust", "go"))
            step = max(1, len(rels) // max(1, edits))
            chosen = rels[::step][:edits]
            out = []
            # the first edit warms what a long-lived process has warm already (grammars, the model's
            # first call, the folder set): it is run but not counted
            for i, rel in enumerate([rels[len(rels) // 2 + 1], *chosen, "new_file_added.c"]):
                path = copy / rel
                old = path.read_text("utf-8", "replace") if path.exists() else ""
                fresh = f"{old}\nint codepith_fresh_{i}(void) {{ return {i}; }}\n"
                tmp_path = path.with_name(path.name + ".codepith-tmp")
                t0 = time.perf_counter()
                tmp_path.write_text(fresh, "utf-8")
                os.replace(tmp_path, path)  # a new inode: the shared tree's file is untouched
                while True:
                    moved = watcher.take()
                    stats = build.refresh(data, model, st, changed=moved)
                    corpus = Corpus([CorpusPart(View(st), "")], model.info.dims)  # what the next search reads
                    if any(f"codepith_fresh_{i}" in corpus.chunks[c].content for c in corpus.chunk_indices(rel)):
                        break
                    if time.perf_counter() - t0 > 30:
                        raise SystemExit(f"edit of {rel} not seen after 30 s")
                    time.sleep(0.005)
                if i:
                    out.append((rel + (" (walked)" if stats.walked else ""), (time.perf_counter() - t0) * 1000))
            return out
        finally:
            watcher.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _interleaved(tree: Path, queries: list[str], rounds: int, model_name: str | None) -> dict[str, list[float]]:
    """Warm query latency of one real index per mode, query by query in turn, so load on the machine
    falls on every mode alike: the stat check, the watcher, and no freshness at all."""
    import codepith

    model = load_model(model_name)
    with tempfile.TemporaryDirectory(prefix="codepith-fresh-cache-") as cache:
        checked = codepith.Index.from_path(tree, model=model, cache_dir=cache)
        watched = codepith.Index.from_path(tree, model=model, cache_dir=cache, watch=True)
        modes: dict[str, Callable[[str], object]] = {
            "stat check per search": lambda q: checked.search(q),
            "watched": lambda q: watched.search(q),
            "no freshness (refresh=False)": lambda q: checked.search(q, refresh=False),
        }
        out: dict[str, list[float]] = {name: [] for name in modes}
        for q in queries:  # warm
            for fn in modes.values():
                fn(q)
        for _ in range(rounds):
            for q in queries:
                for name, fn in modes.items():
                    t0 = time.perf_counter()
                    fn(q)
                    out[name].append((time.perf_counter() - t0) * 1000)
        watched.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", type=Path)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--edits", type=int, default=0, help="measure edit-to-search latency on a hard-link copy")
    p.add_argument("--git-dir", type=Path, default=None, help="a git repository whose work tree is TREE")
    p.add_argument("--model", default=None)
    p.add_argument("--search", action="store_true", help="index TREE (small trees only) and time searches per mode")
    args = p.parse_args(argv)
    tree = args.tree.resolve()
    if args.search:
        queries = ["how are requests routed", "parse the configuration file", "error handling", "cache", "test"]
        lat = _interleaved(tree, queries, args.repeat, args.model)
        print(f"{tree.name}: warm search, {len(queries)} queries x {args.repeat} rounds, interleaved")
        for name, values in lat.items():
            print(f"  {name}: p50 {statistics.median(values):.2f} ms")
        return 0
    print(f"tree: {tree}")
    walk_ms = _median_ms(lambda: walk(tree), max(1, args.repeat // 2))
    data = skeleton(tree, 8)
    print(f"files indexed: {len(data.files)}, folders listed: {len(data.watch)}")
    rows = [("walk (ignore rules, every folder listed)", walk_ms)]
    assert build.quick_check(data) == set(), "an untouched tree passes the stat check"
    check = _median_ms(lambda: build.quick_check(data), args.repeat)
    rows.append(("stat check (every folder and indexed file)", check))
    rows.append(("folders only (misses in-place edits)", _median_ms(lambda: _folders_only(data), args.repeat)))
    if args.git_dir is not None:
        env = dict(os.environ, GIT_DIR=str(args.git_dir), GIT_WORK_TREE=str(tree))
        cmd = ["git", "status", "--porcelain", "--untracked-files=all"]
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # let git refresh its index once
        git_ms = _median_ms(lambda: subprocess.run(cmd, env=env, capture_output=True), args.repeat)
        rows.append(("git status --porcelain --untracked-files=all", git_ms))
    watcher = TreeWatcher(tree)
    if watcher.start():
        try:
            time.sleep(0.2)
            watcher.take()

            def watched() -> None:
                build.refresh(data, None, None, changed=watcher.take())  # type: ignore[arg-type]  # nothing moved

            rows.append(("watched, nothing moved (take + refresh)", _median_ms(watched, args.repeat * 20)))
        finally:
            watcher.close()
    else:
        rows.append(("watched: watcher unavailable", (float("nan"), float("nan"))))
    print("\n| freshness step | median ms | min ms |\n|---|---:|---:|")
    for name, (med, low) in rows:
        print(f"| {name} | {med:.2f} | {low:.2f} |")
    if args.edits:
        edits = _edit_latency(tree, args.edits, args.model)
        values = [ms for _, ms in edits]
        print(f"\nedit -> refreshed (watched, hard-link copy): p50 {statistics.median(values):.0f} ms, "
              f"max {max(values):.0f} ms over {len(values)} changes")  # fmt: skip
        for rel, ms in edits:
            print(f"  {ms:7.0f} ms  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
