#!/usr/bin/env bash
# One command for the benchmark suite: builds the shipped build (RelWithDebInfo,
# as the .deb's `build/` and scripts/build-node.sh are), sets up the
# fixtures, and prints docs/performance.md-ready tables. Every figure is a
# ratio to a baseline measured in the same run (bench/spawnbench.cc).
#   bench/run.sh [--runs N] [--runc-runs N] [--cri-pods N] [--only nri|audit]
# --runc-runs (default: --runs) sets the rounds of the runc table alone: a
# container start varies by a millisecond or more, as much as the effects it
# is there to show.
# --cri-pods (default 30; 0 skips it) sets the pods per arm of the CRI table
# (bench/cribench.cc: real containerd 2.x and 1.7, with and without
# oci-rlimit-nri). --only nri runs the oci-rlimit-nri tables alone, --only
# audit the `oci-rlimit audit` table (bench/auditbench.cc) alone.
# OCI_RLIMIT_JOBS caps the build's parallel jobs (default: ninja's).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=300
runc_runs=
cri_pods=30
only=all
usage() {
  echo "usage: bench/run.sh [--runs N] [--runc-runs N] [--cri-pods N] [--only nri|audit]" >&2
  exit 2
}
while (($#)); do
  (($# >= 2)) || usage
  case $1 in
    --runs) runs=$2 ;;
    --runc-runs) runc_runs=$2 ;;
    --cri-pods) cri_pods=$2 ;;
    --only) [[ $2 == nri || $2 == audit ]] || usage; only=$2 ;;
    *) usage ;;
  esac
  shift 2
done
runc_runs=${runc_runs:-$runs}

scripts/install-deps.sh all >/dev/null
# The tests' harness is configured too: cribench drives containerd through the
# CRI client in tests/cri. Only the programs and the benchmarks are built.
# The build type users run, so that each figure is the shipped program's.
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCI_RLIMIT_BUILD_TESTS=ON >/dev/null
targets=(oci-rlimit-hook oci-prlimit-helper oci-rlimit-runtime oci-rlimit-nri oci-rlimit spawnbench specbench nribench auditbench)
((cri_pods > 0)) && targets+=(cribench)
cmake --build build-bench ${OCI_RLIMIT_JOBS:+-j "$OCI_RLIMIT_JOBS"} --target "${targets[@]}" >/dev/null
bin=$PWD/build-bench/bin

