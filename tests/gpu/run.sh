#!/usr/bin/env bash
# GPU end-to-end check, for an admin or a developer on a node with an NVIDIA GPU
# (docs/matrix.md, "What the limit gates on a GPU node"). A non-root (uid 1000)
# probe asks mlock(2) to pin memory and, where the CUDA driver is there,
# allocates device memory and CUDA pinned host memory. It runs in one container
# per path and prints what each got:
#   runc alone                     (the limit a pod gets today)
#   oci-rlimit-runtime -> runc     (runtime mode)
#   oci-rlimit-hook under runc     (createRuntime hook)
# and, where nvidia-container-runtime is found (PATH or /usr/local/nvidia/toolkit):
#   nvidia-container-runtime alone, in CDI mode
#   oci-rlimit-runtime -> nvidia-container-runtime, in CDI mode
#   oci-rlimit-hook under nvidia-container-runtime, in CDI mode
# On a machine with no GPU it runs the runc paths only and says so.
#
#   tests/gpu/run.sh            as root; programs from $OCI_RLIMIT_BIN, else build/bin, else PATH
# Exit status: 0 when every oci-rlimit path got the limit and pinned the memory
# and the paths without oci-rlimit did not; 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) == 0 ]] || { echo "gpu: run as root (it starts containers with runc)" >&2; exit 1; }
bin=${OCI_RLIMIT_BIN:-}
if [[ -z $bin ]]; then
  if [[ -x build/bin/oci-rlimit-runtime ]]; then bin=$PWD/build/bin; else bin=$(dirname "$(command -v oci-rlimit-runtime)"); fi
fi
for program in oci-rlimit-runtime oci-rlimit-hook; do
  [[ -x $bin/$program ]] || { echo "gpu: no $bin/$program (build it: scripts/build.sh $program)" >&2; exit 1; }
done
command -v runc >/dev/null || { echo "gpu: runc is not installed" >&2; exit 1; }

