#!/usr/bin/env bash
# Stands in for a portable.* test whose tools were missing when CMake ran:
# under CI (OCI_RLIMIT_REQUIRE_RUNTIMES=1) that is a failure, elsewhere a skip.
#   tests/portable/missing.sh TEST WHAT...
test=$1; shift
echo "$test: not run: $* (scripts/install-deps.sh all installs it; then re-run cmake)"
[[ ${OCI_RLIMIT_REQUIRE_RUNTIMES:-} == 1 ]] && exit 1
exit 77
