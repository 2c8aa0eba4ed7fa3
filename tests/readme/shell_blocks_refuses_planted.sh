#!/usr/bin/env bash
# Shows that shell_blocks_test.sh can fail: README.md as it is passes, then a
# planted copy of it fails with each of
#  (a) a shell block that CI does not run and no marker covers,
#  (b) a marker that names a test its file does not have,
#  (c) the docker runtime-mode block without its config write,
#  (d) a marker with no KEY.
#   tests/readme/shell_blocks_refuses_planted.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: shell_blocks_refuses_planted.sh SOURCE_DIR}" && pwd)
check=$src/tests/readme/shell_blocks_test.sh
work=$(mktemp -d /tmp/oci-rlimit-shell-blocks-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "shell_blocks_refuses_planted: FAIL: $*" >&2; exit 1; }
"$check" "$src" "$src/README.md" >/dev/null 2>&1 || fail "README.md itself does not pass"

# refused NAME WANT SED_SCRIPT: README.md edited by SED_SCRIPT must fail with WANT.
refused() {
  local name=$1 want=$2 out
  sed -E "$3" "$src/README.md" >"$work/README.md"
  cmp -s "$src/README.md" "$work/README.md" && fail "$name: the plant changed nothing"
  out=$("$check" "$src" "$work/README.md" 2>&1) && fail "$name: passed: $out"
  [[ $out == *"$want"* ]] || fail "$name: unexpected output: $out"
  echo "shell_blocks_refuses_planted: $name: refused"
}
# shellcheck disable=SC2016 # a sed script: $a appends
refused "an unmarked block" "a shell block that CI does not run and no marker covers" \
  '$a\\n```sh\necho planted\n```'
refused "a missing test" "tests/integration/docker_test.cc has no test NoSuchTest" \
  's/(docker_test\.cc) ReadmeQuickStartRunsAsWritten/\1 NoSuchTest/'
refused "docker without its config" 'the block lost ">/etc/oci-rlimit/config.toml"' \
  '/^mkdir -p \/etc\/oci-rlimit && echo .*>\/etc\/oci-rlimit\/config.toml$/d'
refused "a marker with no KEY" "the marker names no KEY" \
  's/(HelperAsAZeroConfigHookDegradesRootlessAndStillFailsRootful) \|.* -->$/\1 -->/'
echo "shell_blocks_refuses_planted: ok"
