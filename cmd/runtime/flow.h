// oci-rlimit-runtime's flow: parse argv, load the config, find the low-level
// runtime, edit the spec for create/run or the process file for exec, then
// exec the runtime with the argv it was given. Any failure before the exec
// is reported and the runtime is not run.
#pragma once

#include <string>
#include <vector>

#include "runtime/ops.h"

namespace ocirlimit {

inline constexpr const char* kRuntimeName = "oci-rlimit-runtime";

// argv includes argv[0]. Returns only when the runtime was not exec'd: the
// exit status to use.
int RunRuntimeWrapper(const std::vector<std::string>& argv, RuntimeOps& ops);

}  // namespace ocirlimit
