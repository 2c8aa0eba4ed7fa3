#!/usr/bin/env bash
# README's two commands, exactly as README.md writes them (read from the file
# by .ci/readme-command, not copied here):
#  - every script they name is executable in git (mode 100755 at HEAD);
#  - .ci/run runs README's test command line (its --dry-run prints it);
#  - the demo line runs verbatim in a clean clone of HEAD, and its output
#    shows the failing and then the succeeding mlock line (tests/readme/run-demo.sh,
#    the check CI's fresh-root step shares), and it leaves no temp dir, runc
#    state or mount behind.
#   tests/readme/readme_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: readme_test.sh SOURCE_DIR}" && pwd)
fail() { echo "readme_test: FAIL: $*" >&2; exit 1; }
git -C "$src" rev-parse --verify -q HEAD >/dev/null || fail "$src is not a git clone"

demo=$("$src/.ci/readme-command" 1 "$src/README.md")
test_line=$("$src/.ci/readme-command" 2 "$src/README.md")
echo "README command 1: $demo"
echo "README command 2: $test_line"
[[ $demo == scripts/demo.sh* ]] || fail "README's first command is not scripts/demo.sh: $demo"
[[ $test_line == scripts/test.sh* ]] || fail "README's second command is not scripts/test.sh"

for line in "$demo" "$test_line"; do
  script=${line%% *}
  mode=$(git -C "$src" ls-tree HEAD -- "$script" | awk '{print $1}')
  [[ $mode == 100755 ]] || fail "$script is mode ${mode:-missing} in git at HEAD, not 100755"
done

ci_line=$("$src/.ci/run" --dry-run)
[[ $ci_line == "$test_line" ]] || fail ".ci/run runs \"$ci_line\", README says \"$test_line\""

work=$(mktemp -d /tmp/oci-rlimit-readme-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
before=$(find /tmp -maxdepth 1 -name "oci-rlimit-demo.*" | sort)
git clone -q "$src" "$work/clone"
echo "clean clone of $(git -C "$work/clone" rev-parse --short HEAD) in $work/clone"
"$src/tests/readme/run-demo.sh" "$work/clone" "$work/demo.out" || fail "README's first command (above)"
after=$(find /tmp -maxdepth 1 -name "oci-rlimit-demo.*" | sort)
[[ $before == "$after" ]] || fail "the demo left temp dirs behind: $after"
! grep -q oci-rlimit-demo /proc/self/mountinfo || fail "the demo left a mount behind"
echo "readme_test: ok"
