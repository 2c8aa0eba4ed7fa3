// Containers created through the wrapper that still exist, found through the
// low-level runtime's own state: runc's ROOT/ID/state.json and crun's
// ROOT/ID/status under the --root directories the wrapper is called with
// (containerd's runc shim: /run/containerd/runc/NAMESPACE, or the handler's
// options.Root; CRI-O: /run/runc, /run/crun, or the handler's runtime_root).
// A container is the wrapper's when the runc shim's `runtime` file in its
// bundle names the wrapper (containerd), or when its config.json says CRI-O
// created it for one of the wrapper's handlers. Uninstall keeps the wrapper
// while any of them exists: stop, exec and delete all go through it. The
// state files are read as audit reads them (adapters/oci/runtime_state.h),
// but only for the bundle: a state that audit refuses (no init PID) still
// keeps the wrapper. Only root's state counts, and only a bundle of root's
// says whose a container is: a user's state proves nothing to root
// (effects/container_proof.h, Distrust), so it never keeps the wrapper, and
// nothing it names is read. Every file is read only as its one owner wrote
// it, no symlink followed, never a FIFO or a device (FsOps::ReadTrusted).
#pragma once

#include <string>
#include <vector>

namespace ocirlimit::node {

struct LiveContainer {
  std::string id;
  std::string root;  // the runtime --root it is under (a node path)
};

struct LiveQuery {
  std::string host;  // the node's root directory
  // Node paths, each holding IDs or NAMESPACE/IDs; a "*" component stands
  // for every subdirectory there (DefaultStateRoots()).
  std::vector<std::string> roots;
  std::string wrapper;                     // PREFIX/bin/oci-rlimit-runtime (a node path)
  std::vector<std::string> crio_handlers;  // CRI-O handler names that run the wrapper
};

// Every container of `q.roots` created through the wrapper, sorted by id.
std::vector<LiveContainer> ContainersThroughWrapper(const LiveQuery& q);

}  // namespace ocirlimit::node
