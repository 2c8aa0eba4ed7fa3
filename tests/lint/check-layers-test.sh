#!/usr/bin/env bash
# Shows that check-layers.sh can fail: a small tree with one file per layer
# passes, then each planted violation alone must fail with its own line.
#   check-layers-test.sh
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check-layers.sh
work=$(mktemp -d /tmp/oci-rlimit-layers-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-layers-test: FAIL: $*" >&2; exit 1; }

make_tree() {  # a clean tree: every include goes down or stays in its folder
  rm -rf "$work/tree"
  mkdir -p "$work/tree"/{lib/formats,lib/core,lib/adapters/oci,lib/effects,lib/node,cmd/hook,cmd/cli/sub,tests/testing,bench}
  cd "$work/tree"
  printf '#include "formats/t.h"\n#include <string>\n' >lib/formats/t.cc
  printf '#pragma once\n' >lib/formats/t.h
  printf '#include "core/a.h"\n#include "formats/t.h"\n#include <string>\n' >lib/core/a.cc
  printf '#pragma once\n#include "formats/t.h"\n' >lib/core/a.h
  printf '#include "core/a.h"\n#include "tests/testing/case_name.h"\n' >lib/core/a_test.cc
  printf '#include "core/a.h"\n#include "adapters/oci/s.h"\n' >lib/adapters/oci/s.cc
  printf '#pragma once\n#include "core/a.h"\n' >lib/adapters/oci/s.h
  printf '#include "core/a.h"\n#include "effects/f.h"\n#include "formats/t.h"\n' >lib/effects/f.cc
  printf '#pragma once\n' >lib/effects/f.h
  printf '#include "core/a.h"\n#include "adapters/oci/s.h"\n#include "effects/f.h"\n#include "node/n.h"\n' >lib/node/n.cc
  printf '#pragma once\n' >lib/node/n.h
  printf '#include "adapters/oci/s.h"\n#include "effects/f.h"\n#include "formats/t.h"\n#include "hook/h.h"\n#include "node/n.h"\n' >cmd/hook/h.cc
  printf '#pragma once\n' >cmd/hook/h.h
  printf '#include "cli/c.h"\n#include "nriapi/api.pb.h"\n' >cmd/cli/c.cc
  printf '#pragma once\n' >cmd/cli/c.h
  printf '#include "cli/sub/s.h"\n#include "node/n.h"\n' >cmd/cli/sub/s.cc
  printf '#pragma once\n' >cmd/cli/sub/s.h
  printf '#include "hook/h.h"\n#include "cli/c.h"\n#include "tests/harness/x.h"\n' >bench/b.cc
  cd - >/dev/null
}

make_tree
"$check" "$work/tree" >/dev/null || fail "the clean tree did not pass"

# plant FILE LINE EXPECTED: append LINE to FILE in a fresh tree; the check
# must exit 1 and print EXPECTED.
plant() {
  make_tree
  mkdir -p "$(dirname "$work/tree/$1")"
  printf '%s\n' "$2" >>"$work/tree/$1"
  if out=$("$check" "$work/tree" 2>&1); then fail "planted $2 in $1: the check passed"; fi
  [[ $out == *"$3"* ]] || fail "planted $2 in $1: expected \"$3\", got: $out"
  echo "check-layers-test: planted $2 in $1: refused"
}
plant lib/formats/t.h '#include "core/a.h"' 'lib/formats/t.h:2 includes "core/a.h": formats may not include core'
plant lib/formats/t.cc '#include "effects/f.h"' 'formats may not include effects'
plant lib/formats/t.cc '#include "cli/c.h"' 'formats may not include cli'
plant lib/core/a.h '#include "effects/f.h"' 'lib/core/a.h:3 includes "effects/f.h": core may not include effects'
plant lib/core/a.cc '#include "adapters/oci/s.h"' 'core may not include adapters'
plant lib/adapters/oci/s.h '#include "effects/f.h"' 'adapters may not include effects'
plant lib/effects/f.cc '#include "adapters/oci/s.h"' 'effects may not include adapters'
plant lib/effects/f.h '#  include "hook/h.h"' 'effects may not include hook'
plant cmd/cli/c.cc '#include "hook/h.h"' 'cli may not include hook'
plant cmd/hook/h.h '#include "cli/c.h"' 'hook may not include cli'
plant lib/core/a.h '#include "node/n.h"' 'core may not include node'
plant lib/adapters/oci/s.cc '#include "node/n.h"' 'adapters may not include node'
plant lib/effects/f.h '#include "node/n.h"' 'effects may not include node'
plant lib/node/n.cc '#include "cli/c.h"' 'node may not include cli'
plant cmd/cli/sub/s.cc '#include "cli/c.h"' 'cmd/cli/sub/s.cc:3 includes "cli/c.h": a folder below cli never includes its parent'"'"'s files'
plant lib/core/a.cc '#include "tests/testing/case_name.h"' 'product code never includes tests/'
plant cmd/hook/h.cc '#include "tests/harness/x.h"' 'product code never includes tests/'
plant lib/misc/m.cc '#include "core/a.h"' 'lib/misc/m.cc is under lib/ but in no layer'
echo "check-layers-test: ok"
