// `oci-rlimit doctor`: the handler the command table (../args.cc) runs.
#pragma once

#include "cli/common/cli_args.h"

namespace ocirlimit::cli {

[[nodiscard]] int DoctorCommand(const CliArgs& a);  // cmd_doctor.cc

}  // namespace ocirlimit::cli
