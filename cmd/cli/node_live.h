// Containers created through the wrapper that still exist, found through the
// low-level runtime's own state: runc's ROOT/ID/state.json and crun's
// ROOT/ID/status under the --root directories the wrapper is called with
// (containerd's runc shim: /run/containerd/runc/NAMESPACE, or the handler's
// options.Root; CRI-O: /run/runc, /run/crun, or the handler's runtime_root).
// A container is the wrapper's when the runc shim's `runtime` file in its
// bundle names the wrapper (containerd), or when its config.json says CRI-O
// created it for one of the wrapper's handlers. Uninstall keeps the wrapper
// while any of them exists: stop, exec and delete all go through it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ocirlimit::node {

// The bundle directory a runtime's state file names: runc's state.json
// ("config": {"labels": ["bundle=DIR", ...]}) or crun's status ("bundle").
std::optional<std::string> BundleOfState(std::string_view state_json);

struct LiveContainer {
  std::string id;
  std::string root;  // the runtime --root it is under (a node path)
};

struct LiveQuery {
  std::string host;                        // the node's root directory
  std::vector<std::string> roots;          // node paths; each holds IDs or NAMESPACE/IDs
  std::string wrapper;                     // PREFIX/bin/oci-rlimit-runtime (a node path)
  std::vector<std::string> crio_handlers;  // CRI-O handler names that run the wrapper
};

// Every container of `q.roots` created through the wrapper, sorted by id.
std::vector<LiveContainer> ContainersThroughWrapper(const LiveQuery& q);

}  // namespace ocirlimit::node
