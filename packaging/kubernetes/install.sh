#!/usr/bin/env bash
# oci-rlimit node installer: run by the DaemonSet (host root mounted at
# /host) or by hand on a node.
#
#   install.sh --host-root DIR [--prefix /usr/local] [--runtime containerd|crio|auto]
#              [--rlimits "memlock=unlimited"] [--source DIR] [--restart]
#   install.sh --uninstall --host-root DIR
#
# Installs the binaries into HOST/PREFIX/bin and writes HOST/etc/oci-rlimit/config.toml.
# containerd: appends a marked `oci-rlimit` runtime handler (runc shim, BinaryName =
#   oci-rlimit-runtime) to /etc/containerd/config.toml. Not an `imports` drop-in:
#   containerd 1.6 replaces the whole CRI plugin table with an imported one, which
#   would drop the node's own CRI settings.
# CRI-O: drops the annotation-scoped hooks.d file into /etc/containers/oci/hooks.d.
#
# Idempotent: a second run changes nothing. Everything it creates or edits is
# recorded under HOST/var/lib/oci-rlimit, originals are backed up there, and
# --uninstall puts them back byte for byte.
set -euo pipefail

prog=install.sh
host=""
prefix=/usr/local
runtime=auto
rlimits="memlock=unlimited"
source_dir=""
restart=0
uninstall=0
programs=(oci-rlimit-hook oci-rlimit-runtime oci-prlimit-helper)
begin_marker="# BEGIN oci-rlimit: added by oci-rlimit install.sh; --uninstall removes it"
end_marker="# END oci-rlimit"

die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while (($#)); do
  case "$1" in
    --host-root) host=${2:?--host-root: missing DIR}; shift 2 ;;
    --prefix) prefix=${2:?--prefix: missing DIR}; shift 2 ;;
    --runtime) runtime=${2:?--runtime: missing NAME}; shift 2 ;;
    --rlimits) rlimits=${2?--rlimits: missing LIST}; shift 2 ;;
    --source) source_dir=${2:?--source: missing DIR}; shift 2 ;;
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
# (issue 17) The image carries SRC/amd64 and SRC/arm64 (or one arch in SRC).
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

state=/var/lib/oci-rlimit/node-install
manifest=$host$state/manifest
backups=$host$state/backup

# --- the record: "created PATH", "dir PATH", "statedir PATH" (host paths) ----

recorded() { [[ -f $manifest ]] && grep -qxF "$1 $2" "$manifest"; }

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

# mkdir -p that records each directory it makes, outermost first.
ensure_dir() {
  local dir=$1
  [[ -d $host$dir ]] && return
  ensure_dir "$(dirname "$dir")"
  mkdir "$host$dir"
  record dir "$dir"
}

# Keeps the original of a file we are about to change, once.
backup() {
  local path=$1
  recorded created "$path" && return
  [[ -e $backups$path ]] && return
  ensure_state
  mkdir -p "$(dirname "$backups$path")"
  cp -p "$host$path" "$backups$path"
}

# Puts `src`'s bytes at host path `dest` with `mode`, unless already there.
place() {
  local src=$1 dest=$2 mode=$3 full=$host$2
  if [[ -f $full ]] && cmp -s "$src" "$full" && [[ $(stat -c %a "$full") == "$mode" ]]; then
    return
  fi
  if [[ -e $full ]]; then
    backup "$dest"
  else
    ensure_dir "$(dirname "$dest")"
    record created "$dest"
  fi
  local tmp
  tmp=$(mktemp "$(dirname "$full")/.oci-rlimit.XXXXXX")
  cat "$src" >"$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$full"
  wrote=1
  echo "$prog: wrote $dest"
}

# Writes `content` (a string) to host path `dest`.
place_text() {
  local tmp
  tmp=$(mktemp)
  printf '%s' "$2" >"$tmp"
  place "$tmp" "$1" "$3"
  rm -f "$tmp"
}

strip_block() { sed "/^$begin_marker\$/,/^$end_marker\$/d" "$1"; }

# --- install ---------------------------------------------------------------

