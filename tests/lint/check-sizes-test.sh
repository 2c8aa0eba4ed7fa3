#!/usr/bin/env bash
# Shows that check-sizes.sh can fail: a small tree passes, then a new file of
# 401 lines fails, a listed file that grew past its ceiling fails, and so do
# a folder of 3,501 lines and one of 26 .cc files (their subfolders and tests
# not counted).
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
make_tree
mkdir -p "$work/tree/lib/core/sub"
for i in 1 2 3 4 5 6 7 8; do lines 350 >"$work/tree/lib/core/f$i.h"; done  # 400 + 2,800 + 300
lines 300 >"$work/tree/lib/core/g.cc"
lines 399 >"$work/tree/lib/core/sub/h.cc"
lines 399 >"$work/tree/lib/core/g_test.cc"
"$check" "$work/tree" "$work/list" >/dev/null || fail "a folder of 3,500 lines did not pass"
lines 301 >"$work/tree/lib/core/g.cc"
out=$("$check" "$work/tree" "$work/list" 2>&1) && fail "a folder of 3,501 lines passed"
[[ $out == *"folder lib/core has 3501 lines of product code (limit 3500)"* ]] || fail "unexpected output: $out"
echo "check-sizes-test: a folder of 3,501 lines: refused"
make_tree
mkdir -p "$work/tree/cmd/cli/sub"
for i in $(seq 23); do lines 1 >"$work/tree/cmd/cli/c$i.cc"; done  # with big.cc: 24
lines 1 >"$work/tree/cmd/cli/sub/s.cc"
lines 1 >"$work/tree/cmd/cli/c_test.cc"
lines 1 >"$work/tree/cmd/cli/c24.cc"
"$check" "$work/tree" "$work/list" >/dev/null || fail "a folder of 25 .cc files did not pass"
lines 1 >"$work/tree/cmd/cli/c25.cc"
out=$("$check" "$work/tree" "$work/list" 2>&1) && fail "a folder of 26 .cc files passed"
[[ $out == *"folder cmd/cli has 26 .cc files (limit 25)"* ]] || fail "unexpected output: $out"
echo "check-sizes-test: a folder of 26 .cc files: refused"
echo "check-sizes-test: ok"
