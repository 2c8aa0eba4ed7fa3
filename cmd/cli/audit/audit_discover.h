// Finding the running containers of a node for `oci-rlimit audit`: every
// container directory under the OCI runtimes' state roots, its init process
// and bundle from the runtime's state (adapters/oci/runtime_state.h), and
// its facts from the bundle's config.json. Over FsOps, so it is tested on
// fake state roots (docs/audit.md, "Where audit looks").
#pragma once

#include <map>
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
  // The runtime binary containerd's shim ran for it (options.json beside
  // the bundle), when `need_origin`; "" when none was recorded.
  std::string binary_name;
  // CRI-O's runtime handler, from its pod sandbox's config.json (a
  // container names its sandbox; only the sandbox carries the handler).
  std::string runtime_handler;
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
  // Directories under a root that hold containers one level down (ctr's
  // /run/containerd/runc/<namespace>): not containers, a hint to name them.
  std::vector<std::string> namespace_dirs;
  std::vector<std::string> notes;  // what could not be read beside the roots, said once
};

// Expands `patterns` (defaults, then --runtime-root), skips roots that do not
// exist (ENOENT, ENOTDIR) and a root met twice, and reads each container. `need_facts`: read
// the bundle's config.json (a crun state dir's copy when the bundle is gone).
// A container that names its pod sandbox (io.kubernetes.cri.sandbox-id,
// io.kubernetes.cri-o.SandboxID) is linked to that sandbox found under the
// same root, read by the same rules: the sandbox's annotations the
// container lacks join its facts as the pod's (runtime-owned keys aside),
// the way NRI hands a plugin the pod with the container. `need_origin`: read
// the shim's options.json too.
// Every file is read through FsOps::ReadTrusted (no symlink followed, one
// owner) and its owner kept; a user's state names a bundle of that user's only.
[[nodiscard]] Discovery DiscoverContainers(FsOps& fs, const std::vector<std::string>& patterns,
                                           bool need_facts, bool need_origin = false);

// containerd (1.7, 2.x) keeps a CRI pod's annotations only in its metadata
// database (adapters/engines/containerd_meta.h), under `containerd_root`: for each
// container with facts that names a containerd sandbox and whose bundle is
// containerd's (.../io.containerd.runtime.v2.task/NAMESPACE/ID), the pod's
// annotations it lacks join its facts (runtime-owned keys aside). A database
// that cannot be read is said once in `d.notes`.
void AddContainerdPodAnnotations(FsOps& fs, const std::string& containerd_root, Discovery& d);

// CRI-O with drop_infra_ctr = true (its default) keeps no sandbox state
// under any runtime root, and a workload container's config.json does not
// name the pod's handler: for each root-owned container with facts that names
// a CRI-O sandbox and no handler, the handler comes from the sandbox's
// config.json in CRI-O's storage, `storage_root`/DRIVER-containers/SANDBOX/
// userdata/config.json, read only as root wrote it (node_crio_pods.h).
void AddCrioPodHandlers(FsOps& fs, const std::string& storage_root, Discovery& d);

// The sandbox a container's annotations name, or "".
[[nodiscard]] std::string SandboxIdOf(const std::map<std::string, std::string>& annotations);

}  // namespace ocirlimit
