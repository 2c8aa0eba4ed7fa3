#!/usr/bin/env bash
# Configures and builds into build/ (warnings are errors): everything, or the
# targets named.   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DOCI_RLIMIT_WERROR=ON >/dev/null
if (($#)); then
  cmake --build build --target "$@"
else
  cmake --build build
fi
