#!/usr/bin/env bash
# Every shell block in README.md is covered: either CI runs it verbatim, or
# markers right before it name the tests that check it against the files, and
# the block's load-bearing strings, which must stay in the block and in the test.
#  - The opening block (README's two commands) is run by CI as written:
#    .ci/run runs the test command, tests/fresh-root/run.sh runs both in a
#    fresh Debian 12 root, each reading README through .ci/readme-command.
#  - Any other ```sh/```bash/```shell/```console block must follow (as the
#    last non-blank lines before its fence) one or more markers
#      <!-- checked-against-files: FILE TEST [TEST...] | KEY [| KEY...] -->
#    naming a test file, the tests in it that check the block (when a
#    command cannot run in CI: kubectl, systemctl, a docker build), and at
#    least one KEY: a string the block relies on (a config write, a path, a
#    flag). FILE must exist and hold each TEST (as ", TEST)") and each KEY
#    (the test reads that line from README, or uses the same path or value);
#    the block must hold each KEY, so deleting a load-bearing line fails
#    here. Every packaged path the block reads (/usr/bin/...,
#    /usr/lib/oci-rlimit/..., /usr/share/oci-rlimit/...) must be one
#    DebPackageTest finds in the .deb.
#   tests/readme/shell_blocks_test.sh SOURCE_DIR [README]
#  (README defaults to SOURCE_DIR/README.md; shell_blocks_refuses_planted.sh
#  passes planted copies.)
set -euo pipefail
src=$(cd "${1:?usage: shell_blocks_test.sh SOURCE_DIR [README]}" && pwd)
readme=${2:-$src/README.md}
packaged=$src/tests/integration/packaging_test.cc
failures=0
fail() { echo "shell_blocks_test: FAIL: README.md:$*" >&2; failures=$((failures + 1)); }
marker_re='^<!-- checked-against-files: (.+) -->$'

# The opening block is what CI runs.
"$src/.ci/readme-command" 1 "$readme" >/dev/null
for f in .ci/run tests/fresh-root/run.sh; do
  grep -q 'readme-command 2' "$src/$f" || fail "1: $f does not run README's test command"
done
grep -q 'run-demo.sh' "$src/tests/fresh-root/run.sh" || fail "1: the fresh-root step skips the demo"
grep -q 'readme-command 1' "$src/tests/readme/run-demo.sh" || fail "1: run-demo.sh skips README"

# One marker (its text between "checked-against-files: " and " -->") against
# the block it covers, which starts at line $2 with body $3.
check_marker() {
  local inner=$1 at=$2 body=$3 file tests key
  local -a parts=()
  while [[ $inner == *' | '* ]]; do
    parts+=("${inner%% | *}")
    inner=${inner#* | }
  done
  parts+=("$inner")
  read -r file tests <<<"${parts[0]}"
  if [[ -z $tests ]]; then
    fail "$at: the marker names no test"
  fi
  if ((${#parts[@]} < 2)); then
    fail "$at: the marker names no KEY (a string the block relies on: | KEY)"
  fi
  if [[ ! -f $src/$file ]]; then
    fail "$at: the marker names $file, which does not exist"
    return
  fi
  for t in $tests; do
    grep -qF -- ", $t)" "$src/$file" || fail "$at: $file has no test $t"
  done
  for key in "${parts[@]:1}"; do
    [[ -n $key ]] || { fail "$at: an empty KEY in the marker"; continue; }
    [[ $body == *"$key"* ]] || fail "$at: the block lost \"$key\" (its marker's KEY)"
    grep -qF -- "$key" "$src/$file" || fail "$at: $file does not hold \"$key\" (a KEY)"
  done
}

blocks=0 marked=0
in_block=0 start=0 body=''
markers=() block_markers=()
lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  trimmed=${line#"${line%%[![:space:]]*}"}
  if ((in_block)); then
    if [[ $trimmed == '```' ]]; then
      in_block=0
      # Packaged paths the block reads (a path after `>` is one it writes).
      while read -r path; do
        [[ -z $path ]] && continue
        grep -qF "\"$path\"" "$packaged" ||
          fail "$start: $path is not among the files DebPackageTest checks in the .deb"
      done < <(printf '%s\n' "$body" | sed -E 's/>+ *\/[^ ]*//g' |
        grep -oE '/usr/(bin|lib/oci-rlimit|share/oci-rlimit)/[A-Za-z0-9._/-]+' | sort -u)
      for m in "${block_markers[@]}"; do check_marker "$m" "$start" "$body"; done
    else
      body+=$line$'\n'
    fi
    continue
  fi
  if [[ $trimmed =~ ^\`\`\`(sh|bash|shell|console)$ ]]; then
    in_block=1 start=$lineno body='' blocks=$((blocks + 1)) block_markers=()
    if ((lineno == 3)); then  # the opening block, run by CI
      markers=() && continue
    fi
    if ((${#markers[@]} == 0)); then
      fail "$lineno: a shell block that CI does not run and no marker covers" \
        "(<!-- checked-against-files: FILE TEST... | KEY... --> on the line before it)"
    else
      block_markers=("${markers[@]}")
      marked=$((marked + 1))
    fi
    markers=()
    continue
  fi
  if [[ $trimmed =~ $marker_re ]]; then
    markers+=("${BASH_REMATCH[1]}")
  elif [[ -n $trimmed ]]; then
    markers=()
  fi
done <"$readme"
((in_block == 0)) || fail "$start: a shell block that never closes"
((blocks > 1)) || fail "1: found $blocks shell blocks; the parser is broken"
echo "shell_blocks_test: $blocks shell blocks: 1 run by CI, $marked checked against files," \
  "$failures failure(s)"
((failures == 0))
