#!/usr/bin/env bash
# Fourth tuning set: two projects like the held-out suite's weakest (a Haskell document converter, a C++
# utility library), from Debian bookworm source packages (needs deb-src entries; only the upstream
# tarballs are used). The queries were written before any system was run on these trees.
# usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
apt-get source --download-only pandoc abseil >/dev/null
mkdir -p "$dest/pandoc" && tar xzf pandoc_*.orig.tar.gz -C "$dest/pandoc" --strip-components=1
mkdir -p "$dest/abseil" && tar xzf abseil_*.orig.tar.gz -C "$dest/abseil" --strip-components=1
rm -rf "$work"
