#!/usr/bin/env bash
# The layers, checked on the include lines themselves (linking alone does not
# stop inline, constexpr or template code from reaching upward). Files live
# under lib/ (the layers) and cmd/ (one folder per program); include strings
# name the layer or program without that prefix ("formats/rlimit.h", "hook/args.h"):
#   lib/formats/               may include formats/ only
#   lib/core/                  formats/ and core/
#   lib/adapters/NAME/         formats/, core/ and adapters/
#   lib/effects/               formats/, core/ and effects/
#   lib/node/                  formats/, core/, adapters/, effects/ and node/
#                              (the node installer's decisions, shared by doctor)
#   cmd/PROGRAM/               formats/, core/, adapters/, effects/, node/ and its
#                              own folder, never another program's; a file in a
#                              folder below it (cmd/cli/doctor/) never includes
#                              one of the folder above (cmd/cli/args.h): the
#                              arrows inside a program run down too
# and no product file includes tests/ (a *_test.cc may include tests/testing/).
# A file under lib/ outside those layers fails too: a new layer is added
# here first. bench/, fuzz/, demo/ and tests/ sit outside the layers.
#   check-layers.sh [SOURCE_DIR]     exit 1 and one line per violation
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"

programs=()
for d in cmd/*/; do
  [[ -d $d ]] && programs+=("$(basename "$d")")
done
# layer_of_include TARGET: the layer an include string names, or "" for a
# system or generated header (nriapi/, version.h's folder is core/).
layer_of_include() {
  case $1 in
    formats/*) echo formats ;;
    core/*) echo core ;;
    adapters/*) echo adapters ;;
    effects/*) echo effects ;;
    node/*) echo node ;;
    *)
      local p
      for p in "${programs[@]}"; do
        [[ $1 == "$p"/* ]] && { echo "program:$p"; return; }
      done
      echo "" ;;
  esac
}
# layer_of_file PATH: the layer a repository path belongs to, "" outside them,
# "unknown" for a file under lib/ in no layer.
layer_of_file() {
  case $1 in
    lib/formats/* | lib/core/* | lib/adapters/* | lib/effects/* | lib/node/*) layer_of_include "${1#lib/}" ;;
    lib/*) echo unknown ;;
    cmd/*/*) layer_of_include "${1#cmd/}" ;;
    *) echo "" ;;
  esac
}
# allowed FROM_LAYER TO_LAYER: whether FROM may include TO.
allowed() {
  local from=$1 to=$2
  [[ $from == "$to" ]] && return 0
  case $from in
    formats) return 1 ;;
    core) [[ $to == formats ]] ;;
    adapters | effects) [[ $to == formats || $to == core ]] ;;
    node | program:*) [[ $to == formats || $to == core || $to == adapters || $to == effects || $to == node ]] ;;
    *) return 0 ;;
  esac
}

# up_arrow FILE TARGET: whether FILE, in a folder below its program's
# (cmd/P/SUB/...), includes a file that sits directly in cmd/P/.
up_arrow() {
  local file=$1 target=$2 rest=${1#cmd/}
  [[ $file == cmd/*/*/* ]] || return 1
  [[ $target == "${rest%%/*}"/* && ${target#*/} != */* ]]
}

# Tracked and new files of a git tree; every file of a plain copy.
list_sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -- '*.cc' '*.h'
  else
    find . \( -name '*.cc' -o -name '*.h' \) -printf '%P\n'
  fi
}

bad=0
checked=0
while IFS= read -r file; do
  from=$(layer_of_file "$file")
  [[ -n $from ]] || continue
  if [[ $from == unknown ]]; then
    echo "check-layers: $file is under lib/ but in no layer (formats, core, adapters, effects, node): add its layer to tests/lint/check-layers.sh" >&2
    bad=$((bad + 1))
    continue
  fi
  checked=$((checked + 1))
  is_test=0
  [[ $file == *_test.cc || $file == *_test.h ]] && is_test=1
  while IFS=: read -r line inc; do
    target=${inc#*\"}
    target=${target%%\"*}
    if [[ $target == tests/* ]]; then
      if ((is_test)) && [[ $target == tests/testing/* ]]; then continue; fi
      echo "check-layers: $file:$line includes \"$target\": product code never includes tests/" >&2
      bad=$((bad + 1))
      continue
    fi
    to=$(layer_of_include "$target")
    [[ -n $to ]] || continue
    if up_arrow "$file" "$target"; then
      echo "check-layers: $file:$line includes \"$target\": a folder below ${from#program:} never includes its parent's files" >&2
      bad=$((bad + 1))
    elif ! allowed "$from" "$to"; then
      echo "check-layers: $file:$line includes \"$target\": ${from#program:} may not include ${to#program:}" >&2
      bad=$((bad + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" | sed -E 's/^([0-9]+):.*(".*").*/\1:\2/')
done < <(list_sources)

if ((checked == 0)); then
  echo "check-layers: no source files found under $src" >&2
  exit 1
fi
if ((bad)); then
  echo "check-layers: $bad include(s) cross a layer upward or into another program" >&2
  exit 1
fi
echo "check-layers: $checked files, every include goes down or stays in its folder"
