#!/usr/bin/env bash
# A longer soak of the lifecycle test (docs/daemons-testing.md, "The
# lifecycle test"): ROUNDS random sequences of SECONDS each on containerd 2.x
# and on CRI-O, a new seed each round; prints every failing seed with its
# replay line. Needs a built tree (build/) and, for CRI-O,
# OCI_RLIMIT_CLUSTER_DIR.
#   scripts/soak-lifecycle.sh [SECONDS] [ROUNDS]     defaults: 600 5
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seconds=${1:-600}
rounds=${2:-5}
failed=0
for ((i = 1; i <= rounds; i++)); do
  seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
  # The binaries themselves: ctest's per-test timeout would end a long soak
  # (crio_integration_test starts its own crio when no ctest fixture gave one).
  for run in 'lifecycle_test ContainerdLifecycleTest.Random*' \
             'crio_integration_test CrioLifecycleTest.Random*'; do
    read -r bin filter <<<"$run"
    echo "soak: round $i, seed $seed, $bin $filter"
    if ! OCI_RLIMIT_LIFECYCLE_SEED=$seed OCI_RLIMIT_LIFECYCLE_SECONDS=$seconds \
      "build/bin/$bin" --gtest_filter="$filter"; then
      echo "soak: FAILED: OCI_RLIMIT_LIFECYCLE_SEED=$seed build/bin/$bin --gtest_filter='$filter'"
      failed=$((failed + 1))
    fi
  done
done
echo "soak: $failed failing sequence(s) in $rounds round(s)"
((failed == 0))
