// What the runtime the wrapper execs can set, checked before it runs: a
// rootless caller's limits fitted to ours, and a hard raise we cannot make
// said in the words every path uses.
#pragma once

#include "core/admission.h"
#include "core/config.h"
#include "formats/error.h"
#include "runtime/ops.h"

namespace ocirlimit {

// Outside the initial user namespace (a rootless engine) the runtime we
// exec cannot raise a hard limit above ours: clamp the values we write
// instead of handing it a spec it fails on (core/unprivileged.h). A
// warning joins the verdict's.
[[nodiscard]] Status FitToCaller(RuntimeOps& ops, Rootless rootless, Verdict& v);

// A hard limit above ours cannot be set by the runtime we exec either, so
// without CAP_SYS_RESOURCE it is said here (core/unraisable.h), instead of
// leaving the user runc's bare `error setting rlimit type 8: operation not
// permitted`.
[[nodiscard]] Status CheckRaisableHere(RuntimeOps& ops, const Verdict& v);

}  // namespace ocirlimit
