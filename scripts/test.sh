#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test through ctest:
# unit tests, lint, and integration tests that start real runc, crun,
# podman, dockerd and containerd (each test starts its own daemons).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh all
scripts/build.sh
# Here every runtime was just installed, so a missing one is a failure.
export OCI_RLIMIT_REQUIRE_RUNTIMES="${OCI_RLIMIT_REQUIRE_RUNTIMES:-1}"
cd build
ctest --output-on-failure "$@"
