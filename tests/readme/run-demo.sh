#!/usr/bin/env bash
# Runs README's first command (the demo) exactly as README.md writes it (read
# by .ci/readme-command 1, not copied here) in CLONE, prints its output, and
# passes only if the command exits 0 and its output holds the failing mlock
# line and then the succeeding one, in that order. The one check of the demo
# shared by tests/readme/readme_test.sh (a clean clone on this machine) and
# tests/fresh-root/run.sh (a fresh Debian 12 root, before the test command).
#   tests/readme/run-demo.sh CLONE [OUTPUT_FILE]
set -euo pipefail
clone=$(cd "${1:?usage: run-demo.sh CLONE [OUTPUT_FILE]}" && pwd)
fail() { echo "run-demo: FAIL: $*" >&2; exit 1; }
demo=$("$clone/.ci/readme-command" 1 "$clone/README.md")
[[ $demo == scripts/demo.sh* ]] || fail "README's first command is not scripts/demo.sh: $demo"
out=${2:-$(mktemp /tmp/oci-rlimit-run-demo.XXXXXX)}
[[ -n ${2:-} ]] || trap 'rm -f "$out"' EXIT
echo "run-demo: + $demo"
start=$SECONDS
set +e
(cd "$clone" && bash -c "$demo") 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
echo "run-demo: README's first command took $((SECONDS - start)) s (exit $rc)"
((rc == 0)) || fail "README's first command exited $rc"
lines=$(grep -x -e 'mlock 4 MiB as uid 1000: failed: Cannot allocate memory' \
  -e 'mlock 4 MiB as uid 1000: ok' "$out" || true)
expected=$'mlock 4 MiB as uid 1000: failed: Cannot allocate memory\nmlock 4 MiB as uid 1000: ok'
[[ $lines == "$expected" ]] ||
  fail "the output lacks the failing mlock line without oci-rlimit, then the working one with it"
echo "run-demo: ok (mlock failed without oci-rlimit, worked with it)"
