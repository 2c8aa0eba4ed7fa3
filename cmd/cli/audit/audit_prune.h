// audit --heal's prune of decision records (docs/audit.md, "Pruning
// decision records"): a record stays behind when its container goes while
// oci-rlimit-nri is down (RemoveContainer missed) or on the wrapper's path.
// A record goes only when all of these hold:
//  - it is root's own, whole (DecisionStore::Read believes it);
//  - its container is absent from every state root audit knows (the default
//    roots, whatever --no-default-roots says, and each --runtime-root): each
//    root listed, the id not in it; one root that cannot be listed proves
//    nothing, and then no record goes;
//  - it is older than kPruneGrace (effects/decisions.h): a create in flight
//    writes its record before the runtime's state exists.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "effects/decisions.h"
#include "effects/fs_ops.h"

namespace ocirlimit {

struct PruneReport {
  std::vector<std::string> pruned;  // the ids whose records went
  // Why nothing was pruned (a root or the records unreadable), or "".
  std::string not_proven;
  std::vector<std::string> kept;  // "ID: why" for a record left that looked gone
};

// `patterns`: state roots as audit takes them ("/run/containerd/runc/*").
[[nodiscard]] PruneReport PruneDecisions(DecisionStore& store, FsOps& fs,
                                         const std::vector<std::string>& patterns, std::time_t now);

// The lines audit's table adds for `pruned` and `not_proven`.
[[nodiscard]] std::string PruneText(const std::vector<std::string>& pruned,
                                    const std::string& not_proven);

}  // namespace ocirlimit
