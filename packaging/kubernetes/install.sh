#!/usr/bin/env bash
# oci-rlimit node installer: run by the DaemonSet (host root mounted at
# /host) or by hand on a node.
#
#   install.sh --host-root DIR [--prefix /usr/local] [--runtime containerd|crio|auto]
#              [--rlimits "memlock=unlimited" | --policy FILE]
#              [--nvidia [--nvidia-runtime PATH] | --no-nvidia]
#              [--source DIR] [--restart]
#   install.sh --uninstall --host-root DIR [--force] [--restart]
#
# Every decision is `oci-rlimit node install|uninstall` (the admin CLI, from
# the image): it checks the input before anything is written, copies the
# programs, writes the installer's drop-in (and with --policy the fleet's
# config.toml as the node's /etc/oci-rlimit/config.toml) and the containerd or CRI-O
# handler, and remembers the node's mode (a rerun without --nvidia keeps
# NVIDIA; --no-nvidia removes it). Uninstall removes the handlers first and
# keeps oci-rlimit-runtime while containers created through it exist (exit 3;
# --force removes it anyway); a refused uninstall removes no file, so the
# same command finishes it. docs/deployment.md has the whole story.
# This script only picks the node's architecture, checks that the programs
# run on the node, and restarts the engines whose config changed.
set -euo pipefail

prog=install.sh
host=""
source_dir=""
restart=0
uninstall=0
pass=()  # handed to `oci-rlimit node install` as they are
force=()
programs=(oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit)

die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '5,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while (($#)); do
  case "$1" in
    --host-root) host=${2:?--host-root: missing DIR}; shift 2 ;;
    --source) source_dir=${2:?--source: missing DIR}; shift 2 ;;
    --restart) restart=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    --prefix|--runtime|--rlimits|--policy|--nvidia-runtime)
      (($# >= 2)) || die "$1: missing value"
      pass+=("$1" "$2"); shift 2 ;;
    --nvidia|--no-nvidia) pass+=("$1"); shift ;;
    --force) force=(--force); shift ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument \"$1\"" >&2; usage ;;
  esac
done
[[ -n $host ]] || die "--host-root: required (use / to install on this machine)"
[[ -d $host ]] || die "--host-root: \"$host\" is not a directory"
host=${host%/}

# --- the programs for this node: its architecture, and only if they run -----
# The image carries SRC/amd64 and SRC/arm64 (or one arch in SRC).
node_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64|arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}
arch_dir() { if [[ -d $1/$(node_arch) ]]; then echo "$1/$(node_arch)"; else echo "$1"; fi; }

# The directory holding the programs to install: --source, else bin/ next
# to this script (the installer image), else /usr/bin (the .deb).
pick_source() {
  local src=${source_dir:-$(dirname "$(readlink -f "$0")")/bin} p
  [[ -d $src ]] || src=/usr/bin
  src=$(arch_dir "$src")
  for p in "${programs[@]}"; do
    [[ -x $src/$p ]] || die "--source: no $p in \"$src\""
  done
  echo "$src"
}

