#!/usr/bin/env bash
# portable.check_portable: scripts/check-portable.sh (which
# build-node.sh runs) passes the portable builds and fails what is not
# portable: the Debian 12 build (glibc 2.3x symbols, libcap.so.2), the wrong
# architecture, a static program with an NSS lookup, an object calling one.
#   tests/portable/check-test.sh PORTABLE_AMD64_DIR DYNAMIC_BINDIR [PORTABLE_ARM64_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=tests/portable/common.sh
. "$here/common.sh"
amd64=$(readlink -f "$1") dynamic=$(readlink -f "$2") arm64=${3:+$(readlink -f "$3")}
check=$src/scripts/check-portable.sh

passes() { # ARCH [--objects DIR] FILE...
  local arch=$1; shift
  if out=$("$check" --arch "$arch" "$@" 2>&1); then pass "passes: $*"; else fail "check-portable --arch $arch $* failed: $out"; fi
}
fails_with() { # WANT ARCH [--objects DIR] FILE...
  local want=$1 arch=$2; shift 2
  if out=$("$check" --arch "$arch" "$@" 2>&1); then
    fail "check-portable --arch $arch $* passed; expected \"$want\""
  elif [[ $out == *"$want"* ]]; then
    pass "fails: $* ($want)"
  else
    fail "check-portable --arch $arch $* failed, but not with \"$want\": $out"
  fi
}

mapfile -t programs < <(node_programs "$amd64/bin")
passes amd64 --objects "$amd64" "${programs[@]/#/$amd64/bin/}"
if [[ -n $arm64 ]]; then
  mapfile -t programs < <(node_programs "$arm64/bin")
  passes arm64 --objects "$arm64" "${programs[@]/#/$arm64/bin/}"
fi

fails_with "needs glibc newer than 2.28: " amd64 "$dynamic/oci-rlimit-hook"
fails_with "needs shared library libcap.so.2" amd64 "$dynamic/oci-prlimit-helper"
fails_with "machine is \"Advanced Micro Devices X86-64\", not arm64" arm64 "$amd64/bin/oci-rlimit-hook"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/nss.c" <<'C'
#include <pwd.h>
#include <stdio.h>
int main(void) { struct passwd* p = getpwnam("root"); printf("%d\n", p ? (int)p->pw_uid : -1); return 0; }
C
mkdir "$tmp/obj"
if cc -O1 -static -o "$tmp/nss" "$tmp/nss.c" 2>"$tmp/warn" && cc -O1 -c -o "$tmp/obj/nss.o" "$tmp/nss.c"; then
  if grep -q "statically linked applications requires" "$tmp/warn"; then
    pass "the static link of getpwnam warns (build-node.sh fails on that warning)"
  else
    fail "a static getpwnam link did not warn: $(cat "$tmp/warn")"
  fi
  fails_with "contains the NSS lookup(s) getpwnam" amd64 "$tmp/nss"
  fails_with "calls getpwnam" amd64 --objects "$tmp/obj" "$amd64/bin/oci-rlimit-hook"
else
  fail "cannot compile the NSS probe with cc"
fi
finish
