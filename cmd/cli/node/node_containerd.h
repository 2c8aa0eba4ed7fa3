// `oci-rlimit node containerd install|uninstall`: node_config.h's edit of
// one containerd config file, read and atomically replaced (a missing file
// is created by install; uninstall --delete-if-empty removes a file left
// with only its version). The file syscalls are node_containerd_linux.cc.
#pragma once

#include <ostream>

#include "cli/node/node_args.h"

namespace ocirlimit::node {

// Prints key=value lines on `out`: changed=yes|no, version=N,
// base-binary=PATH, deleted=yes|no. Returns 0 done, 1 refused or failed
// (nothing changed).
[[nodiscard]] int RunContainerdEdit(const ContainerdArgs& a, std::ostream& out, std::ostream& err);

}  // namespace ocirlimit::node