toml_rlimits() {
  local out="" entry
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

# Any runtimes table in the file replaces containerd's built-in map, and CRI
# then refuses to load without its default "runc": so when the file has none,
# the block declares runc as containerd's default would.
containerd_block() {
  local base=$1 t='plugins."io.containerd.grpc.v1.cri".containerd.runtimes'
  echo "$begin_marker"
  if ! grep -q 'containerd\.runtimes\.' "$base"; then
    printf '[%s.runc]\n  runtime_type = "io.containerd.runc.v2"\n' "$t"
  fi
  printf '[%s.oci-rlimit]\n  runtime_type = "io.containerd.runc.v2"\n' "$t"
  printf '[%s.oci-rlimit.options]\n  BinaryName = "%s"\n' "$t" "$prefix/bin/oci-rlimit-runtime"
  echo "$end_marker"
}

# Refusals come before any change, so a refused install leaves nothing behind.
check_containerd() {
  local conf=/etc/containerd/config.toml full=$host/etc/containerd/config.toml
  [[ -e $full ]] || return 0
  strip_block "$full" | grep -Eq '^[[:space:]]*version[[:space:]]*=[[:space:]]*2' ||
    die "$conf: not a version = 2 config; the oci-rlimit handler needs version 2"
  if strip_block "$full" | grep -q 'runtimes\.oci-rlimit\]'; then
    die "$conf: already defines an oci-rlimit runtime outside our block; remove it first"
  fi
}
check_crio() { :; }

install_containerd() {
  local conf=/etc/containerd/config.toml full=$host/etc/containerd/config.toml base
  base=$(mktemp)
  if [[ -e $full ]]; then
    strip_block "$full" >"$base"
  else
    printf 'version = 2\n' >"$base"
  fi
  containerd_block "$base" >>"$base.block"
  cat "$base.block" >>"$base"
  rm -f "$base.block"
  wrote=0
  place "$base" "$conf" "$(stat -c %a "$full" 2>/dev/null || echo 644)"
  rm -f "$base"
  # containerd reads its config only at start; CRI-O watches hooks dirs.
  ((wrote)) && changed_services+=(containerd)
  return 0
}

install_crio() {
  local hook
  hook=$(mktemp)
  cat >"$hook" <<JSON
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
  place "$hook" /etc/containers/oci/hooks.d/oci-rlimit.json 644
  rm -f "$hook"
}

do_install() {
  local src=${source_dir:-$(dirname "$(readlink -f "$0")")/bin} p any=0 list runtimes
  [[ -d $src ]] || src=/usr/bin
  src=$(arch_dir "$src")
  for p in "${programs[@]}"; do [[ -x $src/$p ]] && any=1; done
  ((any)) || die "--source: no oci-rlimit programs in \"$src\""
  check_runs_on_node "$src"
  list=$(toml_rlimits)
  runtimes=$(detect_runtimes)
  for r in $runtimes; do "check_$r"; done

  for p in "${programs[@]}"; do
    [[ -x $src/$p ]] && place "$src/$p" "$prefix/bin/$p" 755
  done
  place_text /etc/oci-rlimit/config.toml \
    "# Written by oci-rlimit's node installer; install.sh --uninstall removes it.
rlimits = $list
" 644
  changed_services=()
  for r in $runtimes; do "install_$r"; done
  if ((restart)) && ((${#changed_services[@]})); then
    chroot "$host" systemctl restart "${changed_services[@]}"
  fi
  echo "$prog: installed under $host"
}

# --- uninstall -------------------------------------------------------------

do_uninstall() {
  [[ -f $manifest ]] || { echo "$prog: nothing installed under $host"; return; }
  local kind path
  # Newest first, so files go before the directories that hold them.
  tac "$manifest" | while read -r kind path; do
    case "$kind" in
      created) rm -f "$host$path" ;;
      dir) rmdir "$host$path" 2>/dev/null || echo "$prog: kept $path: not empty" >&2 ;;
    esac
  done
  # Originals back, byte for byte; an edited file's own later changes are kept
  # when it no longer matches original + our block.
  if [[ -d $backups ]]; then
    (cd "$backups" && find . -type f -printf '%P\n') | while read -r rel; do
      local orig=$backups/$rel cur=$host/$rel stripped
      stripped=$(mktemp)
      [[ -e $cur ]] && strip_block "$cur" >"$stripped"
      if [[ -e $cur ]] && ! cmp -s "$stripped" "$orig" && grep -qxF "$begin_marker" "$cur"; then
        cat "$stripped" >"$cur"
        echo "$prog: /$rel changed since install: removed our block, kept the rest" >&2
      else
        cp -p "$orig" "$cur"
      fi
      rm -f "$stripped"
    done
  fi
  local statedirs=()
  mapfile -t statedirs < <(sed -n 's/^statedir //p' "$manifest" | tac)
  rm -rf "${host:?}$state"
  for path in "${statedirs[@]}"; do rmdir "$host$path" 2>/dev/null || true; done
  echo "$prog: uninstalled from $host"
}

if ((uninstall)); then do_uninstall; else do_install; fi
