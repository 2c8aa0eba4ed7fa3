// NodeOps (node_ops.h) on a real filesystem: "/" for this node, or a fixture
// root under which every node path (and every absolute symlink target) is
// looked up. Doctor reads the node through it, and `node install` its loop
// check (node_loop.h). The syscalls are rooted_node_ops_linux.cc.
#pragma once

#include <memory>
#include <string>

#include "node/node_ops.h"

namespace ocirlimit {

std::unique_ptr<NodeOps> RootedNodeOps(const std::string& root);

}  // namespace ocirlimit
