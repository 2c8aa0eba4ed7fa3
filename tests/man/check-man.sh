#!/usr/bin/env bash
# Every man page in packaging/man: no warnings from `man --warnings` or
# `groff -ww`; section 8 (admin tools); SEE ALSO names only pages that exist,
# with their section; and the SYNOPSIS names exactly the options the
# program's own usage lines (its --help, up to the first blank line) name.
#   tests/man/check-man.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=${1:?usage: check-man.sh SOURCE_DIR BIN_DIR}
bin=${2:?usage: check-man.sh SOURCE_DIR BIN_DIR}
status=0
bad() { echo "check-man: $page: $*" >&2; status=1; }
for tool in man groff; do
  command -v "$tool" >/dev/null || { echo "check-man: $tool is missing (scripts/install-deps.sh all)" >&2; exit 1; }
done
options() { grep -oE -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' '; }

pages=("$src"/packaging/man/*)
((${#pages[@]} >= 4)) || { echo "check-man: expected 4+ pages in $src/packaging/man" >&2; exit 1; }
for path in "${pages[@]}"; do
  page=$(basename "$path")
  name=${page%.*}
  [[ $page == *.8 ]] || bad "not in section 8"
  th=$(awk '/^\.TH/ {print $2, $3; exit}' "$path")
  [[ $th == "${name^^} 8" ]] || bad ".TH says \"$th\", want \"${name^^} 8\""

  warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -P cat -l "$path" 2>&1 >/dev/null || true)
  [[ -z $warnings ]] || bad "man --warnings: $warnings"
  warnings=$(groff -ww -z -man "$path" 2>&1 || true)
  [[ -z $warnings ]] || bad "groff -ww: $warnings"

  while read -r ref; do
    [[ -f $src/packaging/man/${ref%(*}.${ref//[^0-9]/} ]] || bad "SEE ALSO $ref: no such page"
  done < <(grep -oE 'oci-[a-z-]+\([0-9]\)' "$path" | sort -u)

  # The runtime wrapper's --help is runc's; its own is --oci-rlimit-help.
  help_flag=--help
  [[ $name == oci-rlimit-runtime ]] && help_flag=--oci-rlimit-help
  [[ -x $bin/$name ]] || { bad "no program $bin/$name"; continue; }
  usage=$(PATH=/nonexistent "$bin/$name" "$help_flag" | awk '/^usage:/ {u = 1} u && /^$/ {exit} u')
  [[ -n $usage ]] || { bad "$name $help_flag prints no usage: line"; continue; }
  synopsis=$(awk '/^\.SH SYNOPSIS/ {s = 1; next} s && /^\.SH/ {exit} s' "$path" |
    sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g')
  want=$(options <<<"$usage")
  got=$(options <<<"$synopsis")
  [[ $want == "$got" ]] || bad "SYNOPSIS options [$got] differ from $name $help_flag's usage [$want]"
  echo "check-man: $page: ok (options: $got)"
done
exit "$status"
