#!/usr/bin/env bash
# The docs as the .deb installs them resolve their links: the install rules'
# component "docs" (packaging/CMakeLists.txt) is staged alone, then
#  - every relative link in an installed page that, in the source tree, leads
#    to README.md or a page under docs/ leads to the installed copy (links to
#    code and tests lead into the source tree, which is not installed);
#  - every /usr/share/doc/oci-rlimit/... path that the programs, man pages,
#    units and docs name is installed.
#   tests/readme/installed_docs_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(cd "${1:?usage: installed_docs_test.sh SOURCE_DIR BUILD_DIR}" && pwd)
build=${2:?usage: installed_docs_test.sh SOURCE_DIR BUILD_DIR}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --component docs --prefix "$stage/usr" >/dev/null
docdir=$stage/usr/share/doc/oci-rlimit
[[ -f $docdir/README.md ]] || { echo "installed_docs_test: FAIL: no README.md in $docdir" >&2; exit 1; }

failures=0 checked=0 to_source=0
fail() { echo "installed_docs_test: FAIL: $*" >&2; failures=$((failures + 1)); }

while IFS= read -r page; do
  rel=${page#"$docdir"/}
  [[ -f $src/$rel ]] || { fail "$rel is installed but is not README.md or under docs/ in the source"; continue; }
  while IFS= read -r target; do
    target=${target%%#*}
    [[ -z $target || $target == *://* || $target == mailto:* ]] && continue
    # Where the link leads in the source tree, relative to the source root.
    dest=$(realpath -m --relative-to="$src" "$src/$(dirname "$rel")/$target")
    if [[ $dest != README.md && $dest != docs/* ]]; then
      to_source=$((to_source + 1))
      continue
    fi
    checked=$((checked + 1))
    [[ -e $docdir/$dest ]] || fail "$rel links to $target, which is not installed ($dest)"
  done < <(grep -oE '\]\([^) ]+\)' "$page" | sed -E 's/^\]\((.*)\)$/\1/')
done < <(find "$docdir" -name '*.md' | sort)

while IFS= read -r named; do
  path=${named%.}
  [[ -e $stage$path ]] || fail "$path is named in the tree but not installed"
done < <(grep -rhoE '/usr/share/doc/oci-rlimit(/[A-Za-z0-9._-]+)*' \
  "$src"/packaging "$src"/cmd "$src"/lib "$src"/docs "$src"/README.md | sort -u)

echo "installed_docs_test: $checked links between installed pages, $to_source into the" \
  "source tree (not installed), $failures failure(s)"
((failures == 0))
