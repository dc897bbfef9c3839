#!/usr/bin/env bash
# Sixth tuning set: languages outside the dev suite and the earlier sets, each a registry release. Perl
# (Mojolicious 9.31, Debian's libmojolicious-perl, which ships its .pm sources), R (ggplot2 3.4.1, Debian's
# r-cran-ggplot2 source package: the binary holds only a lazy-load database), Groovy (groovysh, from
# Debian's groovy 2.4.21 source package), OCaml (ocaml-re 1.10.4, Debian source package), Erlang (OTP 25's
# inets, from Debian's erlang-src) and Solidity (npm @openzeppelin/contracts 5.0.2).
# The queries were written from the code alone, before any system was run on these trees.
# usage: bash fetch.sh DEST
set -euo pipefail
dest=$(realpath -m "$1"); work=$(mktemp -d); mkdir -p "$dest"; cd "$work"
apt-get download libmojolicious-perl=9.31+dfsg-1 >/dev/null
dpkg-deb -x libmojolicious-perl_9.31+dfsg-1_all.deb pkg
mkdir -p "$dest/mojolicious" && cp -r pkg/usr/share/perl5/. "$dest/mojolicious/"
apt-get source --download-only r-cran-ggplot2=3.4.1+dfsg-1 >/dev/null
mkdir -p "$dest/ggplot2" && tar xJf r-cran-ggplot2_3.4.1+dfsg.orig.tar.xz -C "$dest/ggplot2" --strip-components=1
apt-get source --download-only groovy=2.4.21-8 >/dev/null
mkdir -p "$dest/groovysh" && tar xJf groovy_2.4.21.orig.tar.xz -C "$dest/groovysh" --strip-components=3 \
    --wildcards '*/subprojects/groovy-groovysh/*'
apt-get source --download-only ocaml-re=1.10.4-1 >/dev/null
mkdir -p "$dest/ocaml-re" && tar xjf ocaml-re_1.10.4.orig.tar.bz2 -C "$dest/ocaml-re" --strip-components=1
apt-get download erlang-src=1:25.2.3+dfsg-1+deb12u4 >/dev/null
dpkg-deb -x erlang-src_*.deb otp
mkdir -p "$dest/inets" && cp -r otp/usr/lib/erlang/lib/inets-8.2.2/. "$dest/inets/"
npm pack @openzeppelin/contracts@5.0.2 --silent >/dev/null
mkdir -p "$dest/openzeppelin" && tar xzf openzeppelin-contracts-5.0.2.tgz -C "$dest/openzeppelin" --strip-components=1
rm -rf "$dest/openzeppelin/build" "$work"  # compiled artifacts (JSON), not sources
