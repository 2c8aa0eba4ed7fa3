// Finding the running containers of a node for `oci-rlimit audit`: every
// container directory under the OCI runtimes' state roots, its init process
// and bundle from the runtime's state (adapters/oci/runtime_state.h), and
// its facts from the bundle's config.json. Over FsOps, so it is tested on
// fake state roots (docs/audit.md, "Where audit looks").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/oci/runtime_state.h"
#include "core/policy.h"
#include "effects/fs_ops.h"

namespace ocirlimit {

// The roots audit looks in by default: DefaultStateRoots()
// (adapters/oci/runtime_state.h).

struct FoundContainer {
  std::string root;  // the state root it was found under
  std::string id;    // its directory name there, the container id
  std::optional<RuntimeState> state;
  std::optional<ContainerFacts> facts;  // when read (the policy needs the spec)
  std::string problem;                  // why it cannot be audited; empty when it can
};

struct Discovery {
  std::vector<std::string> roots;  // the roots that exist, expanded, in order
  std::vector<FoundContainer> containers;
  // Roots that exist but could not be listed ("ROOT: open directory ...:
  // Permission denied"): audit as a user cannot see root's containers.
  std::vector<std::string> unreadable;
};

// Expands `patterns` (defaults, then --runtime-root), skips roots that do not
// exist (ENOENT, ENOTDIR) and a root met twice, and reads each container. `need_facts`: read
// the bundle's config.json (a crun state dir's copy when the bundle is gone).
[[nodiscard]] Discovery DiscoverContainers(FsOps& fs, const std::vector<std::string>& patterns,
                                           bool need_facts);

}  // namespace ocirlimit
