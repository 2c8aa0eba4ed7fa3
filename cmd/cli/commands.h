// oci-rlimit's flow: RunCli reads argv (args.h) and runs the command's
// handler from the table; each command family has its folder below
// (doctor/, audit/, explain/ for validate and explain, node/), exposing its
// handler in its command.h. Each prints a table, or JSON with --json, and
// returns the exit status: 0 fine, 1 something is wrong, 2 usage.
#pragma once

#include <string>
#include <vector>

#include "cli/common/cli_args.h"

namespace ocirlimit::cli {

// argv without argv[0].
[[nodiscard]] int RunCli(const std::vector<std::string>& args);

}  // namespace ocirlimit::cli
