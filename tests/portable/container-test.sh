#!/usr/bin/env bash
# portable.amd64_runc_container: real runc containers on this host
# start with the portable (static) hook and the portable wrapper, and the
# process inside reads the configured limit from /proc/self/limits: the runc
# cases of hook_integration_test and runtime_integration_test, with
# OCI_RLIMIT_TEST_BIN_DIR pointing the harness at the portable programs. And
# the least-privilege helper with libcap linked static: all of
# prlimit_helper_integration_test (it drops to CAP_SYS_RESOURCE alone).
#   tests/portable/container-test.sh PORTABLE_BINDIR HOOK_TEST RUNTIME_TEST HELPER_TEST
set -euo pipefail
bindir=$(readlink -f "$1")
for p in oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper; do
  if readelf -lW "$bindir/$p" | grep -q INTERP; then
    echo "FAIL: $bindir/$p is not the static portable build" >&2
    exit 1
  fi
done
export OCI_RLIMIT_TEST_BIN_DIR=$bindir
"$2" --gtest_filter='Runtimes/HookTest.*/runc' --gtest_brief=1
"$3" --gtest_filter='Runtimes/RuntimeTest.*/runc' --gtest_brief=1
"$4" --gtest_brief=1
