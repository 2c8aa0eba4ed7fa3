#!/usr/bin/env bash
# Shows that check-sizes.sh can fail: a small tree passes, then a new file of
# 401 lines fails, and a listed file that grew past its ceiling fails.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check-sizes.sh
work=$(mktemp -d /tmp/oci-rlimit-sizes-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-sizes-test: FAIL: $*" >&2; exit 1; }
lines() { seq "$1" | sed 's/^/\/\/ /'; }
make_tree() {
  rm -rf "$work/tree"; mkdir -p "$work/tree/lib/core" "$work/tree/cmd/cli"
  lines 400 >"$work/tree/lib/core/a.cc"
  lines 450 >"$work/tree/cmd/cli/big.cc"
  lines 900 >"$work/tree/cmd/cli/big_test.cc"
  printf 'cmd/cli/big.cc 450\n' >"$work/list"
}
make_tree
"$check" "$work/tree" "$work/list" >/dev/null || fail "the clean tree did not pass"
lines 401 >"$work/tree/lib/core/new.cc"
out=$("$check" "$work/tree" "$work/list" 2>&1) && fail "a new 401-line file passed"
[[ $out == *"lib/core/new.cc has 401 lines (limit 400)"* ]] || fail "unexpected output: $out"
echo "check-sizes-test: a new 401-line file: refused"
make_tree
lines 451 >"$work/tree/cmd/cli/big.cc"
out=$("$check" "$work/tree" "$work/list" 2>&1) && fail "a listed file that grew passed"
[[ $out == *"cmd/cli/big.cc has 451 lines, more than the 450"* ]] || fail "unexpected output: $out"
echo "check-sizes-test: a listed file grown by one line: refused"
echo "check-sizes-test: ok"
