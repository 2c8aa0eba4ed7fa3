// oci-prlimit-helper's flow: argv, the privilege drop, the target (--pid, or
// a hook's state on stdin), its checks, then --get or the apply, over
// HelperOps (ops.h). main.cc only picks the ops.
#pragma once

#include <string>
#include <vector>

#include "prlimit-helper/ops.h"

namespace ocirlimit {

// args excludes argv[0]; test_build: the flags of oci-prlimit-helper-testing.
// Returns the exit status (--help lists them: 0 ok, 1 failure, 2 usage, ...).
[[nodiscard]] int RunHelper(const std::vector<std::string>& args, HelperOps& ops, bool test_build);

}  // namespace ocirlimit
