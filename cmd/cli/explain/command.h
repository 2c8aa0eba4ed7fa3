// `oci-rlimit validate` and `oci-rlimit explain`: the handlers the command
// table (../args.cc) runs.
#pragma once

#include "cli/common/cli_args.h"

namespace ocirlimit::cli {

[[nodiscard]] int ValidateCommand(const CliArgs& a);  // cmd_validate.cc
[[nodiscard]] int ExplainCommand(const CliArgs& a);   // cmd_explain.cc

}  // namespace ocirlimit::cli
