// oci-rlimit-nri as a whole: arguments, config (and its reload on SIGHUP),
// the connection loop.
#pragma once

#include <string>
#include <vector>

namespace ocirlimit::nri {

// arguments excludes argv[0]. Returns the exit status.
int RunNriPlugin(const std::vector<std::string>& arguments);

}  // namespace ocirlimit::nri
