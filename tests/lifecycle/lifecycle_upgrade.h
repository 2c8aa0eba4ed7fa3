// The lifecycle test's upgrade (docs/daemons-testing.md, "The lifecycle
// test"): oci-rlimit-nri and oci-rlimit-runtime built at an earlier commit
// (scripts/build-at-commit.sh, before decision records existed) run first,
// then this build's replace them, as a package upgrade does: the wrapper's
// file replaced whole where the engine runs it, the plugin restarted.
#pragma once

#include <optional>
#include <string>

namespace ocirlimit::itest::lifecycle {

class LifecycleNode;

// The directory of the earlier commit's programs; .ci/run points it at what
// scripts/test.sh built (build-old/bin).
inline constexpr const char* kOldBinDirVar = "OCI_RLIMIT_OLD_BIN_DIR";

struct OldBinaries {
  std::string dir;    // holds oci-rlimit-nri and oci-rlimit-runtime
  std::string skip;   // unset: the one line that says the upgrade is left out
  std::string error;  // set, with a program missing: the test fails
};
OldBinaries FindOldBinaries();

// Allows the upgrade on `node` when the earlier build is there, prints the
// skip line once when it is not; the error text when the variable is wrong.
[[nodiscard]] std::optional<std::string> OfferUpgrade(LifecycleNode& node);

// The wrapper and the plugin from `dir` replace the node's: the wrapper's
// file renamed over the one the engine runs, the plugin killed and, when it
// ran, started from `dir` (its heal done when this returns).
[[nodiscard]] std::optional<std::string> SwapBinaries(LifecycleNode& node, const std::string& dir);

}  // namespace ocirlimit::itest::lifecycle
