#!/usr/bin/env bash
# Demo: a real busybox container under runc, without and with oci-rlimit-hook
# as a createRuntime hook; prints the memlock line the container itself reads
# from /proc/self/limits.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
scripts/build.sh >/dev/null

work=$(mktemp -d /tmp/oci-rlimit-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
bundle=$work/bundle
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/proc" "$bundle/rootfs/dev" "$bundle/rootfs/sys"
cp /bin/busybox "$bundle/rootfs/bin/"
for applet in sh cat grep; do ln -s busybox "$bundle/rootfs/bin/$applet"; done
(cd "$bundle" && runc spec)

# With CAP_SYS_RESOURCE (root on a normal host) the demo lifts memlock to
# unlimited, as a GPU/RDMA node would. Without it (a rootless or restricted
# sandbox) nothing can raise a hard limit, so the demo starts runc with a
# 1 MiB soft limit and lets the hook raise the soft limit to the hard one.
hard=$(ulimit -H -l); [[ $hard == unlimited ]] || hard=$((hard * 1024))
capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if (( (16#$capeff >> 24) & 1 )); then
  want="memlock=unlimited"; prefix=()
else
  want="memlock=$hard:$hard"; prefix=(prlimit "--memlock=1048576:$hard")
  echo "(no CAP_SYS_RESOURCE here: starting runc with memlock 1 MiB soft, $hard hard)"
fi
# The demo's built-in default config.
printf 'rlimits = ["%s"]\nlog-file = "%s"\n' "$want" "$work/hook.log" >"$work/config.toml"

hook=$PWD/build/bin/oci-rlimit-hook
run_container() {  # run_container TITLE HOOKS_JSON
  jq --argjson hooks "$2" '.process.terminal = false
      | .process.args = ["grep", "Max locked memory", "/proc/self/limits"]
      | .hooks = $hooks' "$bundle/config.json" >"$work/config.new"
  mv "$work/config.new" "$bundle/config.json"
  printf '%-22s ' "$1"
  "${prefix[@]}" runc --root "$work/runc" run --bundle "$bundle" "oci-rlimit-demo-$$"
}

echo "config: $want"
run_container "without the hook:" '{}'
run_container "with oci-rlimit-hook:" "$(jq -n --arg p "$hook" --arg c "$work/config.toml" \
  '{createRuntime: [{path: $p, args: ["oci-rlimit-hook", "--config", $c, "createRuntime"]}]}')"
echo "hook log: $(cat "$work/hook.log")"
