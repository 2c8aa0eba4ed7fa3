#!/usr/bin/env bash
# A plain configure without NRI's api.proto succeeds and leaves the plugin
# out with one message; -DOCI_RLIMIT_NRI=ON (what scripts/build.sh and CI
# pass) still fails without it.   tests/lint/check-nri-optional.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: check-nri-optional.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(-S "$src" -G Ninja -DOCI_RLIMIT_BUILD_TESTS=OFF -DOCI_RLIMIT_NRI_PROTO="$tmp/no/api.proto")
cmake "${common[@]}" -B "$tmp/auto" >"$tmp/auto.log" 2>&1 ||
  { cat "$tmp/auto.log" >&2; echo "check-nri-optional: a plain configure failed without the proto" >&2; exit 1; }
n=$(grep -c "oci-rlimit-nri left out" "$tmp/auto.log" || true)
[[ $n == 1 ]] || { cat "$tmp/auto.log" >&2; echo "check-nri-optional: want one 'left out' message, got $n" >&2; exit 1; }
if grep -q "oci-rlimit-nri" "$tmp/auto/build.ninja"; then
  echo "check-nri-optional: the plugin is still in the build" >&2; exit 1
fi
if cmake "${common[@]}" -B "$tmp/on" -DOCI_RLIMIT_NRI=ON >"$tmp/on.log" 2>&1; then
  echo "check-nri-optional: -DOCI_RLIMIT_NRI=ON configured without the proto" >&2; exit 1
fi
grep -q "OCI_RLIMIT_NRI_PROTO: .* does not exist" "$tmp/on.log" ||
  { cat "$tmp/on.log" >&2; echo "check-nri-optional: ON failed, but not for the proto" >&2; exit 1; }
echo "check-nri-optional: ok (AUTO leaves the plugin out; ON requires the proto)"
