#!/usr/bin/env bash
# Claims about other projects that were once true and are not any more (issue
# 39 "Docs"): each stale wording must be gone from docs/ and README.md, and the
# true one present where the docs make the claim.
#   doc_claims_test.sh [SOURCE_DIR]     exit 1 and one line per stale claim
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
docs=(README.md docs/*.md)
rc=0
stale() {  # PATTERN WHY
  local hits
  if hits=$(grep -nE -- "$1" "${docs[@]}"); then
    while IFS= read -r h; do echo "stale claim: $h: $2"; done <<<"$hits"
    rc=1
  fi
}
needs() {  # FILE PATTERN WHY
  grep -qE -- "$2" "$1" || { echo "missing claim: $1: $3"; rc=1; }
}
# KEP-5758's current text: only the privileged Pod Security level lets a pod set ulimits.
stale "baseline\` forbids (only )?\`-1\`" "KEP-5758 lets only privileged pods set ulimits"
stale "\`baseline\`: no \`-1\`" "KEP-5758 lets only privileged pods set ulimits"
needs docs/policy.md "only Pod Security's \`privileged\` level" "KEP-5758: privileged only"
# containerd/nri v0.12.0 fixed the ulimit-adjuster README's example (type:, not path:).
stale "README example writes \`path:\`" "fixed upstream in containerd/nri v0.12.0"
# containerd 2.3.0 passes Container.rlimits to NRI plugins (commit 7b85525).
for f in docs/policy.md docs/nri.md; do
  needs "$f" "2\.3\.0 and later" "containerd 2.3.0+ passes Container.rlimits"
done
# audit's hint: an unquoted DIR/* is expanded by the shell into extra arguments.
stale "or \`/run/containerd/runc/\*\` for" "quote it: --runtime-root '/run/containerd/runc/*'"
exit "$rc"
