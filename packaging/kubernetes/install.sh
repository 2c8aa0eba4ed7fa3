#!/usr/bin/env bash
# oci-rlimit node installer: run by the DaemonSet (host root mounted at
# /host) or by hand on a node.
#
#   install.sh --host-root DIR [--prefix /usr/local] [--runtime containerd|crio|auto]
#              [--rlimits "memlock=unlimited"] [--nvidia [--nvidia-runtime PATH]]
#              [--source DIR] [--restart]
#   install.sh --uninstall --host-root DIR [--restart]
#
# What it owns on the node (docs/deployment.md has the whole story):
# - PREFIX/bin/{oci-rlimit-hook,oci-rlimit-runtime,oci-prlimit-helper,oci-rlimit};
# - /etc/oci-rlimit/config.d/50-installer.toml, rewritten on every run from
#   --rlimits (and --nvidia). /etc/oci-rlimit/config.toml and every other
#   drop-in are the admin's: never written, read after this one, so they win;
# - containerd: the runtime handler `oci-rlimit` in /etc/containerd/config.toml,
#   edited by `oci-rlimit node containerd install`, which reads the file as
#   TOML (versions 2 and 3) and changes nothing else in it;
# - CRI-O: /usr/share/containers/oci/hooks.d/oci-rlimit.json (stock CRI-O's only
#   hooks dir) and /etc/crio/crio.conf.d/50-oci-rlimit.conf (the handler).
# Every run is idempotent. --uninstall removes exactly those: the handler
# table (only while it runs oci-rlimit-runtime), the files it created, the
# directories it made. It never puts back old copies of shared files.
set -euo pipefail
# No pipelines into early-exiting readers (grep -q) anywhere in this file:
# with pipefail the writer's SIGPIPE would fail the run at random.

prog=install.sh
host=""
prefix=/usr/local
runtime=auto
rlimits="memlock=unlimited"
source_dir=""
restart=0
uninstall=0
nvidia=0
nvidia_runtime=""
programs=(oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper oci-rlimit)
state=/var/lib/oci-rlimit/node-install
dropin=/etc/oci-rlimit/config.d/50-installer.toml
ctd_conf=/etc/containerd/config.toml
crio_hook=/usr/share/containers/oci/hooks.d/oci-rlimit.json
crio_conf=/etc/crio/crio.conf.d/50-oci-rlimit.conf
old_config_header="# Written by oci-rlimit's node installer; install.sh --uninstall removes it."

die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '5,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while (($#)); do
  case "$1" in
    --host-root) host=${2:?--host-root: missing DIR}; shift 2 ;;
    --prefix) prefix=${2:?--prefix: missing DIR}; shift 2 ;;
    --runtime) runtime=${2:?--runtime: missing NAME}; shift 2 ;;
    --rlimits) rlimits=${2?--rlimits: missing LIST}; shift 2 ;;
    --source) source_dir=${2:?--source: missing DIR}; shift 2 ;;
    --nvidia) nvidia=1; shift ;;
    --nvidia-runtime) nvidia=1; nvidia_runtime=${2:?--nvidia-runtime: missing PATH}; shift 2 ;;
    --restart) restart=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument \"$1\"" >&2; usage ;;
  esac
