"""Which folders are build output: decided by what build tools leave behind, never by a name alone.

``target/``, ``build/``, ``out/`` and ``dist/`` are also ordinary source folder names (the Linux kernel
has ``drivers/target``, ``drivers/nvme/target`` and ``tools/build``), so a folder is skipped as build
output only when one of these holds (gitignored folders are skipped by the ignore rules anyway):

* it holds a marker file that build tools write into their output folder, whatever its name:
  ``CACHEDIR.TAG`` (the cache-directory tagging standard: Cargo, Bazel, many more), ``.rustc_info.json``
  (Cargo), ``CMakeCache.txt`` (CMake), ``.ninja_log`` / ``.ninja_deps`` (Ninja), ``meson-private/``
  (Meson), ``maven-status/`` or ``maven-archiver/`` (Maven);
* it is ``target/`` beside ``Cargo.toml``, ``pom.xml``, ``build.sbt`` or ``project.clj`` (the build
  folder of Cargo, Maven, sbt and Leiningen, which nothing else puts there);
* it is ``build/`` beside ``build.gradle(.kts)`` or ``settings.gradle(.kts)`` (Gradle's output folder),
  or beside ``setup.py`` / ``pyproject.toml`` / ``setup.cfg`` while holding ``lib``, ``lib.*``,
  ``temp.*`` or ``bdist.*`` (setuptools' output);
* it is ``out/`` holding ``production/`` (IntelliJ) or ``_next/`` (a Next.js export);
* it is ``dist/`` beside ``package.json`` (what npm packages publish: bundles of the code next to it,
  which would repeat every result; axios and redux commit theirs) or beside ``setup.py`` /
  ``pyproject.toml`` (sdists and wheels).

A ``build/`` beside ``package.json`` is not skipped: older JavaScript projects keep build scripts there.
Any other ``dist/`` is indexed; minified bundles inside it are still skipped file by file.
"""

from __future__ import annotations

import os
from collections.abc import Collection

BUILD_NAMES = frozenset({"build", "target", "out", "dist"})

# marker entry -> the tool it names (shown in the skip reason)
_MARKERS = {
    "CACHEDIR.TAG": "CACHEDIR.TAG",
    ".rustc_info.json": "Cargo",
    "CMakeCache.txt": "CMake",
    ".ninja_log": "Ninja",
    ".ninja_deps": "Ninja",
    "meson-private": "Meson",
    "maven-status": "Maven",
    "maven-archiver": "Maven",
}
_TARGET_OWNERS = {"Cargo.toml": "Cargo", "pom.xml": "Maven", "build.sbt": "sbt", "project.clj": "Leiningen"}
_GRADLE = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
_SETUPTOOLS = ("setup.py", "pyproject.toml", "setup.cfg")
_OUT_MARKERS = {"production": "IntelliJ", "_next": "Next.js"}
_DIST_OWNERS = {"package.json": "npm", "setup.py": "Python packaging", "pyproject.toml": "Python packaging"}

REASON = "build output"
CACHEDIR_TAG = "CACHEDIR.TAG"
_TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by codepith.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)

# Entries whose arrival or removal can change a folder's verdict: markers inside it and manifests
# beside it (a watcher's change to one re-judges the folder that holds it, not just the entry).
MARKER_NAMES = frozenset({*_MARKERS, *_OUT_MARKERS})
MANIFEST_NAMES = frozenset({*_TARGET_OWNERS, *_GRADLE, *_SETUPTOOLS, *_DIST_OWNERS})


def marker_tool(names: Collection[str]) -> str | None:
    """The build tool whose marker sits among a folder's entries, or None."""
    for name, tool in _MARKERS.items():
        if name in names:
            return tool
    return None


def build_output_reason(name: str, inside: Collection[str], beside: Collection[str]) -> str | None:
    """Why folder ``name`` (holding entries ``inside``, next to entries ``beside``) is build output.

    Returns a skip reason such as ``"build output (Cargo)"``, or None when it may hold real code.
    """
    tool = marker_tool(inside)
    if tool is None and name == "target":
        tool = next((t for f, t in _TARGET_OWNERS.items() if f in beside), None)
    elif tool is None and name == "build":
        if any(f in beside for f in _GRADLE):
            tool = "Gradle"
        elif any(f in beside for f in _SETUPTOOLS) and any(
            n == "lib" or n.startswith(("lib.", "temp.", "bdist.")) for n in inside
        ):
            tool = "setuptools"
    elif tool is None and name == "out":
        tool = next((t for f, t in _OUT_MARKERS.items() if f in inside), None)
    elif tool is None and name == "dist":
        tool = next((t for f, t in _DIST_OWNERS.items() if f in beside), None)
    return f"{REASON} ({tool})" if tool else None


def tag_folder(folder: str | os.PathLike[str]) -> None:
    """Mark a folder codepith fills alone with a cache directory tag, so that a walk skips it as build
    output (codepith's own, backup tools'): the cache's ``indexes/`` and ``repos/``, and the temporary
    folders it makes, which lie inside an indexed tree when ``TMPDIR`` does. Best effort: a folder that
    cannot take the file is used as it is."""
    tag = os.path.join(folder, CACHEDIR_TAG)
    if os.path.isfile(tag):
        return
    try:
        with open(tag, "x", encoding="ascii") as out:
            out.write(_TAG_TEXT)
    except OSError:
        pass
