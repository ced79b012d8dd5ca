#!/usr/bin/env bash
# Installs dependencies (scripts/deps.sh) and builds linerate into build/ with meson + ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
if [[ ! -f build/build.ninja ]]; then
    meson setup build --buildtype=release
fi
ninja -C build
