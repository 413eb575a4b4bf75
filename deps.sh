#!/usr/bin/env bash
# deps.sh: installs the Debian 12 packages decbench needs, if any is missing. With --train, also
# python3-torch and python3-numpy, which only train/ (the optional head training) uses.
set -euo pipefail
# clang + libclang-rt-14-dev: the libFuzzer targets (tests/fuzz_*.c) test.sh runs briefly.
pkgs="build-essential cmake pkg-config libopenblas-dev libsqlite3-dev libjansson-dev libpcre2-dev nettle-dev gnuplot-nox python3 help2man parallel clang libclang-rt-14-dev"
case "${1:-}" in
    "") ;;
    --train) pkgs="$pkgs python3-torch python3-numpy" ;;
    *) echo "usage: deps.sh [--train]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
