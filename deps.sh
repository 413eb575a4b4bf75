#!/usr/bin/env bash
# deps.sh: installs the Debian 12 packages decbench needs, if any is missing.
set -euo pipefail
pkgs="build-essential cmake pkg-config libopenblas-dev libsqlite3-dev libjansson-dev libpcre2-dev nettle-dev gnuplot-nox python3 help2man parallel"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
