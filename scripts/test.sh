#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test:
#  1. the unit suite once more under ASan and UBSan (build-asan/);
#  2. each libFuzzer target for a bounded time (fuzz/run.sh, build-fuzz/);
#  3. the portable node builds, once each: build-portable-amd64/ and
#     build-portable-arm64/ (scripts/build-node.sh; the arm64 one with its
#     unit tests), which the portable.* tests below use;
#  4. everything through ctest (build/): unit tests, lint, portable, and
#     integration tests that start real runc, crun, podman, dockerd and
#     containerd (each test starts its own daemons under a temp dir).
#   scripts/test.sh [ctest args...]     e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh all
# Here every runtime was just installed, so a missing one is a failure.
export OCI_RLIMIT_REQUIRE_RUNTIMES="${OCI_RLIMIT_REQUIRE_RUNTIMES:-1}"

echo "== unit tests under ASan+UBSan"
cmake -S . -B build-asan -G Ninja -DOCI_RLIMIT_SANITIZE=ON -DOCI_RLIMIT_WERROR=ON >/dev/null
cmake --build build-asan --target unit_tests >/dev/null
(cd build-asan && ctest -L unit --output-on-failure)

echo "== fuzzing, ${OCI_RLIMIT_FUZZ_SECONDS:-30} s per target"
fuzz/run.sh "${OCI_RLIMIT_FUZZ_SECONDS:-30}"

echo "== portable node builds (amd64, arm64 cross)"
scripts/build-node.sh amd64 build-portable-amd64
scripts/build-node.sh --unit-tests arm64 build-portable-arm64

echo "== all tests"
scripts/build.sh
cd build
ctest --output-on-failure "$@"