# Refuses, in one line and before anything changes, programs the node cannot
# run: each one's --version runs under the host's own root (its loader and
# libc), from a copy in the host's /tmp (or /).
check_runs_on_node() {
  local src=$1 p dir probe out old pid
  for dir in "$host/tmp" "$host/"; do [[ -d $dir ]] && break; done
  # A probe left by a run killed before its rm: ours by name and owner only
  # (root's regular files; find follows no symlink), once the run named in it
  # is gone: a run beside this one (an admin's, another pod's) keeps its own.
  while IFS= read -r -d '' old; do
    pid=${old##*/.oci-rlimit-probe.}
    pid=${pid%%.*}
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && continue
    rm -f -- "$old"
  done < <(find "${dir%/}" -maxdepth 1 -type f -user 0 -name '.oci-rlimit-probe.*' -print0 2>/dev/null)
  for p in "${programs[@]}"; do
    probe=$(mktemp "${dir%/}/.oci-rlimit-probe.$$.XXXXXX")
    cp "$src/$p" "$probe" && chmod 755 "$probe"
    # The wrapper prints its own version line, then asks runc for its own: a
    # node root without runc on PATH fails that second part, which the wrapper
    # running at all has already shown it can.
    if ! out=$(chroot "${host:-/}" "${probe#"$host"}" --version 2>&1 </dev/null) &&
      ! [[ $p == oci-rlimit-runtime && $out == "oci-rlimit-runtime version "* ]]; then
      rm -f "$probe"
      die "$src/$p cannot run on this $(node_arch) node, nothing installed: $(head -n1 <<<"$out")"
    fi
    rm -f "$probe"
  done
}

# The admin CLI that makes the decisions: ours from the source, else the copy
# already on the node (uninstall after the image is gone).
node_tool() {
  local t
  for t in "$(arch_dir "${source_dir:-$(dirname "$(readlink -f "$0")")/bin}")/oci-rlimit" \
    /usr/bin/oci-rlimit "$host/usr/local/bin/oci-rlimit"; do
    [[ -x $t ]] && { echo "$t"; return; }
  done
  die "no oci-rlimit program to run; pass --source"
}

# Runs the tool, printing its lines but "plan KEY=VALUE", which set plan_KEY.
run_tool() {
  local out rc=0 line key
  out=$("$tool" node "$@") || rc=$?
  while IFS= read -r line; do
    case "$line" in
      "plan "*=*) key=${line#plan }; printf -v "plan_${key%%=*}" '%s' "${key#*=}" ;;
      "") ;;
      *) echo "$prog: $line" ;;
    esac
  done <<<"$out"
  return "$rc"
}

# The systemd units that run each engine: its own, then k3s's and RKE2's
# (their containerd runs under the k3s or rke2 service).
units_of() {
  case "$1" in
    containerd) echo containerd k3s k3s-agent rke2-server rke2-agent ;;
    *) echo "$1" ;;
  esac
}

# The engine's config file where the node keeps it (what `oci-rlimit node
# install` edits).
node_config_of() {
  case "$1" in
    containerd) echo /etc/containerd/config.toml ;;
    crio) echo /etc/crio/crio.conf ;;
  esac
}

