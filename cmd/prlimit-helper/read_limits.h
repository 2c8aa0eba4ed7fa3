// Reading every rlimit of a process we do not own, with the same pidfd
// pinning as ApplyRlimits (PinnedProcess): values read from a PID that was reused while we
// read are never reported as the target's.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "effects/apply.h"
#include "effects/process_ops.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

struct ReadOutcome {
  std::vector<Rlimit> limits;  // all 16, in the kernel's order, when ok
  std::optional<Error> error;
  ApplyFailure failure = ApplyFailure::kNone;
  bool ok() const { return !error.has_value(); }
};

ReadOutcome ReadRlimits(ProcessOps& ops, pid_t pid);

}  // namespace ocirlimit
