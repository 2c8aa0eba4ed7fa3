#!/usr/bin/env bash
# Product files stay under 400 lines. The files over it when this check came
# are listed in tests/lint/oversized-files.txt with the size they had then: a
# listed file may shrink (and leaves the list once under 400) but never grow,
# and a file not listed fails as soon as it passes 400 lines. Test files
# (*_test.cc) and code outside lib/ and cmd/ are not counted. A folder of
# lib/ or cmd/ (its own files, without its subfolders) holds at most 3,500
# lines of product code and 25 product .cc files: past that, it is two rooms.
#   check-sizes.sh [SOURCE_DIR [LIST]]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
list=${2:-$src/tests/lint/oversized-files.txt}
limit=400
folder_lines=3500 folder_cc=25
cd "$src"
declare -A ceiling=() dir_lines=() dir_cc=()
if [[ -f $list ]]; then
  while read -r path lines; do
    [[ -z $path || $path == \#* ]] && continue
    ceiling[$path]=$lines
  done <"$list"
fi
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -- lib cmd
  else
    find lib cmd -type f 2>/dev/null
  fi
}
bad=0 checked=0
while IFS= read -r f; do
  [[ $f == *.cc || $f == *.h ]] || continue
  [[ $f == *_test.cc || $f == *_test.h ]] && continue
  [[ -f $f ]] || continue
  checked=$((checked + 1))
  n=$(wc -l <"$f")
  d=$(dirname "$f")
  dir_lines[$d]=$((${dir_lines[$d]:-0} + n))
  [[ $f == *.cc ]] && dir_cc[$d]=$((${dir_cc[$d]:-0} + 1))
  if [[ -n ${ceiling[$f]:-} ]]; then
    if ((n > ceiling[$f])); then
      echo "check-sizes: $f has $n lines, more than the $((ceiling[$f])) it had when listed in $list: split it instead" >&2
      bad=$((bad + 1))
    fi
  elif ((n > limit)); then
    echo "check-sizes: $f has $n lines (limit $limit): split it" >&2
    bad=$((bad + 1))
  fi
done < <(files)
((checked)) || { echo "check-sizes: no product files under $src" >&2; exit 1; }
for d in "${!dir_lines[@]}"; do
  if ((dir_lines[$d] > folder_lines)); then
    echo "check-sizes: folder $d has ${dir_lines[$d]} lines of product code (limit $folder_lines): split it" >&2
    bad=$((bad + 1))
  fi
  if ((${dir_cc[$d]:-0} > folder_cc)); then
    echo "check-sizes: folder $d has ${dir_cc[$d]} .cc files (limit $folder_cc): split it" >&2
    bad=$((bad + 1))
  fi
done
((bad == 0)) || exit 1
echo "check-sizes: $checked product files, none over $limit lines but the ${#ceiling[@]} listed, none grown;" \
  "${#dir_lines[@]} folders, none over $folder_lines lines or $folder_cc .cc files"
