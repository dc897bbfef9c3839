#!/usr/bin/env bash
# Third tuning set: a Java and a C project from Debian bookworm source packages (needs deb-src entries).
# usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
apt-get source --download-only jsoup jq >/dev/null
mkdir -p "$dest/jsoup" && tar xf jsoup_*.orig.tar.xz -C "$dest/jsoup" --strip-components=1
mkdir -p "$dest/jq" && tar xzf jq_*.orig.tar.gz -C "$dest/jq" --strip-components=1
rm -rf "$work"