done
[[ -n $host ]] || die "--host-root: required (use / to install on this machine)"
[[ -d $host ]] || die "--host-root: \"$host\" is not a directory"
host=${host%/}
[[ $prefix == /* ]] || die "--prefix: \"$prefix\" must be absolute"
case "$runtime" in containerd|crio|auto) ;; *) die "--runtime: \"$runtime\" is not containerd, crio or auto" ;; esac

# --- the binaries for this node: its architecture, and only if they run ----
# The image carries SRC/amd64 and SRC/arm64 (or one arch in SRC).
node_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64|arm64) echo arm64 ;;
    *) uname -m ;;
  esac
}
arch_dir() { if [[ -d $1/$(node_arch) ]]; then echo "$1/$(node_arch)"; else echo "$1"; fi; }
# Refuses, in one line and before anything changes, binaries the node cannot
# run: each program's --version runs under the host's own root (its loader and
# libc), from a copy beside where it would be installed.
check_runs_on_node() {
  local src=$1 p dir probe out
  for dir in "$host$prefix/bin" "$host$prefix" "$host/tmp" "$host/"; do [[ -d $dir ]] && break; done
  for p in "${programs[@]}"; do
    [[ -x $src/$p && $p != oci-rlimit-runtime ]] || continue # the wrapper's --version is runc's
    probe=$(mktemp "${dir%/}/.oci-rlimit-probe.XXXXXX")
    cp "$src/$p" "$probe" && chmod 755 "$probe"
    if ! out=$(chroot "${host:-/}" "${probe#"$host"}" --version 2>&1 </dev/null); then
      rm -f "$probe"
      die "$src/$p cannot run on this $(node_arch) node, nothing installed: $(head -n1 <<<"$out")"
    fi
    rm -f "$probe"
  done
}

manifest=$host$state/manifest

# --- where the programs come from ------------------------------------------

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

# The admin CLI that edits containerd's config: ours from the source dir,
# else the copy already on the node.
node_tool() {
  local t
  for t in "$(arch_dir "${source_dir:-$(dirname "$(readlink -f "$0")")/bin}")/oci-rlimit" /usr/bin/oci-rlimit \
    "$host$prefix/bin/oci-rlimit"; do
    [[ -x $t ]] && { echo "$t"; return; }
  done
  die "no oci-rlimit program to edit $ctd_conf with; pass --source"
}

# --- the record: "created PATH", "dir PATH", "statedir PATH", -----------------
# "ctdcreated PATH" (host paths)

recorded() {
  local kind path
  [[ -f $manifest ]] || return 1
  while read -r kind path; do
    [[ $kind == "$1" && $path == "$2" ]] && return 0
  done <"$manifest"
  return 1
}

# The state dir, with each directory it needed recorded as "statedir PATH".
ensure_state() {
  [[ -d $host$state ]] && return
  local d=$state missing=()
  while [[ ! -d $host$d ]]; do
    missing=("$d" "${missing[@]}")
    d=$(dirname "$d")
  done
  mkdir -p "$host$state"
  for d in "${missing[@]}"; do echo "statedir $d" >>"$manifest"; done
}

record() {
  recorded "$1" "$2" && return
  ensure_state
  echo "$1 $2" >>"$manifest"
}

unrecord() {
  [[ -f $manifest ]] || return 0
  local kind path keep=()
  while read -r kind path; do
    [[ $kind == "$1" && $path == "$2" ]] || keep+=("$kind $path")
  done <"$manifest"
  printf '%s\n' "${keep[@]}" >"$manifest.tmp"
  mv -f "$manifest.tmp" "$manifest"
}

# mkdir -p that records each directory it makes, outermost first.
ensure_dir() {
  local dir=$1
  [[ -d $host$dir ]] && return
  ensure_dir "$(dirname "$dir")"
  mkdir "$host$dir"
  record dir "$dir"
}

# Puts `src`'s bytes at host path `dest` with `mode`, unless already there.
# Replaced atomically (temp file in the same directory, then rename).
place() {
  local src=$1 dest=$2 mode=$3 full=$host$2 tmp
  if [[ -f $full ]] && cmp -s "$src" "$full" && [[ $(stat -c %a "$full") == "$mode" ]]; then
    return 1
  fi
  if [[ ! -e $full ]]; then
    ensure_dir "$(dirname "$dest")"
    record created "$dest"
  fi
  tmp=$(mktemp "$(dirname "$full")/.oci-rlimit.XXXXXX")
  cat "$src" >"$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$full"
  echo "$prog: wrote $dest"
}

# Writes `content` (a string) to host path `dest`; status 1 when unchanged.
place_text() {
  local tmp rc=0
  tmp=$(mktemp)
  printf '%s' "$2" >"$tmp"
  place "$tmp" "$1" "$3" || rc=$?
  rm -f "$tmp"
  return "$rc"
}

# --- install ---------------------------------------------------------------

toml_rlimits() {
  local out="" entry entries
  IFS=',' read -ra entries <<<"$rlimits"
  for entry in "${entries[@]}"; do
    entry=${entry// /}
    [[ -z $entry ]] && continue
    [[ $entry =~ ^[A-Za-z_]+=[A-Za-z0-9:-]+$ ]] ||
      die "--rlimits: \"$entry\" is not NAME=SOFT[:HARD]"
    out+="${out:+, }\"$entry\""
  done
  echo "[$out]"
}

detect_runtimes() {
  local found=()
  if [[ $runtime != auto ]]; then echo "$runtime"; return; fi
  [[ -e $host/etc/containerd || -S $host/run/containerd/containerd.sock ]] && found+=(containerd)
  [[ -e $host/etc/crio || -S $host/run/crio/crio.sock ]] && found+=(crio)
  ((${#found[@]})) || die "--runtime auto: found neither containerd nor CRI-O under \"$host\"; pass --runtime"
  echo "${found[@]}"
}

# Sets `ctd_changed` and `ctd_base_binary` from the tool's key=value lines.
containerd_edit() {
  local out key value
  out=$("$(node_tool)" node containerd "$@") || die "$ctd_conf: left unchanged (see above)"
  while IFS='=' read -r key value; do
    case "$key" in
      changed) ctd_changed=$value ;;
      base-binary) ctd_base_binary=$value ;;
    esac
  done <<<"$out"
}

install_containerd() {
  local full=$host$ctd_conf base=runc
  ((nvidia)) && base=nvidia
  if [[ ! -e $full ]]; then
    ensure_dir "$(dirname "$ctd_conf")"
    record ctdcreated "$ctd_conf"
  fi
  containerd_edit install --config "$full" --binary "$prefix/bin/oci-rlimit-runtime" --base "$base"
  if [[ $ctd_changed == yes ]]; then
    echo "$prog: wrote $ctd_conf (handler oci-rlimit)"
    changed_services+=(containerd)
  fi
}

install_crio() {
  local hook conf
  if [[ -e $host$crio_hook ]] && ! recorded created "$crio_hook"; then
    echo "$prog: kept $crio_hook: not ours (a package's?)" >&2
  else
    hook=$(cat <<JSON
{
  "version": "1.0.0",
  "hook": {
    "path": "$prefix/bin/oci-rlimit-hook",
    "args": ["oci-rlimit-hook", "createRuntime"]
  },
  "when": {
    "annotations": {
      "^oci-rlimit\\\\.io/enable\$": "^true\$"
    }
  },
  "stages": ["createRuntime"]
}
JSON
)
    place_text "$crio_hook" "$hook"$'\n' 644 || true
  fi
  # No monitor_env and no OCI_RLIMIT_CONFIG: conmon passes only monitor_env
  # to the runtime and streaming exec gets crio's own environment, so the
  # wrapper must use the default path for both to read the same config.
  conf="# Written by oci-rlimit's node installer; install.sh --uninstall removes it.
# The handler for runtimeClassName: oci-rlimit. oci-rlimit-runtime reads
# /etc/oci-rlimit/config.d/*.toml and /etc/oci-rlimit/config.toml.
[crio.runtime.runtimes.oci-rlimit]
runtime_path = \"$prefix/bin/oci-rlimit-runtime\"
runtime_type = \"oci\"
"
  if place_text "$crio_conf" "$conf" 644; then changed_services+=(crio); fi
}

# The installer's own drop-in. The admin's config.toml is read after it.
install_dropin() {
  local list=$1 text
  text="# Written by oci-rlimit's node installer on every run: do not edit.
# Put your settings in /etc/oci-rlimit/config.toml, which is read after this
# file and wins key by key (docs/deployment.md).
rlimits = $list
"
  if ((nvidia)); then
    local nv=${nvidia_runtime:-${ctd_base_binary:-nvidia-container-runtime}}
    text+="
# --nvidia: oci-rlimit-runtime execs NVIDIA's runtime, which execs runc.
# There is no fallback: a node without it fails the pod instead of running
# it without its GPUs.
[runtime]
runtimes = [\"$nv\"]
"
  fi
  place_text "$dropin" "$text" 644 || true
}

# Before config.d, this installer wrote config.toml itself: take back that
# file when nobody edited it, so that it does not override the drop-in.
migrate_old_config() {
  local f=$host/etc/oci-rlimit/config.toml first="" n=0 line
  recorded created /etc/oci-rlimit/config.toml || return 0
  [[ -f $f ]] || { unrecord created /etc/oci-rlimit/config.toml; return 0; }
  while IFS= read -r line; do
    ((n == 0)) && first=$line
    n=$((n + 1))
  done <"$f"
  if [[ $first == "$old_config_header" ]] && ((n == 2)); then
    rm -f "$f"
    echo "$prog: removed the old installer's /etc/oci-rlimit/config.toml (now $dropin)"
  else
    echo "$prog: kept /etc/oci-rlimit/config.toml: edited since the old installer wrote it" >&2
  fi
  unrecord created /etc/oci-rlimit/config.toml
}

do_install() {
  local src p list runtimes r
  src=$(pick_source)
  check_runs_on_node "$src"
  list=$(toml_rlimits)
  runtimes=$(detect_runtimes)
  ctd_changed=no
  ctd_base_binary=""
  changed_services=()

  for p in "${programs[@]}"; do
    place "$src/$p" "$prefix/bin/$p" 755 || true
  done
  migrate_old_config
  rm -rf "${host:?}$state/backup"  # the old installer's copies: never restored
  for r in $runtimes; do "install_$r"; done
  install_dropin "$list"
  if ((restart)) && ((${#changed_services[@]})); then
    chroot "$host" systemctl restart "${changed_services[@]}"
  fi
  echo "$prog: installed under $host"
}

# --- uninstall -------------------------------------------------------------

do_uninstall() {
  [[ -f $manifest ]] || { echo "$prog: nothing installed under $host"; return; }
  local kind path restart_list=()
  ctd_changed=no
  if [[ -e $host$ctd_conf ]]; then
    if recorded ctdcreated "$ctd_conf"; then
      containerd_edit uninstall --config "$host$ctd_conf" --delete-if-empty
    else
      containerd_edit uninstall --config "$host$ctd_conf"
    fi
    [[ $ctd_changed == yes ]] && restart_list+=(containerd)
  fi
  recorded created "$crio_conf" && restart_list+=(crio)
  # Newest first, so files go before the directories that hold them.
  local lines=()
  mapfile -t lines <"$manifest"
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    read -r kind path <<<"${lines[i]}"
    case "$kind" in
      created) rm -f "$host$path" ;;
      dir) rmdir "$host$path" 2>/dev/null || echo "$prog: kept $path: not empty" >&2 ;;
    esac
  done
  local statedirs=()
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    read -r kind path <<<"${lines[i]}"
    [[ $kind == statedir ]] && statedirs+=("$path")
  done
  rm -rf "${host:?}$state"
  for path in "${statedirs[@]}"; do rmdir "$host$path" 2>/dev/null || true; done
  if ((restart)) && ((${#restart_list[@]})); then
    chroot "$host" systemctl restart "${restart_list[@]}"
  fi
  echo "$prog: uninstalled from $host"
}

if ((uninstall)); then do_uninstall; else do_install; fi
