#!/usr/bin/env bash
# Builds the node programs of an earlier commit, for the lifecycle test's
# upgrade (docs/daemons-testing.md, "The lifecycle test"): the commit's tree
# from git (no checkout of this clone changes), configured without tests or
# warnings-as-errors at -O0 (a test needs them to run, not to be fast), and
# only the programs named; they land in OUTDIR.
#   scripts/build-at-commit.sh COMMIT OUTDIR [TARGET...]
#   (default targets: oci-rlimit-nri oci-rlimit-runtime, what the upgrade runs)
# OUTDIR/.commit names the commit built; a rerun for the same commit whose
# programs are all there does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 2)); then
  echo "usage: scripts/build-at-commit.sh COMMIT OUTDIR [TARGET...]" >&2
  exit 2
fi
commit=$1 out=$2
shift 2
targets=("$@")
((${#targets[@]})) || targets=(oci-rlimit-nri oci-rlimit-runtime)
if ! full=$(git rev-parse --verify --quiet "$commit^{commit}"); then
  echo "build-at-commit: commit \"$commit\" is not in this clone (a shallow clone? git fetch --unshallow)" >&2
  exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
have_all() {
  [[ -f $out/.commit && $(<"$out/.commit") == "$full" ]] || return 1
  local t
  for t in "${targets[@]}"; do [[ -x $out/$t ]] || return 1; done
}
if have_all; then
  echo "build-at-commit: ${full:0:12} already in $out"
  exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/build-at-commit.XXXXXX")
trap 'rm -rf "$work"' EXIT
git archive --format=tar "$full" | tar -x -C "$work" --one-top-level=src
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS=-O0 -DOCI_RLIMIT_BUILD_TESTS=OFF -DOCI_RLIMIT_NRI=ON >/dev/null
cmake --build "$work/build" --target "${targets[@]}"
rm -f "$out/.commit"
for t in "${targets[@]}"; do install -m 0755 "$work/build/bin/$t" "$out/$t"; done
echo "$full" >"$out/.commit"
echo "build-at-commit: ${full:0:12}: ${targets[*]} in $out"
