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
  // Whose state named the process: 0 when the state root and the state file
  // are root's; else the uid that owns one of them (a rootless engine's, or a
  // forgery). Only root's state may name a process to heal outright; a
  // user's, only one inside that container (effects/heal.h ContainerProof).
  uid_t owner = 0;
  // Whether the facts came from root's files only (state, bundle and its
  // config.json). When not, the node facts (devices, annotations, the pod)
  // are dropped and only the author's (env, process.rlimits) are kept.
  bool facts_trusted = true;
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
// Every file is read through FsOps::ReadBeneath (no symlink followed) and
// its owner kept; a user's state names a bundle of that user's only.
[[nodiscard]] Discovery DiscoverContainers(FsOps& fs, const std::vector<std::string>& patterns,
                                           bool need_facts);

}  // namespace ocirlimit
