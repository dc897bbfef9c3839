#!/usr/bin/env bash
# Fifth tuning set: the held-out suite's languages that no earlier set covers (Scala, Swift, Zig), from
# registry releases: Scala 2.11's standard library (Debian's scala source package), Capacitor's iOS runtime
# (npm @capacitor/ios, Swift with some Objective-C) and Zig 0.13's standard library (PyPI ziglang wheel).
# The queries were written from the code alone, before any system was run on these trees.
# usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
apt-get source --download-only scala=2.11.12-5 >/dev/null
mkdir -p "$dest/scala-library" && tar xJf scala_2.11.12.orig.tar.xz -C "$dest/scala-library" --strip-components=1
npm pack @capacitor/ios@6.2.2 --silent >/dev/null
mkdir -p "$dest/capacitor-ios" && tar xzf capacitor-ios-6.2.2.tgz -C "$dest/capacitor-ios" --strip-components=1
python3 -m pip download --no-deps --only-binary :all: --platform manylinux_2_12_x86_64 ziglang==0.13.0 -d . -q
mkdir -p "$dest/zig-std" && python3 -m zipfile -e ziglang-0.13.0-*.whl "$dest/zig-std"
rm -rf "$work"
