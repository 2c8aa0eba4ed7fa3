// `oci-rlimit node ...`: the node installer's config edits (node_config.h),
// reading and atomically replacing the files. Used by
// packaging/kubernetes/install.sh; docs/deployment.md.
#pragma once

#include <string>
#include <vector>

namespace ocirlimit {

// argv after "node". Returns the exit status: 0 done, 1 refused or failed
// (nothing changed), 2 usage.
int NodeMain(const std::vector<std::string>& args);

}  // namespace ocirlimit
