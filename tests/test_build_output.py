"""Build output is detected by what build tools leave behind, so source folders named target/, build/,
out/ or dist/ (the kernel's drivers/target, drivers/nvme/target, tools/build) are indexed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write

import codepith
from codepith.files.build_output import build_output_reason
from codepith.files.walk import walk

KERNEL = Path("/work/kernel/linux-source-6.1")
C = "int f(void) { return 0; }\n"


def rels(root: Path) -> set[str]:
    return {f.rel_path for f in walk(root).files}


def test_source_folders_named_like_build_output_are_indexed(tmp_path: Path) -> None:
    write(tmp_path, {
        "Makefile": "all:\n",
        "drivers/target/target_core_transport.c": C,
        "drivers/nvme/target/core.c": "u16 nvmet_req_init(struct nvmet_req *req) { return 0; }\n",
        "tools/build/fixdep.c": C,
        "web/out/render.js": "export const x = 1;\n",
        "pkg/dist/index.js": "export const y = 2;\n",
    })  # fmt: skip
    result = walk(tmp_path)
    assert {f.rel_path for f in result.files} == {
        "Makefile", "drivers/target/target_core_transport.c", "drivers/nvme/target/core.c", "tools/build/fixdep.c",
        "web/out/render.js", "pkg/dist/index.js",
    }  # fmt: skip
    assert not any("build output" in r for r in result.skipped.counts)


@pytest.mark.parametrize(
    ("tree", "skipped", "reason"),
    [
        (
            {"Cargo.toml": "[package]\n", "src/lib.rs": "fn a() {}\n", "target/debug/build/gen.rs": "fn g() {}\n"},
            "target/",
            "build output (Cargo)",
        ),
        (
            {"target/.rustc_info.json": "{}\n", "target/release/gen.rs": "fn g() {}\n", "src/lib.rs": "fn a() {}\n"},
            "target/",
            "build output (Cargo)",
        ),
        (
            {
                "x/target/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
                "x/target/gen.rs": "fn g() {}\n",
                "src/lib.rs": "fn a() {}\n",
            },
            "x/target/",
            "build output (CACHEDIR.TAG)",
        ),
        (
            {
                "pom.xml": "<project/>\n",
                "src/A.java": "class A {}\n",
                "target/generated-sources/B.java": "class B {}\n",
            },
            "target/",
            "build output (Maven)",
        ),
        (
            {"build.gradle.kts": "\n", "src/A.kt": "class A\n", "build/generated/B.kt": "class B\n"},
            "build/",
            "build output (Gradle)",
        ),
        (
            {"pyproject.toml": "[project]\n", "pkg/a.py": "a = 1\n", "build/lib/pkg/a.py": "a = 1\n"},
            "build/",
            "build output (setuptools)",
        ),
        (
            {"src/a.c": C, "cmake-build-debug/CMakeCache.txt": "x\n", "cmake-build-debug/gen.c": C},
            "cmake-build-debug/",
            "build output (CMake)",
        ),
        ({"src/a.c": C, "build/.ninja_log": "x\n", "build/gen.c": C}, "build/", "build output (Ninja)"),
        ({"src/A.java": "class A {}\n", "out/production/A.java": "class A {}\n"}, "out/", "build output (IntelliJ)"),
        (
            {"package.json": "{}\n", "lib/axios.js": "let a;\n", "dist/axios.js": "let a;\n"},
            "dist/",
            "build output (npm)",
        ),
    ],
)
def test_build_output_is_skipped_with_its_reason(
    tmp_path: Path, tree: dict[str, str], skipped: str, reason: str
) -> None:
    write(tmp_path, tree)
    result = walk(tmp_path)
    assert not [f.rel_path for f in result.files if f.rel_path.startswith(skipped)]
    assert result.skipped.examples.get(reason) == [skipped]


def test_gitignored_build_folder_is_skipped_and_a_plain_one_beside_pyproject_is_not(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "/dist/\n", "dist/bundle.js": "let a;\n", "src/a.js": "let b;\n"})
    assert rels(tmp_path) == {"src/a.js"}
    other = tmp_path / "py"
    write(other, {"pyproject.toml": "[project]\n", "build/__init__.py": "def build_wheel(): pass\n"})
    assert rels(other) == {"build/__init__.py"}  # pypa/build-style code, not setuptools output


def test_codepithignore_brings_build_output_back(tmp_path: Path) -> None:
    write(tmp_path, {
        "Cargo.toml": "[package]\n", "target/gen.rs": "fn g() {}\n",
        "gen/CMakeCache.txt": "x\n", "gen/config.c": C, ".codepithignore": "!target/\n!gen/\n",
    })  # fmt: skip
    assert rels(tmp_path) == {"target/gen.rs", "gen/config.c"}


def test_a_marker_added_later_is_noticed_on_refresh(tmp_path: Path, model) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "repo"
    write(root, {"src/a.c": C, "build/gen.c": "int generated_thing(void) { return 1; }\n"})
    index = codepith.Index.from_path(root, model=model, cache_dir=tmp_path / "c")
    assert {c.file_path for c in index.chunks} == {"src/a.c", "build/gen.c"}
    (root / "build" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    index.refresh()
    assert {c.file_path for c in index.chunks} == {"src/a.c"}


def test_reason_rules() -> None:
    assert build_output_reason("target", {"debug"}, {"Cargo.toml"}) == "build output (Cargo)"
    assert build_output_reason("target", {"debug"}, {"Makefile"}) is None
    assert build_output_reason("build", {"lib"}, {"Makefile"}) is None
    assert build_output_reason("dist", {"index.js"}, {"package.json"}) == "build output (npm)"
    assert build_output_reason("dist", {"index.js"}, {"Makefile"}) is None
    assert build_output_reason("build", {"webpack.config.js"}, {"package.json"}) is None


@pytest.mark.skipif(not (KERNEL / "drivers/nvme/target/core.c").is_file(), reason="kernel tree not here")
def test_kernel_target_folders_are_searchable(tmp_path: Path) -> None:
    """A copy of three kernel folders that the name rule used to drop (186 files in the whole tree)."""
    root = tmp_path / "linux"
    for rel in ("drivers/nvme/target", "drivers/target/loopback", "tools/build"):
        shutil.copytree(KERNEL / rel, root / rel)
    shutil.copy(KERNEL / "Makefile", root / "Makefile")
    env = dict(os.environ, CODEPITH_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parents[1] / "src"), env.get("PYTHONPATH", "")) if p
    )
    proc = subprocess.run(
        [sys.executable, "-m", "codepith.surfaces.cli", "search", "nvmet_req_init", str(root), "-k", "3"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "FILE drivers/nvme/target/core.c" in proc.stdout
