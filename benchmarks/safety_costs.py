"""What the safety rules cost: a bounded read of a huge file, and the secret scan during indexing.

    python benchmarks/safety_costs.py --corpora /work/corpora [--size-gb 1]

1. Writes a real (not sparse) text file of ``--size-gb`` GB in a private temporary folder and runs
   ``codepith read FILE 1 2`` in a fresh process: wall time and the child's peak RSS, next to the same
   process doing nothing but ``codepith --version`` (the interpreter's own floor), measured in one run.
2. Reads every file the walker selects in each corpus (``--content all``), then times the text decode
   and ``find_secret`` separately: the scan's share of the read cost, and the files it skips.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path


def _child(args: list[str], cwd: Path, repeat: int = 3) -> tuple[float, float, str]:
    """(best seconds, peak RSS MB of that process, stdout) of a fresh codepith process, best of ``repeat``."""
    best: tuple[float, float, str] | None = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "codepith.surfaces.cli", *args], cwd=cwd, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"codepith {' '.join(args)} failed")
        if best is None or seconds < best[0]:
            best = (seconds, usage.ru_maxrss / 1024, out)
    assert best is not None
    return best


def huge_read(size_gb: float) -> None:
    folder = Path(tempfile.mkdtemp(prefix="codepith-bench-"))
    try:
        huge = folder / "huge.log"
        line = b"2026-12-01 03:00:00 INFO request served in 12 ms by worker 7\n"
        block = line * ((8 << 20) // len(line))
        target = int(size_gb * (1 << 30))
        t0 = time.perf_counter()
        with open(huge, "wb") as handle:
            written = 0
            while written < target:
                handle.write(block)
                written += len(block)
        print(f"wrote {written / (1 << 30):.2f} GB in {time.perf_counter() - t0:.1f} s")
        floor_s, floor_mb, _ = _child(["--version"], folder)
        read_s, read_mb, out = _child(["read", "huge.log", "1", "2"], folder)
        print(f"codepith --version        : {floor_s:.3f} s, peak RSS {floor_mb:.0f} MB")
        print(f"codepith read huge.log 1 2: {read_s:.3f} s, peak RSS {read_mb:.0f} MB")
        print("  " + out.splitlines()[0])
        from codepith.output.read import read_lines

        tracemalloc.start()
        t0 = time.perf_counter()
        read_lines(folder, "huge.log", 1, 2)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"read_lines(huge.log, 1, 2) in process: {seconds * 1000:.1f} ms, peak allocation {peak / 1e6:.2f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def secret_scan(corpora: Path) -> None:
    from codepith.files.read import bom_encoding
    from codepith.files.secrets import find_secret
    from codepith.files.walk import walk

    read_s = decode_s = scan_s = 0.0
    files = nbytes = 0
    hits: list[tuple[str, str]] = []
    for corpus in sorted(p for p in corpora.iterdir() if p.is_dir()):
        for sf in walk(corpus, "all").files:
            t0 = time.perf_counter()
            data = sf.path.read_bytes()
            t1 = time.perf_counter()
            text = data.decode(bom_encoding(data) or "utf-8", errors="replace")
            t2 = time.perf_counter()
            rule = find_secret(text)
            t3 = time.perf_counter()
            read_s, decode_s, scan_s = read_s + t1 - t0, decode_s + t2 - t1, scan_s + t3 - t2
            files += 1
            nbytes += len(data)
            if rule:
                hits.append((f"{corpus.name}/{sf.rel_path}", rule))
    mb = nbytes / 1e6
    print(
        f"{files} files, {mb:.1f} MB: read {read_s:.2f} s, decode {decode_s:.2f} s, find_secret {scan_s:.2f} s "
        f"({mb / max(scan_s, 1e-9):.0f} MB/s)"
    )
    print(f"files skipped as secret by content: {len(hits)}")
    for path, rule in hits:
        print(f"  {rule}: {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=None, help="folder of corpora for the secret-scan cost")
    ap.add_argument("--size-gb", type=float, default=1.0)
    args = ap.parse_args()
    os.environ.setdefault("CODEPITH_CACHE_DIR", tempfile.mkdtemp(prefix="codepith-cache-"))
    if args.corpora is not None:
        secret_scan(args.corpora)
    huge_read(args.size_gb)


if __name__ == "__main__":
    main()
