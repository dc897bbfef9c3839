#!/usr/bin/env bash
# Third tuning set: Java, C, Kotlin and C# projects from Debian bookworm source packages (needs deb-src
# entries; only the upstream tarballs are used, so a missing Debian patch tarball does not matter).
# usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
for p in jsoup jq kotlinx-coroutines newtonsoft-json; do
  apt-get source --download-only "$p" >/dev/null 2>&1 || true
  # a security update's newest version may have no orig tarball in the pool (jq, 2026-12): try the others
  for v in $(apt-cache showsrc "$p" | awk '/^Version:/ {print $2}'); do
    ls "$p"_*.orig.tar.* >/dev/null 2>&1 && break
    apt-get source --download-only "$p=$v" >/dev/null 2>&1 || true
  done
done
mkdir -p "$dest/jsoup" && tar xf jsoup_*.orig.tar.xz -C "$dest/jsoup" --strip-components=1
mkdir -p "$dest/jq" && tar xzf jq_*.orig.tar.gz -C "$dest/jq" --strip-components=1
mkdir -p "$dest/kotlinx-coroutines" && tar xf kotlinx-coroutines_*.orig.tar.xz -C "$dest/kotlinx-coroutines" --strip-components=1
mkdir -p "$dest/newtonsoft-json" && tar xzf newtonsoft-json_*.orig.tar.gz -C "$dest/newtonsoft-json" --strip-components=1
rm -rf "$work"
