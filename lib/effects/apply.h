// Applying rlimits to a process that we do not own, safely: the target is
// pinned with a pidfd first, and confirmed alive after every prlimit(2), so
// a PID that died and was reused is never reported as done. The hook and
// oci-prlimit-helper both apply through here; the helper's --get reads
// through the same PinnedProcess.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/unprivileged.h"
#include "effects/process_ops.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

enum class ApplyFailure {
  kNone,
  kInvalidTarget,  // pid <= 1
  kTargetGone,     // no such process, or it exited during the apply
  kPermission,     // EPERM, e.g. a hard-limit raise without CAP_SYS_RESOURCE
  kOther,
};

// ESRCH: gone; EPERM: permission; anything else: other.
ApplyFailure ClassifyErrno(int err);

struct PinFailure {
  Error error;
  ApplyFailure failure = ApplyFailure::kOther;
};

// The pid-pinning sequence: refuse pid <= 1, open a pidfd, and later confirm
// the process still alive. While the pidfd reports it alive, `pid` cannot
// have been reused, so whatever was done to `pid` reached the pinned process.
class PinnedProcess {
 public:
  PinnedProcess(ProcessOps& ops, pid_t pid);
  ~PinnedProcess();
  PinnedProcess(const PinnedProcess&) = delete;
  PinnedProcess& operator=(const PinnedProcess&) = delete;

  // Why the process could not be pinned; nullopt when it was.
  const std::optional<PinFailure>& failure() const { return failure_; }
  // nullopt while the pinned process lives; else "pid N: process exited WHEN".
  std::optional<PinFailure> CheckAlive(const std::string& when) const;
  // "pid N", the prefix of every error about it.
  const std::string& target() const { return target_; }

 private:
  ProcessOps& ops_;
  std::string target_;
  int pidfd_ = -1;
  std::optional<PinFailure> failure_;
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
[[nodiscard]] Result<Fitted> FitForCaller(ProcessOps& ops, pid_t pid,
                                          const std::vector<Rlimit>& limits, Rootless mode);

}  // namespace ocirlimit
