#!/usr/bin/env bash
# The portable build: the programs that go onto nodes, fully static, for
# amd64 or arm64 (cross, with Debian 12's g++-aarch64-linux-gnu).
#   scripts/build-node.sh [--unit-tests|--all-unit-tests] amd64|arm64 OUTDIR
# OUTDIR is a CMake build tree (-DOCI_RLIMIT_PORTABLE=ON); the programs land in
# OUTDIR/bin: oci-rlimit-hook, oci-rlimit-runtime, oci-prlimit-helper,
# oci-rlimit, and oci-rlimit-nri when the tree has it. --unit-tests also builds
# the pure-logic unit tests (formats_unit_test, core_unit_test, oci_unit_test: what the language,
# config, policy and spec code computes, where an architecture could differ),
# --all-unit-tests every unit test; OUTDIR/unit-tests.txt lists the ones built.
# For arm64 they run under qemu-aarch64-static (tests/portable/arm64-test.sh).
# CI builds arm64 with --unit-tests: the rest would double the cross build's
# cold time on 2 cores.
# Fails when the linker warns about anything (a static glibc's NSS/dlopen
# warnings included) and when scripts/check-portable.sh finds a binary that is
# not portable. Incremental: a second run rebuilds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
unit_tests=()
case "${1:-}" in
  --unit-tests) unit_tests=(formats_unit_test core_unit_test oci_unit_test); shift ;;
  --all-unit-tests) unit_tests=(unit_tests); shift ;;
esac
(($# == 2)) || { echo "usage: $0 [--unit-tests|--all-unit-tests] amd64|arm64 OUTDIR" >&2; exit 2; }
arch=$1 out=$2
host=$(dpkg --print-architecture 2>/dev/null || uname -m)
args=(-DOCI_RLIMIT_PORTABLE=ON -DOCI_RLIMIT_WERROR=ON -DOCI_RLIMIT_NRI=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "$arch" in
  amd64)
    [[ $host == amd64 || $host == x86_64 ]] || { echo "build-node: amd64 builds run on an amd64 host (this is $host)" >&2; exit 2; }
    ;;
  arm64)
    command -v aarch64-linux-gnu-g++ >/dev/null \
      || { echo "build-node: aarch64-linux-gnu-g++ is not installed (scripts/install-deps.sh portable)" >&2; exit 1; }
    root=$(scripts/fetch-arm64-deps.sh)
    args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64.cmake" -DOCI_RLIMIT_ARM64_ROOT="$root")
    ;;
  *) echo "build-node: ARCH \"$arch\" is not amd64 or arm64" >&2; exit 2 ;;
esac
if ((${#unit_tests[@]})); then args+=(-DOCI_RLIMIT_BUILD_TESTS=ON); else args+=(-DOCI_RLIMIT_BUILD_TESTS=OFF); fi
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-$(command -v ccache || true)}

mkdir -p "$out"
cmake -S . -B "$out" -G Ninja "${args[@]}" >"$out/configure.log" 2>&1 \
  || { cat "$out/configure.log" >&2; echo "build-node: configure failed" >&2; exit 1; }

# node-programs (cmake/Portable.cmake): the four programs, and the NRI plugin
# when its target exists; node-programs.txt lists them for check-portable.sh.
cmake --build "$out" --target node-programs >"$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log" >&2; echo "build-node: build failed (log: $out/build.log)" >&2; exit 1; }
# A linker warning about a static glibc means a function that loads shared
# libraries at run time (NSS, iconv, dlopen): not portable. (The unit tests
# link gtest, which uses getaddrinfo; they never go onto a node.)
if grep -E 'statically linked applications requires|warning: Using' "$out/build.log" >&2; then
  echo "build-node: the static link warns (above); that code would break on nodes" >&2
  exit 1
fi
rm -f "$out/unit-tests.txt"
if ((${#unit_tests[@]})); then
  cmake --build "$out" --target "${unit_tests[@]}" >"$out/build-tests.log" 2>&1 \
    || { tail -40 "$out/build-tests.log" >&2; echo "build-node: unit tests failed to build (log: $out/build-tests.log)" >&2; exit 1; }
  if [[ ${unit_tests[0]} == unit_tests ]]; then
    ninja -C "$out" -t query tests/unit_tests | sed -n 's/^ *\(.*_unit_test\)$/\1/p' | xargs -n1 basename >"$out/unit-tests.txt"
  else
    printf '%s\n' "${unit_tests[@]}" >"$out/unit-tests.txt"
  fi
fi
scripts/check-portable.sh --arch "$arch" --tree "$out"
