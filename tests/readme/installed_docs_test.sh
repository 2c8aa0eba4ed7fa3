#!/usr/bin/env bash
# The docs as the .deb installs them resolve their links: the install rules'
# component "docs" (packaging/CMakeLists.txt) is staged alone, then
#  - every relative link in an installed page leads to an installed file, and
#    its #anchor to a heading there (doc_links.py): code and tests are not
#    installed, so the docs name them as code, never as links;
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

failures=0
fail() { echo "installed_docs_test: FAIL: $*" >&2; failures=$((failures + 1)); }

while IFS= read -r page; do
  rel=${page#"$docdir"/}
  [[ -f $src/$rel ]] || fail "$rel is installed but is not README.md or under docs/ in the source"
done < <(find "$docdir" -name '*.md' | sort)
# Every link resolves where the pages are installed, anchors included; a link
# into the source tree (tests/, cmd/, DEVELOPERS.md) would dangle in the .deb.
python3 "$(dirname "$0")/doc_links.py" "$docdir" || failures=$((failures + 1))

while IFS= read -r named; do
  path=${named%.}
  [[ -e $stage$path ]] || fail "$path is named in the tree but not installed"
done < <(grep -rhoE '/usr/share/doc/oci-rlimit(/[A-Za-z0-9._-]+)*' \
  "$src"/packaging "$src"/cmd "$src"/lib "$src"/docs "$src"/README.md | sort -u)

echo "installed_docs_test: $failures failure(s)"
((failures == 0))
