#!/usr/bin/env bash
# Second tuning set: five projects in languages the dev suite lacks, from Debian source/binary packages
# (bookworm). Needs deb-src entries for `apt-get source`. usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
apt-get source --download-only php-laravel-framework spdlog haskell-optparse-applicative elixir-lang >/dev/null
apt-get download lua-penlight >/dev/null
mkdir -p "$dest/laravel" && tar xf php-laravel-framework_*.orig.tar.xz -C "$dest/laravel" --strip-components=1
mkdir -p "$dest/spdlog" && tar xf spdlog_*.orig.tar.xz -C "$dest/spdlog" --strip-components=1
mkdir -p "$dest/optparse-applicative" && tar xzf haskell-optparse-applicative_*.orig.tar.gz -C "$dest/optparse-applicative" --strip-components=1
tar xf elixir-lang_*.orig.tar.xz && mkdir -p "$dest/elixir" && mv elixir-*/lib "$dest/elixir/lib"
dpkg-deb -x lua-penlight_*.deb pen && mkdir -p "$dest/penlight" && cp -r pen/usr/share/lua/5.1/pl "$dest/penlight/pl"
rm -rf "$work"
