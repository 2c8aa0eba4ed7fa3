#!/usr/bin/env bash
# Demo of the problem oci-rlimit solves: a non-root process (uid 1000) in a
# real busybox container under runc asks mlock(2) to pin 4 MiB, as an RDMA or
# GPU program pins its buffers. Without oci-rlimit the container inherits a
# small RLIMIT_MEMLOCK and mlock fails with ENOMEM; with oci-rlimit-hook as a
# createRuntime hook it succeeds. Builds only the hook and the probe, in
# build-demo/, and leaves no container, temp dir or mount behind.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { printf '== [%s/5] %s (%ds)\n' "$1" "$2" "$((SECONDS - start))"; }

step 1 "packages: scripts/install-deps.sh demo (installs only what is missing)"
scripts/install-deps.sh demo

step 2 "building oci-rlimit-hook and mlock_probe in build-demo/ (nothing else)"
# Build type None (no -O, no -g): half the compile time of the default
# RelWithDebInfo, and the demo does not need a fast hook. ccache when present.
# No tests (GoogleTest, gRPC) and no NRI plugin (protobuf, NRI's api.proto):
# the demo installs only what it builds, so it configures only that.
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER-$(command -v ccache || true)}
if ! cmake -S . -B build-demo -G Ninja -DCMAKE_BUILD_TYPE=None -DOCI_RLIMIT_BUILD_TESTS=OFF \
  -DOCI_RLIMIT_NRI=OFF >build-demo.log 2>&1; then
  cat build-demo.log >&2; exit 1
fi
rm -f build-demo.log
cmake --build build-demo --target oci-rlimit-hook mlock_probe
hook=$PWD/build-demo/bin/oci-rlimit-hook

work=$(mktemp -d /tmp/oci-rlimit-demo.XXXXXX)
ids=("oci-rlimit-demo-$$-without" "oci-rlimit-demo-$$-with")
cleanup() {
  for id in "${ids[@]}"; do
    runc --root "$work/runc" delete --force "$id" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step 3 "bundle: busybox rootfs plus the static probe, process as uid 1000"
bundle=$work/bundle
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/proc" "$bundle/rootfs/dev" "$bundle/rootfs/sys" \
  "$bundle/rootfs/tmp"
cp /bin/busybox "$bundle/rootfs/bin/"
for applet in sh cat grep; do ln -s busybox "$bundle/rootfs/bin/$applet"; done
cp build-demo/bin/mlock_probe "$bundle/rootfs/mlock_probe"
(cd "$bundle" && runc spec)

# With CAP_SYS_RESOURCE (root on a normal host) runc starts with memlock
# 1 MiB:1 MiB and the hook raises it to unlimited, as on a GPU/RDMA node.
# Without it (a restricted sandbox) nothing can raise a hard limit, so runc
# starts with a 1 MiB soft limit under the current hard one, and the hook
# raises the soft limit to the hard one.
capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if (( (16#$capeff >> 24) & 1 )); then
  want="memlock=unlimited"; start_limit="1048576:1048576"
  echo "   CAP_SYS_RESOURCE here: runc starts with memlock 1 MiB:1 MiB, the hook raises it to unlimited"
else
  hard=$(ulimit -H -l)
  [[ $hard == unlimited ]] || hard=$((hard * 1024))
  if [[ $hard != unlimited ]] && ((hard < 5 << 20)); then
    echo "demo: the memlock hard limit here is $hard bytes; mlock of 4 MiB needs at least 5 MiB" >&2
    exit 1
  fi
  want="memlock=$hard:$hard"; start_limit="1048576:$hard"
  echo "   no CAP_SYS_RESOURCE here: runc starts with memlock 1 MiB soft, $hard hard;" \
    "the hook raises the soft limit to the hard one"
fi
printf 'rlimits = ["%s"]\nlog-file = "%s"\n' "$want" "$work/hook.log" >"$work/config.toml"
echo "   oci-rlimit config: rlimits = [\"$want\"]"

run_container() {  # run_container ID HOOKS_JSON; prints the probe's line
  jq --argjson hooks "$2" '.process.terminal = false
      | .process.user = {uid: 1000, gid: 1000}
      | .process.args = ["/mlock_probe", "4"]
      | .hooks = $hooks' "$bundle/config.json" >"$work/config.new"
  mv "$work/config.new" "$bundle/config.json"
  prlimit "--memlock=$start_limit" runc --root "$work/runc" run --bundle "$bundle" "$1"
}

step 4 "runc run, without oci-rlimit"
if run_container "${ids[0]}" '{}'; then
  echo "demo: mlock worked without oci-rlimit: this machine shows no problem to solve" >&2
  exit 1
fi

step 5 "runc run, with oci-rlimit-hook as a createRuntime hook"
run_container "${ids[1]}" "$(jq -n --arg p "$hook" --arg c "$work/config.toml" \
  '{createRuntime: [{path: $p, args: ["oci-rlimit-hook", "--config", $c, "createRuntime"]}]}')"
echo "   hook log: $(cat "$work/hook.log")"
echo "== done in $((SECONDS - start)) s; removed the containers and $work"
