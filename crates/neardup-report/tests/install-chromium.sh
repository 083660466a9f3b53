#!/usr/bin/env bash
# Installs Debian's Chromium for the headless rendering test (crates/neardup-report/tests/render.rs).
# Idempotent: quick when chromium is already there. Needs root (or sudo) and apt-get.
set -euo pipefail

if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then
    echo "chromium already installed: $(/usr/bin/chromium --version)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-chromium.sh: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium installed: $(/usr/bin/chromium --version)"
