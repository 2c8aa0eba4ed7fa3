#!/usr/bin/env bash
# doc_links.py can fail: a clean pair of pages passes, and each planted link
# that would dangle in the .deb is refused with its own line.
#   doc_links_refuses_planted.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: doc_links_refuses_planted.sh SOURCE_DIR}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

page() {  # DIR: a README and a page that link to each other's headings
  mkdir -p "$1/docs/evidence"
  printf '# Top\n\nSee [a](docs/a.md#docker---gpus-chain-mode).\n' >"$1/README.md"
  printf '# A\n\n## Docker `--gpus` (chain mode)\n\n[top](../README.md#top), [ev](evidence/e.md#e).\n' \
    >"$1/docs/a.md"
  printf '# E\n\n[back](../a.md#a)\n' >"$1/docs/evidence/e.md"
}

page "$tmp/clean"
python3 "$src/tests/readme/doc_links.py" "$tmp/clean" >/dev/null ||
  { echo "doc_links_refuses_planted: FAIL: the clean pages were refused"; rc=1; }

plant() {  # NAME LINE WANT: append LINE to docs/a.md; the checker must say WANT
  local dir=$tmp/$1 out
  page "$dir"
  printf '%s\n' "$2" >>"$dir/docs/a.md"
  if out=$(python3 "$src/tests/readme/doc_links.py" "$dir" 2>&1); then
    echo "doc_links_refuses_planted: FAIL: $1 passed: $2"; rc=1
  elif ! grep -qF -- "$3" <<<"$out"; then
    echo "doc_links_refuses_planted: FAIL: $1 said: $out"; rc=1
  fi
}
plant into_tests '[t](../tests/crio/crio_nvidia_test.cc)' "is not installed (a source file"
plant developers '[d](../DEVELOPERS.md)' "DEVELOPERS.md is not installed"
plant out_of_docs '[o](../../etc/passwd)' "leads out of the installed docs"
plant bad_anchor '[x](evidence/e.md#nothing)' "has no heading #nothing"
plant own_anchor '[x](#no-such-heading)' "has no heading #no-such-heading"
plant fenced_heading $'```\n## Fenced\n```\n[f](#fenced)' "has no heading #fenced"
echo "doc_links_refuses_planted: $([[ $rc == 0 ]] && echo ok || echo FAILED)"
exit "$rc"
