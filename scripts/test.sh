#!/usr/bin/env bash
# Installs what the tests need (scripts/install-deps.sh all: the build tools,
# runc, crun, podman, docker.io, containerd, busybox, clang, lint and man
# tools), builds, and runs every test:
#  1. the unit suite once more under ASan and UBSan (build-asan/);
#  2. each libFuzzer target for a bounded time (fuzz/run.sh, build-fuzz/);
#  3. the portable node builds, once each: build-portable-amd64/ and
#     build-portable-arm64/ (scripts/build-node.sh; the arm64 one with its
#     unit tests), which the portable.* tests below use;
#  4. everything through ctest (build/): unit tests, lint, portable, and
#     integration tests that start real runc, crun, podman, dockerd and
#     containerd (each test starts its own daemons under a temp dir).
#   scripts/test.sh [ctest args...]     e.g. scripts/test.sh -L unit
# Environment:
#   OCI_RLIMIT_TEST_PHASES   which of "asan fuzz portable ctest" to run (default: all four)
#   OCI_RLIMIT_BUILD_TARGETS what phase 3 builds (default: everything), e.g.
#                            "unit_tests packaging_integration_test"
#   OCI_RLIMIT_FUZZ_SECONDS  seconds per fuzz target (default 30)
#   OCI_RLIMIT_OLD_BIN_DIR   set: the earlier commit's programs for the lifecycle
#                            test's upgrade are built there (scripts/build-at-commit.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
phases=" ${OCI_RLIMIT_TEST_PHASES:-asan fuzz portable ctest} "
for p in $phases; do
  case $p in asan | fuzz | portable | ctest) ;; *)
    echo "test.sh: OCI_RLIMIT_TEST_PHASES: unknown phase \"$p\" (asan, fuzz, portable, ctest)" >&2; exit 2 ;;
  esac
done
# Each phase's wall time goes to the output ("test.sh: phase NAME: N s").
start=$SECONDS
t0=$SECONDS
phase_done() { echo "test.sh: phase $1: $((SECONDS - t0)) s ($((SECONDS - start)) s so far)"; t0=$SECONDS; }
scripts/install-deps.sh all
phase_done install-deps
# Here every runtime was just installed, so a missing one is a failure.
export OCI_RLIMIT_REQUIRE_RUNTIMES="${OCI_RLIMIT_REQUIRE_RUNTIMES:-1}"
# One compiler cache for this clone's trees: build-portable-amd64/ and build/
# compile the same product sources with the same flags, so build/ reuses them
# (paths relative to the clone, the build directory's name left out of the
# hash). It lives in the clone (build-ccache/), so a fresh clone starts cold.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER-ccache}"
  export CCACHE_DIR="${CCACHE_DIR:-$PWD/build-ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR-1}"
fi
ccache_stats() {  # one line: what the cache saved so far
  if [[ ${CMAKE_CXX_COMPILER_LAUNCHER:-} == *ccache* ]]; then
    ccache --print-stats 2>/dev/null | awk -F'\t' '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit|cache_miss)$/ {v[$1]=$2}
      END {printf "test.sh: ccache: %d hits, %d misses so far\n", v["direct_cache_hit"] + v["preprocessed_cache_hit"], v["cache_miss"]}' || true
  fi
}

if [[ $phases == *" asan "* ]]; then
  echo "== unit tests under ASan+UBSan"
  # Debug (-O0 -g, assertions on): the sanitizers check the same at -O0, and
  # the tree builds in about a third of RelWithDebInfo's time.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOCI_RLIMIT_SANITIZE=ON \
    -DOCI_RLIMIT_WERROR=ON -DOCI_RLIMIT_NRI=ON >/dev/null
  cmake --build build-asan --target unit_tests >/dev/null
  (cd build-asan && ctest -L unit -j "$(nproc)" --output-on-failure)
  phase_done asan
fi

if [[ $phases == *" fuzz "* ]]; then
  echo "== fuzzing, ${OCI_RLIMIT_FUZZ_SECONDS:-30} s per target"
  fuzz/run.sh "${OCI_RLIMIT_FUZZ_SECONDS:-30}"
  phase_done fuzz
fi

if [[ $phases == *" portable "* ]]; then
  echo "== portable node builds (amd64, arm64 cross)"
  scripts/build-node.sh amd64 build-portable-amd64
  scripts/build-node.sh --unit-tests arm64 build-portable-arm64
  phase_done portable
  ccache_stats
fi

if [[ $phases == *" ctest "* ]]; then
  echo "== all tests"
  # shellcheck disable=SC2086 # a list of target names
  scripts/build.sh ${OCI_RLIMIT_BUILD_TARGETS:-}
  phase_done build
  ccache_stats
  # The lifecycle test's upgrade starts from an earlier commit's plugin and
  # wrapper (tests/lifecycle/lifecycle_upgrade.h): built where
  # OCI_RLIMIT_OLD_BIN_DIR says (.ci/run sets it), unless already there.
  # A clone without that commit (a shallow one) cannot build it: the upgrade
  # is then left out, said in one line here and one in the lifecycle tests.
  if [[ -n ${OCI_RLIMIT_OLD_BIN_DIR:-} ]]; then
    if git cat-file -e '8f535b5^{commit}' 2>/dev/null; then
      scripts/build-at-commit.sh 8f535b5 "$OCI_RLIMIT_OLD_BIN_DIR"
      phase_done old-build
    else
      echo "test.sh: commit 8f535b5 is not in this clone (shallow?): the lifecycle test's upgrade is left out"
      unset OCI_RLIMIT_OLD_BIN_DIR
    fi
  fi
  rc=0
  # In parallel where allowed: the integration tests are RUN_SERIAL (each
  # alone), the unit and lint tests share the cores.
  (cd build && ctest -j "$(nproc)" --output-on-failure "$@") || rc=$?
  phase_done ctest
  exit "$rc"
fi
