#!/usr/bin/env bash
# Configures and builds into build/ (warnings are errors): everything, or the
# targets named.   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
# The NRI plugin is always part of this build (the demo alone leaves it out),
# so a missing protobuf or NRI api.proto fails here, and CI with it, instead of
# an old build/ cache with OCI_RLIMIT_NRI=OFF skipping the plugin silently.
cmake -S . -B build -G Ninja -DOCI_RLIMIT_WERROR=ON -DOCI_RLIMIT_NRI=ON >/dev/null
if (($#)); then
  cmake --build build --target "$@"
else
  cmake --build build
fi
