#!/usr/bin/env bash
# Every shell block in README.md is covered: either CI runs it verbatim, or a
# marker right before it names the tests that check it against the files.
#  - The opening block (README's two commands) is run by CI as written:
#    .ci/run runs the test command, tests/fresh-root/run.sh runs both in a
#    fresh Debian 12 root, each reading README through .ci/readme-command.
#  - Any other ```sh/```bash/```shell/```console block must follow (as the
#    last non-blank line before its fence) a marker
#      <!-- checked-against-files: FILE TEST [TEST...] -->
#    naming a test file and the tests in it that check the block (when a
#    command cannot run in CI: kubectl, systemctl, a docker build); FILE
#    must exist and hold each TEST. Every packaged path the block reads
#    (/usr/bin/..., /usr/lib/oci-rlimit/..., /usr/share/oci-rlimit/...) must
#    be one DebPackageTest finds in the installed .deb.
#   tests/readme/shell_blocks_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: shell_blocks_test.sh SOURCE_DIR}" && pwd)
readme=$src/README.md
packaged=$src/tests/integration/packaging_test.cc
failures=0
fail() { echo "shell_blocks_test: FAIL: README.md:$*" >&2; failures=$((failures + 1)); }

# The opening block is what CI runs.
"$src/.ci/readme-command" 1 "$readme" >/dev/null
for f in .ci/run tests/fresh-root/run.sh; do
  grep -q 'readme-command 2' "$src/$f" || fail "1: $f does not run README's test command"
done
grep -q 'run-demo.sh' "$src/tests/fresh-root/run.sh" || fail "1: the fresh-root step skips the demo"
grep -q 'readme-command 1' "$src/tests/readme/run-demo.sh" || fail "1: run-demo.sh skips README"

blocks=0 marked=0
last='' in_block=0 start=0 body=''
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
    else
      body+=$line$'\n'
    fi
    continue
  fi
  if [[ $trimmed =~ ^\`\`\`(sh|bash|shell|console)$ ]]; then
    in_block=1 start=$lineno body='' blocks=$((blocks + 1))
    if ((lineno == 3)); then  # the opening block, run by CI
      last='' && continue
    fi
    if [[ $last =~ ^\<!--\ checked-against-files:\ ([^ ]+)\ (.+)\ --\>$ ]]; then
      file=${BASH_REMATCH[1]} tests=${BASH_REMATCH[2]}
      if [[ ! -f $src/$file ]]; then
        fail "$lineno: the marker names $file, which does not exist"
      else
        for t in $tests; do
          grep -qF "$t" "$src/$file" || fail "$lineno: $file has no test $t"
        done
        marked=$((marked + 1))
      fi
    else
      fail "$lineno: a shell block that CI does not run and no marker covers" \
        "(<!-- checked-against-files: FILE TEST... --> on the line before it)"
    fi
    continue
  fi
  [[ -n $trimmed ]] && last=$trimmed
done <"$readme"
((in_block == 0)) || fail "$start: a shell block that never closes"
((blocks > 1)) || fail "1: found $blocks shell blocks; the parser is broken"
echo "shell_blocks_test: $blocks shell blocks: 1 run by CI, $marked checked against files," \
  "$failures failure(s)"
((failures == 0))
