// `oci-rlimit audit`: the handler the command table (../args.cc) runs.
#pragma once

#include "cli/common/cli_args.h"

namespace ocirlimit::cli {

[[nodiscard]] int AuditCommand(const CliArgs& a);  // cmd_audit.cc

}  // namespace ocirlimit::cli