# On the root filesystem (not a tmpfs), as containerd's and podman's bundles
# usually are: the wrapper's fsync of config.json is part of what is measured.
work=$(mktemp -d /var/tmp/oci-rlimit-bench.XXXXXX)
# A second place on a tmpfs, as containerd's bundles under /run are on a
# systemd host: there fsync costs nothing.
shm=$(mktemp -d /dev/shm/oci-rlimit-bench.XXXXXX)
cleanup() {
  [[ -n ${target:-} ]] && kill "$target" 2>/dev/null
  rm -rf "$shm"
  # `runc run` without --detach deletes its container; this only catches an
  # interrupted run.
  if [[ -d $work/runc-root ]]; then
    for id in $(runc --root "$work/runc-root" list -q 2>/dev/null); do
      runc --root "$work/runc-root" delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

header() {
  echo "| command | median | min–max | ratio to baseline | over baseline | peak RSS |"
  echo "|---|---|---|---|---|---|"
}

if [[ $only != all ]]; then
  echo "# oci-rlimit benchmark (oci-rlimit-$only only), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r)"
else
  echo "# oci-rlimit benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), $runs runs after warm-up (runc: $runc_runs)"
fi
echo
echo "Load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

nri_tables() {
  echo "## oci-rlimit-nri per CreateContainer (bench/nribench.cc)"
  echo
  echo '```'
  "$bin/nribench" "$bin/oci-rlimit-nri" 10000
  echo '```'
  echo
  if ((cri_pods > 0)); then
    echo "## Container creation through CRI, no NRI plugin against oci-rlimit-nri (bench/cribench.cc)"
    echo
    "$bin/cribench" --pods "$cri_pods" --containerd all 2> >(grep -v '^\[cri\]' >&2)
  fi
}
# 100, then 1,000 containers in a fake runc state root on tmpfs, their inits
# real sleeping processes; the baseline reads each one's /proc/PID/limits, the
# floor lexes the JSON audit must read. The median of 5 runs: 1,000 containers
# take a second a run on a loaded machine.
audit_table() {
  echo "## oci-rlimit audit over 100 and 1,000 containers (bench/auditbench.cc, 5 runs)"
  echo
  "$bin/auditbench" --containers 100,1000 --runs 5 --dir "$(mktemp -d "$shm/audit.XXXXXX")" "$bin/oci-rlimit"
  echo
}
if [[ $only != all ]]; then
  [[ $only == nri ]] && nri_tables
  [[ $only == audit ]] && audit_table
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

# --- fixtures ----------------------------------------------------------------
printf 'rlimits = ["memlock=4M:8M"]\n' >"$work/config.toml"
# A busybox rootfs, shared read-only by every bundle.
mkdir -p "$work/rootfs/bin" "$work/rootfs/proc" "$work/rootfs/sys" "$work/rootfs/dev" "$work/rootfs/tmp"
cp /bin/busybox "$work/rootfs/bin/busybox"
for tool in sh true cat; do ln -s busybox "$work/rootfs/bin/$tool"; done
# The plain bundle: `runc spec`, running /bin/true.
mkdir -p "$work/plain"
(cd "$work/plain" && runc spec)
jq --arg root "$work/rootfs" \
  '.root.path = $root | .process.terminal = false | .process.args = ["/bin/true"]' \
  "$work/plain/config.json" >"$work/plain/config.tmp"
mv "$work/plain/config.tmp" "$work/plain/config.json"
# The same bundle with our createRuntime hook.
mkdir -p "$work/hooked"
jq --arg hook "$bin/oci-rlimit-hook" --arg cfg "$work/config.toml" \
  '.hooks.createRuntime = [{"path": $hook, "args": ["oci-rlimit-hook", "--config", $cfg, "createRuntime"]}]' \
  "$work/plain/config.json" >"$work/hooked/config.json"
# ... and with a no-op hook, for what runc itself spends on running any hook.
mkdir -p "$work/noop-hook"
jq '.hooks.createRuntime = [{"path": "/bin/true"}]' "$work/plain/config.json" >"$work/noop-hook/config.json"
mkdir -p "$work/wrapped" "$shm/wrapped"
cp "$work/plain/config.json" "$work/wrapped/config.json"
cp "$work/plain/config.json" "$shm/wrapped/config.json"
# The 1 MiB spec: the plain one plus env entries, mounts and annotations, in
# compact JSON as containerd and podman write it.
mkdir -p "$work/big"
"$bin/specbench" --inflate "$work/plain/config.json" "$work/big/config.json" 1048576
cp "$work/plain/config.json" "$work/normal-config.json"
mkdir -p "$shm/big" "$shm/normal"
cp "$work/big/config.json" "$shm/big/config.json"
cp "$work/plain/config.json" "$shm/normal/config.json"

# --- the hook and the helper against util-linux prlimit ----------------------
sleep 100000 &
target=$!
state() { printf '{"ociVersion":"1.0.2","id":"bench","status":"creating","pid":%d,"bundle":"%s"}' "$target" "$1"; }
state "$work/plain" >"$work/state.json"
state "$work/big" >"$work/state-big.json"
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
  printf 'oci-prlimit-helper --pid\t-\t%s/oci-prlimit-helper --pid %d memlock=4M:8M\n' "$bin" "$target"
  printf 'shell+jq+prlimit hook\t%s\t%s/jq-hook.sh\n' "$work/state.json" "$work"
  printf 'oci-rlimit-hook, bundle with a 1 MiB config.json\t%s\t%s/oci-rlimit-hook --config %s createRuntime\n' \
    "$work/state-big.json" "$bin" "$work/config.toml"
} >"$work/hook.cases"
echo "## A hook run against util-linux prlimit"
echo
header
"$bin/spawnbench" --runs "$runs" --warmup 20 "$work/hook.cases"
echo

