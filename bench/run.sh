#!/usr/bin/env bash
# One command for the benchmark suite: builds a Release tree, sets up the
# fixtures, and prints docs/performance.md-ready tables. Every figure is a
# ratio to a baseline measured in the same run (bench/spawnbench.cc).
#   bench/run.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=300
[[ ${1:-} == --runs ]] && runs=$2

scripts/install-deps.sh all >/dev/null
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DOCI_RLIMIT_BUILD_TESTS=OFF >/dev/null
cmake --build build-release >/dev/null
bin=$PWD/build-release/bin

work=$(mktemp -d /tmp/oci-rlimit-bench.XXXXXX)
cleanup() { [[ -n ${target:-} ]] && kill "$target" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "# oci-rlimit benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), $runs runs after warm-up"
echo

# --- the hook against util-linux prlimit ------------------------------------
sleep 100000 &
target=$!
mkdir -p "$work/bundle"
(cd "$work/bundle" && runc spec)
printf '{"ociVersion":"1.0.2","id":"bench","status":"creating","pid":%d,"bundle":"%s"}' \
  "$target" "$work/bundle" >"$work/state.json"
printf 'rlimits = ["memlock=4M:8M"]\n' >"$work/config.toml"
# What admins write today: read the state with jq, call prlimit.
cat >"$work/jq-hook.sh" <<'HOOK'
#!/bin/sh
pid=$(jq -r .pid)
exec prlimit --pid "$pid" --memlock=4194304:8388608
HOOK
chmod +x "$work/jq-hook.sh"
{
  printf 'util-linux prlimit --pid (baseline)\t-\tprlimit --pid %d --memlock=4194304:8388608\n' "$target"
  printf 'oci-rlimit-hook createRuntime\t%s\t%s/oci-rlimit-hook --config %s createRuntime\n' \
    "$work/state.json" "$bin" "$work/config.toml"
  printf 'shell+jq+prlimit hook\t%s\t%s/jq-hook.sh\n' "$work/state.json" "$work"
} >"$work/hook.cases"
echo "## A hook run against util-linux prlimit"
echo
echo "| command | median | min–max | ratio to baseline | peak RSS |"
echo "|---|---|---|---|---|"
"$bin/spawnbench" --runs "$runs" --warmup 20 "$work/hook.cases"
echo
