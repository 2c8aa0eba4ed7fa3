#!/usr/bin/env bash
# Shows that the function-size limit in the project's .clang-tidy can fail:
# in a temp tree under a copy of that .clang-tidy, a function of 61 lines is
# refused and one of 60 passes; under a copy of bench/.clang-tidy (code that
# is not product code opts out) the 61-line one passes too. clang-tidy counts
# a function's lines from the line after its opening brace through the line
# of its closing brace, so the 61-line function has 60 lines of statements.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tidy=${CLANG_TIDY:-clang-tidy}
work=$(mktemp -d /tmp/oci-rlimit-function-size-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-function-size-test: FAIL: $*" >&2; exit 1; }
# planted NAME LINES: a function NAME of LINES lines by clang-tidy's count.
planted() {
  echo "int $1(int x) {"
  for ((i = 1; i < $2 - 1; i++)); do echo "  x += $i;"; done
  echo "  return x;"
  echo "}"
}
run() { "$tidy" --quiet "$1" -- -std=c++20 2>&1; }
mkdir -p "$work/tree/lib" "$work/tree/bench"
cp "$src/.clang-tidy" "$work/tree/.clang-tidy"
cp "$src/bench/.clang-tidy" "$work/tree/bench/.clang-tidy"
planted SixtyOne 61 >"$work/tree/lib/long.cc"
planted Sixty 60 >"$work/tree/lib/short.cc"
planted SixtyOne 61 >"$work/tree/bench/long.cc"
[[ $(wc -l <"$work/tree/lib/long.cc") == 62 ]] || fail "the planted function is not 61 lines after its brace"

out=$(run "$work/tree/lib/long.cc") && fail "a 61-line function passed: $out"
[[ $out == *"function 'SixtyOne' exceeds recommended size/complexity thresholds [readability-function-size"* ]] ||
  fail "unexpected output for the 61-line function: $out"
[[ $out == *"61 lines including whitespace and comments (threshold 60)"* ]] ||
  fail "the 61-line function was not counted as 61 lines: $out"
echo "check-function-size-test: a 61-line function: refused"
out=$(run "$work/tree/lib/short.cc") || fail "a 60-line function was refused: $out"
echo "check-function-size-test: a 60-line function: accepted"
out=$(run "$work/tree/bench/long.cc") || fail "bench/ does not opt out of the limit: $out"
echo "check-function-size-test: a 61-line function under bench/: accepted"
echo "check-function-size-test: ok"