# --- whole container starts under runc ---------------------------------------
printf 'rlimits = ["memlock=4M:8M"]\n[runtime]\nruntimes = ["runc"]\n' >"$work/runtime.toml"
root=$work/runc-root
{
  printf 'runc run, no hook (baseline)\t-\trunc --root %s run --bundle %s bench-{n}\n' "$root" "$work/plain"
  printf 'runc run, oci-rlimit-hook as createRuntime hook\t-\trunc --root %s run --bundle %s bench-{n}\n' \
    "$root" "$work/hooked"
  printf 'runc run, /bin/true as createRuntime hook (what runc spends on any hook)\t-\trunc --root %s run --bundle %s bench-{n}\n' \
    "$root" "$work/noop-hook"
  printf 'oci-rlimit-runtime run (wrapping runc)\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s run --bundle %s bench-{n}\n' \
    "$work/runtime.toml" "$bin" "$root" "$work/wrapped"
  printf 'oci-rlimit-runtime run, bundle on tmpfs (as under /run/containerd)\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s run --bundle %s bench-{n}\n' \
    "$work/runtime.toml" "$bin" "$root" "$shm/wrapped"
} >"$work/runc.cases"
echo "## runc run of a busybox \`true\` bundle ($runc_runs runs)"
echo
header
"$bin/spawnbench" --runs "$runc_runs" --warmup 20 "$work/runc.cases"
echo
grep -q RLIMIT_MEMLOCK "$work/wrapped/config.json" || {
  echo "bench: the wrapper did not merge into $work/wrapped/config.json" >&2
  exit 1
}

# --- the wrapper's create path, with a stand-in runtime ----------------------
# /bin/true stands in for runc, so what remains is the wrapper's own cost:
# start, config, read, parse, merge, dump, atomic write (fsync), exec.
printf 'rlimits = ["memlock=4M:8M"]\n[runtime]\nruntimes = ["/bin/true"]\n' >"$work/standin.toml"
# Nothing configured: the wrapper leaves config.json alone (start, config, exec only).
printf 'rlimits = []\n[runtime]\nruntimes = ["/bin/true"]\n' >"$work/standin-none.toml"
mkdir -p "$work/normal"
cp "$work/normal-config.json" "$work/normal/config.json"
{
  printf 'stand-in runtime (/bin/true) directly (baseline)\t-\t/bin/true --root %s create --bundle %s c-{n}\n' \
    "$root" "$work/normal"
  printf 'oci-rlimit-runtime create, no rlimits configured (no rewrite)\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s create --bundle %s c-{n}\n' \
    "$work/standin-none.toml" "$bin" "$root" "$work/normal"
  printf 'oci-rlimit-runtime create, runc-spec config.json (%d KiB)\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s create --bundle %s c-{n}\n' \
    "$(($(stat -c %s "$work/normal/config.json") / 1024))" "$work/standin.toml" "$bin" "$root" "$work/normal"
  printf 'oci-rlimit-runtime create, 1 MiB config.json (%d KiB)\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s create --bundle %s c-{n}\n' \
    "$(($(stat -c %s "$work/big/config.json") / 1024))" "$work/standin.toml" "$bin" "$root" "$work/big"
  printf 'oci-rlimit-runtime create, runc-spec config.json on tmpfs\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s create --bundle %s c-{n}\n' \
    "$work/standin.toml" "$bin" "$root" "$shm/normal"
  printf 'oci-rlimit-runtime create, 1 MiB config.json on tmpfs\t-\tOCI_RLIMIT_CONFIG=%s %s/oci-rlimit-runtime --root %s create --bundle %s c-{n}\n' \
    "$work/standin.toml" "$bin" "$root" "$shm/big"
} >"$work/merge.cases"
echo "## The wrapper's create path (stand-in runtime)"
echo
header
"$bin/spawnbench" --runs "$runs" --warmup 20 "$work/merge.cases"
echo

# --- the same merge in-process -----------------------------------------------
echo "## Parse, merge and dump in-process, 1 MiB config.json"
echo
"$bin/specbench" --runs 100 --warmup 10 "$work/big/config.json"
echo
echo "## Parse, merge and dump in-process, runc-spec config.json"
echo
"$bin/specbench" --runs 1000 --warmup 50 "$work/normal-config.json"
echo
audit_table
nri_tables
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
