// NodeOps on a real filesystem: "/" for this node, or a fixture root under
// which every node path (and every absolute symlink target) is looked up.
#pragma once

#include <memory>
#include <string>

#include "cli/doctor.h"

namespace ocirlimit {

std::unique_ptr<NodeOps> RootedNodeOps(const std::string& root);

}  // namespace ocirlimit
