// `oci-rlimit node ...`: the handler the command table (../args.cc) runs; it
// reads its own argv (node_args.h).
#pragma once

#include <string>
#include <vector>

namespace ocirlimit::cli {

// args: the argv after "node".
[[nodiscard]] int NodeCommand(const std::vector<std::string>& args);  // node_cmd.cc

}  // namespace ocirlimit::cli
