// oci-rlimit-hook's flow: parse argv, load the config, then either apply
// (createRuntime/prestart: state on stdin, limits on the container's init
// process, then chain mode) or edit (precreate: spec on stdin, spec on
// stdout). Every effect goes through HookOps (hook/ops.h).
//
// on-error: a failure about this container (bad state, unreadable spec,
// malformed or rejected request, failed apply) exits 1 under "fail" and 0
// with a warning under "warn"; an unreadable config, usage errors and chain
// failures (missing target, a chain to itself, a failed exec) always fail.
// precreate under "warn" writes stdin back unchanged; under "fail" it
// writes nothing.
#pragma once

#include <string>
#include <vector>

#include "hook/ops.h"

namespace ocirlimit {

inline constexpr const char* kHookName = "oci-rlimit-hook";

// argv includes argv[0]. Returns the exit status; in chain mode it returns
// only when the chained hook was not exec'd.
int RunHook(const std::vector<std::string>& argv, HookOps& ops);

}  // namespace ocirlimit
