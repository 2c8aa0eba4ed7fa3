#!/usr/bin/env bash
# portable.arm64: the arm64 cross build (scripts/build-node.sh
# --unit-tests arm64 DIR) is ELF aarch64 and static (check-portable.sh, i.e.
# readelf), its programs' --help and --version work, and the unit tests it
# built (unit-tests.txt; in CI the pure-logic ones) pass, all under
# qemu-aarch64-static called directly (no binfmt).
# Each unit test binary runs once (not once per test as ctest would: 4 s
# instead of 4 min on 2 cores).
#   tests/portable/arm64-test.sh BUILDDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=tests/portable/common.sh
. "$here/common.sh"
dir=$(readlink -f "$1")
qemu=$(command -v qemu-aarch64-static) || { echo "FAIL: qemu-aarch64-static is not installed" >&2; exit 1; }
mapfile -t programs < <(node_programs "$dir/bin")

bins=()
for p in "${programs[@]}"; do bins+=("$dir/bin/$p"); done
if "$src/scripts/check-portable.sh" --arch arm64 "${bins[@]}"; then
  pass "ELF aarch64, static, no NSS"
else
  fail "check-portable.sh --arch arm64"
fi

# The control: this host cannot run them itself, so what passes below ran under qemu.
if "$dir/bin/oci-rlimit-hook" --version >/dev/null 2>&1; then
  fail "control: the arm64 hook ran without qemu (binfmt?); the qemu runs prove nothing"
else
  pass "control: the arm64 hook does not run natively here"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh -c "${fake_runtime_setup//\/tmp/$tmp}; true"
for p in "${programs[@]}"; do
  for arg in --help --version; do
    if out=$(OCI_RLIMIT_CONFIG=$tmp/config.toml "$qemu" "$dir/bin/$p" "$arg" 2>&1); then
      if [[ $p == oci-rlimit-runtime ]]; then want="fake-runc $arg"; elif [[ $arg == --version ]]; then want="$p "; else want="$p"; fi
      if [[ $out == *"$want"* ]]; then pass "qemu: $p $arg"; else fail "qemu: $p $arg printed \"${out:0:200}\", not \"$want\""; fi
    else
      fail "qemu: $p $arg failed: ${out:0:300}"
    fi
  done
done

tests=()
if [[ -f $dir/unit-tests.txt ]]; then mapfile -t tests < <(sed "s|^|$dir/bin/|" "$dir/unit-tests.txt"); fi
((${#tests[@]})) || fail "no unit tests listed in $dir/unit-tests.txt (build with build-node.sh --unit-tests)"
for t in "${tests[@]}"; do
  if out=$("$qemu" "$t" --gtest_brief=1 2>&1); then
    pass "qemu: $(basename "$t"): $(grep -o '[0-9]* tests\? from .*ran' <<<"$out" | head -n1)"
  else
    fail "qemu: $(basename "$t"):"$'\n'"$(tail -n 30 <<<"$out")"
  fi
done
finish