# Whether PID is the engine that serves the node's socket: root's (every uid
# in its status), in the PID and mount namespaces of the host's init (a
# user's rootless engine and one in a pod, kind or dind, are not), running a
# root-owned executable from a root-owned directory, and reading the node's
# config (its --config, -c or --config=, else the default). The DaemonSet's
# pod has hostPID, so the host's /proc pids are this shell's.
serves_node() {
  local engine=$1 proc=$host/proc/$2 ns init mnt exe arg want prev="" line="" uids=()
  ns=$(readlink "$proc/ns/pid" 2>/dev/null) || return 1
  # Where root may not read init's link (a sandbox hiding pid 1) and this
  # runs on the node itself (host /), the node's namespace is this shell's.
  init=$(readlink "$host/proc/1/ns/pid" 2>/dev/null) ||
    { [[ -z ${host%/} ]] && init=$(readlink /proc/self/ns/pid 2>/dev/null); } || return 1
  [[ -n $ns && $ns == "$init" ]] || return 1
  # Init's mounts, where its link can be read (a hostPID pod's engine has its
  # own); its executable and that file's directory root's alone.
  if mnt=$(readlink "$host/proc/1/ns/mnt" 2>/dev/null); then
    [[ $(readlink "$proc/ns/mnt" 2>/dev/null) == "$mnt" ]] || return 1
  fi
  exe=$(readlink "$proc/exe" 2>/dev/null) || return 1
  roots_alone "$proc/exe" && roots_alone "$proc/root${exe%/*}/" || return 1
  [[ -r $proc/status && -r $proc/cmdline ]] || return 1
  while IFS= read -r line && [[ $line != Uid:* ]]; do :; done <"$proc/status"
  read -r -a uids <<<"${line#Uid:}"
  [[ $line == Uid:* && "${uids[*]}" == "0 0 0 0" ]] || return 1
  want=$(node_config_of "$engine")
  while IFS= read -r -d '' arg; do
    case "$prev" in --config|-c) [[ $arg == "$want" ]] || return 1 ;; esac
    case "$arg" in --config=*) [[ ${arg#--config=} == "$want" ]] || return 1 ;; esac
    prev=$arg
  done <"$proc/cmdline"
  return 0
}

# Whether root owns PATH (followed) and no one else may write it.
roots_alone() {
  local st
  st=$(stat -L -c '%u %a' "$1" 2>/dev/null) || return 1
  [[ ${st%% *} == 0 ]] && (((8#${st#* } & 8#022) == 0))
}

# Without systemd (or with none of the units): signal the engine's process
# that serves the node (serves_node), as NVIDIA's installer does. containerd
# does not handle SIGHUP and exits, so its supervisor starts it again on the
# new config. CRI-O 1.31 logs "Updating runtime configuration" on SIGHUP but
# adds no runtime handler (pods fail "failed to find runtime handler" until
# it restarts), so verify_restarted below still waits for a crio started
# after the write, and fails without one.
signal_engine() {
  local comm pid sent=1
  for comm in "$host"/proc/[0-9]*/comm; do
    [[ $(cat "$comm" 2>/dev/null) == "$1" ]] || continue
    pid=${comm#"$host"/proc/}; pid=${pid%/comm}
    serves_node "$1" "$pid" || continue
    kill -HUP "$pid" 2>/dev/null && sent=0
  done
  return "$sent"
}

# "ENGINE:PID" for each process that serves the node of the engines in the plan.
engine_pids() {
  local e comm pid
  for e in ${plan_restart:-}; do
    for comm in "$host"/proc/[0-9]*/comm; do
      [[ $(cat "$comm" 2>/dev/null) == "$e" ]] || continue
      pid=${comm#"$host"/proc/}; pid=${pid%/comm}
      serves_node "$e" "$pid" && echo "$e:$pid"
    done
  done
  return 0
}

restart_one() {
  local unit
  for unit in $(units_of "$1"); do
    chroot "${host:-/}" systemctl restart "$unit" 2>/dev/null && return 0
  done
  signal_engine "$1" && return 0
  echo "$prog: could not restart $1 (units: $(units_of "$1"); no $1 process to signal)" >&2
  return 1
}

restart_engines() {
  local e
  ((restart)) && [[ -n ${plan_restart:-} ]] || return 0
  for e in $plan_restart; do restart_one "$e" || true; done
}

# After a restart, the engines must run the new config: `node install --check`
# says which still started before it was written (node_restart.h). A restart
# that did not happen is remembered, and the next run asks for it again.
verify_restarted() {
  local i
  ((restart)) && [[ -n ${plan_restart:-} ]] || return 0
  for ((i = 0; i < ${OCI_RLIMIT_RESTART_WAIT:-30}; i++)); do
    run_tool install --check --host-root "${host:-/}" "${pass[@]}" >/dev/null || return 1
    [[ -z $plan_restart ]] && return 0
    sleep 1
  done
  die "$plan_restart still runs the config from before this install; restart it (oci-rlimit node install remembers, and its next run asks again)"
}

# Without --restart: one line saying which engines still run the old config.
say_restart_needed() {
  ((restart)) || [[ -z ${plan_restart:-} ]] ||
    echo "$prog: $plan_restart must still restart to read the new config (run with --restart, or restart it yourself)"
}

plan_restart=""
# No record of an install and no CLI to ask: a second uninstall, from a copy
# of this script, has nothing to do.
if ((uninstall)) && [[ ! -e $host/var/lib/oci-rlimit/node-install ]] && ! (node_tool) >/dev/null 2>&1; then
  echo "nothing installed under ${host:-/}"
  exit 0
fi
tool=$(node_tool) || exit 1
if ((uninstall)); then
  rc=0
  run_tool uninstall --host-root "${host:-/}" "${force[@]}" || rc=$?
  # The tool said which engines must restart; with --restart, one whose
  # process is the same after the restart (a SIGHUP'd crio) still serves
  # the removed handler, and the record that would remember it is gone.
  before=$(engine_pids)
  restart_engines
  if ((restart)); then
    for ep in $before; do
      serves_node "${ep%%:*}" "${ep#*:}" || continue
      echo "$prog: ${ep%%:*} (pid ${ep#*:}) did not restart and still serves the removed handler oci-rlimit: restart it (systemctl restart ${ep%%:*})" >&2
      rc=1
    done
  fi
  exit "$rc"
fi
src=$(pick_source)
run_tool install --check --host-root "${host:-/}" "${pass[@]}" >/dev/null || exit 1
check_runs_on_node "$src"
run_tool install --host-root "${host:-/}" --source "$src" "${pass[@]}" || exit 1
restart_engines
verify_restarted
say_restart_needed
