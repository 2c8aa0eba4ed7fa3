// Applying rlimits to a process that we do not own, safely: the target is
// pinned with a pidfd first, and confirmed alive after every prlimit(2), so
// a PID that died and was reused is never reported as done.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/unprivileged.h"
#include "error.h"
#include "process_ops.h"
#include "rlimit.h"

namespace ocirlimit {

struct Change {
  int resource = -1;
  LimitPair before;
  LimitPair after;
};

enum class ApplyFailure {
  kNone,
  kInvalidTarget,  // pid <= 1
  kTargetGone,     // no such process, or it exited during the apply
  kPermission,     // EPERM, e.g. a hard-limit raise without CAP_SYS_RESOURCE
  kOther,
};

struct ApplyOutcome {
  std::vector<Change> applied;  // in order; on failure, those done before it
  std::optional<Error> error;
  ApplyFailure failure = ApplyFailure::kNone;
  bool ok() const { return !error.has_value(); }
};

ApplyOutcome ApplyRlimits(ProcessOps& ops, pid_t pid, const std::vector<Rlimit>& limits);

// `limits` as far as this caller can set them on `pid`: unchanged in the
// initial user namespace (a hard raise then fails in ApplyRlimits, as the
// admin asked for something impossible); outside it (a rootless engine),
// fitted to the target's current limits by FitToUnprivilegedCaller, with its
// warning, or its error under rootless = "fail".
Result<Fitted> FitForCaller(ProcessOps& ops, pid_t pid, const std::vector<Rlimit>& limits,
                            Rootless mode);

// "memlock 8388608:8388608->unlimited:unlimited nofile ..."
std::string FormatChanges(const std::vector<Change>& changes);

}  // namespace ocirlimit
