# shellcheck shell=bash
# Shared by the portable.* tests (sourced). A failed expectation prints one
# FAIL line and the test goes on; `finish` exits 1 when any failed.
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
pass() { echo "ok: $*"; }
finish() { ((failed == 0)) || { echo "$0: FAILED" >&2; exit 1; }; echo "$0: all passed"; }
# Programs that go onto nodes, as CMake listed them for the build tree whose
# bin dir is $1 (node-programs.txt: the NRI plugin is in it once it exists).
node_programs() {
  local list
  list=$(dirname "$1")/node-programs.txt
  [[ -f $list ]] || { echo "FAIL: $list is missing: not a build-node.sh tree" >&2; return 1; }
  cat "$list"
}
# sh code that makes a stand-in runc in /tmp and a config naming it, so the
# wrapper (whose --help and --version are the runtime's) has one to exec.
# shellcheck disable=SC2034 # used by the scripts that source this
fake_runtime_setup='printf "#!/bin/sh\necho \"fake-runc \$*\"\n" >/tmp/fake-runc && chmod 755 /tmp/fake-runc &&
  printf "[runtime]\nruntimes = [\"/tmp/fake-runc\"]\n" >/tmp/config.toml && export OCI_RLIMIT_CONFIG=/tmp/config.toml'