work=$(mktemp -d /tmp/oci-rlimit-gpu.XXXXXX)
ids=()
cdi_made=""
cleanup() {
  for id in "${ids[@]}"; do runc --root "$work/runc" delete --force "$id" >/dev/null 2>&1 || true; done
  [[ -z $cdi_made ]] || rm -f "$cdi_made"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The probe is dynamic (it dlopens libcuda.so.1), so the rootfs is the host's
# /usr, bind-mounted read-only, with the usrmerge links beside it.
c++ -O1 -o "$work/gpu_probe" tests/gpu/gpu_probe.cc -ldl
rootfs=$work/bundle/rootfs
mkdir -p "$rootfs"/{usr,proc,dev,sys,tmp,etc}
for link in bin sbin lib lib64; do [[ -e /$link ]] && ln -s "usr/$link" "$rootfs/$link"; done
cp "$work/gpu_probe" "$rootfs/gpu_probe"

# As in scripts/demo.sh: with CAP_SYS_RESOURCE a container starts at 8 MiB:8 MiB
# (systemd's default) and oci-rlimit raises it to unlimited; without it only the
# soft limit can rise, up to the hard limit in force.
capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if (( (16#$capeff >> 24) & 1 )); then
  want=memlock=unlimited start=8388608:8388608 expect=unlimited:unlimited mib=64
else
  hard=$(ulimit -H -l)
  [[ $hard == unlimited ]] && hard=67108864 || hard=$((hard * 1024))
  ((hard >= 3 << 20)) || { echo "gpu: the memlock hard limit here is $hard bytes; need 3 MiB" >&2; exit 1; }
  want=memlock=$hard:$hard start=1048576:$hard expect=$hard:$hard mib=$(((hard >> 20) - 1))
  ((mib <= 64)) || mib=64
fi
echo "gpu: containers start at memlock $start; oci-rlimit's config: rlimits = [\"$want\"]; the probe pins $mib MiB"

nvidia=""
for candidate in "$(command -v nvidia-container-runtime || true)" /usr/local/nvidia/toolkit/nvidia-container-runtime; do
  [[ -n $candidate && -x $candidate ]] && { nvidia=$candidate; break; }
done
gpu=no
if [[ -n $nvidia ]] && nvidia-smi -L >/dev/null 2>&1; then
  gpu=yes
  if ! ls /etc/cdi/nvidia*.yaml /var/run/cdi/nvidia*.yaml >/dev/null 2>&1; then
    command -v nvidia-ctk >/dev/null || { echo "gpu: no CDI spec and no nvidia-ctk to make one" >&2; exit 1; }
    cdi_made=/var/run/cdi/nvidia-oci-rlimit-gpu-test.yaml
    mkdir -p /var/run/cdi && nvidia-ctk cdi generate --output="$cdi_made" >/dev/null
  fi
  echo "gpu: GPU found ($(nvidia-smi -L | head -1)); NVIDIA's runtime: $nvidia, CDI mode"
else
  echo "gpu: no GPU or no nvidia-container-runtime here: the runc paths only"
fi

spec() {  # spec HOOKS_JSON ENV_JSON > config.json
  jq -n --argjson hooks "$1" --argjson env "$2" '{
    ociVersion: "1.0.2",
    process: {user: {uid: 1000, gid: 1000}, args: ["/gpu_probe", "'"$mib"'"], cwd: "/",
              env: (["PATH=/usr/bin:/bin"] + $env), noNewPrivileges: true},
    root: {path: "rootfs", readonly: false}, hostname: "gpu-probe",
    mounts: [{destination: "/proc", type: "proc", source: "proc"},
             {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]},
             {destination: "/tmp", type: "tmpfs", source: "tmpfs"},
             {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]}],
    hooks: $hooks,
    linux: {namespaces: [{type: "pid"}, {type: "mount"}, {type: "ipc"}, {type: "uts"}]}}'
}

printf 'rlimits = ["%s"]\nlog-file = "%s"\n' "$want" "$work/oci-rlimit.log" >"$work/config.toml"
failures=0
n=0
run_case() {  # run_case LABEL WITH_OCI_RLIMIT(yes|no) RUNTIME HOOKS_JSON ENV_JSON
  local label=$1 with=$2 runtime=$3 id="oci-rlimit-gpu-$$-$((n += 1))" out verdict="ok"
  ids+=("$id")
  spec "$4" "$5" >"$work/config.json.new"
  mv "$work/config.json.new" "$work/bundle/config.json"
  out=$(cd "$work/bundle" && OCI_RLIMIT_CONFIG=$work/wrapper.toml prlimit "--memlock=$start" \
    "$runtime" --root "$work/runc" run --bundle "$work/bundle" "$id" 2>&1) || true
  local got
  got=$(sed -n 's/^memlock //p' <<<"$out" | head -1)
  if [[ $with == yes ]]; then
    [[ $got == "$expect" && $out == *"MiB as uid 1000: ok"* ]] || verdict="FAILED (expected $expect and mlock ok)"
  else
    [[ $out == *"MiB as uid 1000: failed"* ]] || verdict="FAILED (expected mlock to fail without oci-rlimit)"
  fi
  [[ $verdict == ok ]] || failures=$((failures + 1))
  printf '== %s: %s\n' "$label" "$verdict"
  printf '   %s\n' "${out//$'\n'/$'\n'   }"
}

hook_json() {  # hook_json: the createRuntime hook entry
  jq -n --arg p "$bin/oci-rlimit-hook" --arg c "$work/config.toml" \
    '{createRuntime: [{path: $p, args: ["oci-rlimit-hook", "--config", $c, "createRuntime"]}]}'
}
wrapper_for() {  # wrapper_for RUNTIME: the wrapper's config, runtime first
  { cat "$work/config.toml"; printf '[runtime]\nruntimes = ["%s"]\n' "$1"; } >"$work/wrapper.toml"
}

wrapper_for "$(command -v runc)"
run_case "runc alone" no runc '{}' '[]'
run_case "oci-rlimit-runtime -> runc" yes "$bin/oci-rlimit-runtime" '{}' '[]'
run_case "oci-rlimit-hook under runc" yes runc "$(hook_json)" '[]'
if [[ $gpu == yes ]]; then
  cdi='["NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=all"]'
  wrapper_for "$nvidia"
  run_case "nvidia-container-runtime alone (CDI)" no "$nvidia" '{}' "$cdi"
  run_case "oci-rlimit-runtime -> nvidia-container-runtime (CDI)" yes "$bin/oci-rlimit-runtime" '{}' "$cdi"
  run_case "oci-rlimit-hook under nvidia-container-runtime (CDI)" yes "$nvidia" "$(hook_json)" "$cdi"
fi
if [[ -s $work/oci-rlimit.log ]]; then echo "== oci-rlimit's log"; sed 's/^/   /' "$work/oci-rlimit.log"; fi
if ((failures)); then echo "gpu: $failures path(s) FAILED"; exit 1; fi
echo "gpu: every path as expected (GPU parts: $gpu)"
