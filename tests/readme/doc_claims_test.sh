#!/usr/bin/env bash
# Claims that were once true and are not any more, about other projects (issue
# 39 "Docs") and about our own programs (issue 47): each stale wording must be
# gone from docs/, README.md and the man pages, and the true one present where
# the docs make the claim.
#   doc_claims_test.sh [SOURCE_DIR]     exit 1 and one line per stale claim
set -euo pipefail
shopt -s nullglob
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
docs=(README.md docs/*.md docs/guides/*.md docs/evidence/*.md packaging/man/*.8)
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

# Issue 47: our own programs, as a new user checks them.
# The RuntimeClass is run here: tests/cri, tests/crio and tests/cluster.
stale "RuntimeClass itself is not run here" "tests/cri and tests/cluster run it"
needs docs/evidence/runtime-mode.md "ExamplePodReadsItsLimitThroughTheRuntimeClass" "the cluster test runs it"
# audit: an explicit --runtime-root it cannot list is exit 2; as a user the
# containerd glob matches nothing, silently.
stale "\`--runtime-root\` that is not a directory is a usage error" "or cannot be listed: exit 2"
needs docs/audit.md "\`/run/containerd/runc/\*\` matches nothing" "a user's audit skips it silently"
stale "a \`--runtime-root\` that is not a directory\.$" "or cannot be listed: exit 2"
# validate's warning, as the binary prints it.
stale "add a devices, namespaces or pods condition" "the binary says: devices or namespaces"
needs docs/policy.md "add a devices or namespaces condition" "validate's warning verbatim"
# --debug-caps: alone to stdout, with an operation to stderr.
stale "^stderr; alone, it touches no process" "alone it prints to stdout"
needs packaging/man/oci-prlimit-helper.8 "alone, to stdout" "--debug-caps alone prints to stdout"
grep -q "dropped them) to stderr" cmd/prlimit-helper/helper_output.cc &&
  { echo "stale claim: helper --help: --debug-caps alone prints to stdout"; rc=1; }
# The package table names the NRI plugin, its unit and its directory.
stale "\`oci-prlimit-helper\`, \`oci-rlimit\` \| the programs" "oci-rlimit-nri ships too"
needs docs/deployment.md "/usr/lib/systemd/system/oci-rlimit-nri.service" "the NRI unit ships"
needs docs/deployment.md "^\| \`/usr/share/oci-rlimit/nri/\` \|" "the pre-registered link ships"
# exec runs `RUNTIME state ID` when rules or requests need the spec.
stale "runs no \`state\` or \`--version\`" "exec runs RUNTIME state ID for rules and requests"
# install.sh probes every program, the wrapper included.
grep -q "!= oci-rlimit-runtime \]\] || continue" packaging/kubernetes/install.sh &&
  { echo "stale claim: install.sh skips oci-rlimit-runtime's --version"; rc=1; }
# oci-rlimit.8 has the node command in its synopsis and description.
needs packaging/man/oci-rlimit.8 "^\.B oci-rlimit node$" "node in the SYNOPSIS"
needs packaging/man/oci-rlimit.8 "^\.B node$" "node in the DESCRIPTION"
# Usage lines as the programs print them.
needs docs/nri.md "^ +\[--metrics-address ADDR\] \[--node-name NAME\]" "nri.md's usage: --node-name"
needs docs/audit.md "\[--format text\|json\|prometheus\] \[--output FILE\] \[--node-name NAME\]" \
  "audit.md's usage: --format, --output, --node-name"
needs README.md "\`oci-rlimit-nri\.8\`" "README's man pages: oci-rlimit-nri.8"
stale ":PORT\` \(the same as \`0\.0\.0\.0:PORT\`" ":PORT is every IPv4 address, said one way"
grep -q ":PORT (every address)" cmd/nri/flow.cc &&
  { echo "stale claim: oci-rlimit-nri --help: :PORT is every IPv4 address"; rc=1; }
# One config-path rule: doctor reads $OCI_RLIMIT_CONFIG, the wrapper takes --config.
stale "not \\\$OCI_RLIMIT_CONFIG" "doctor reads \$OCI_RLIMIT_CONFIG"
stale "there is no \\\\fB\\\\-\\\\-config\\\\fR" "the wrapper takes --config"
stale "it has no \`--config\` flag" "the wrapper takes --config"
stale "takes no flag of its own" "the wrapper takes --config"
grep -q "not \$OCI_RLIMIT_CONFIG" cmd/cli/args.cc &&
  { echo "stale claim: oci-rlimit --help: doctor reads \$OCI_RLIMIT_CONFIG"; rc=1; }
# The quick starts say first what a limit above the engine's needs; podman as it runs.
needs README.md "^\*\*What they need\.\*\*" "README's quick starts: CAP_SYS_RESOURCE first"
needs README.md "^podman run --rm --network none busybox" "the podman quick start as it runs"
# Issue 44: audit judges a container by the decision recorded at its creation.
stale "reports the old ones as \`over\` or \`missing\`" "audit judges them by their recorded decision"
stale "^- It reads the policy as this node's config says now" "only a container without a record is"
needs docs/guides/audit-alerts.md "^oci-rlimit audit --heal --policy-now$" "the audit guide: --policy-now"
needs docs/guides/audit-alerts.md "\| \`older-policy\` \|" "the audit guide: an older policy's decision"
needs docs/guides/nri-plugin.md "/run/oci-rlimit/decisions/" "the NRI guide: where decisions are recorded"
exit "$rc"
