#include "read_limits.h"

#include <cerrno>

namespace ocirlimit {

ReadOutcome ReadRlimits(ProcessOps& ops, pid_t pid) {
  ReadOutcome out;
  auto fail = [&](Error e, ApplyFailure f) {
    out.limits.clear();
    out.error = std::move(e);
    out.failure = f;
    return out;
  };
  const std::string target = "pid " + std::to_string(pid);
  if (pid <= 1)
    return fail(MakeError(target + ": refusing to touch pid 0 or 1"), ApplyFailure::kInvalidTarget);
  auto pidfd = ops.OpenPidfd(pid);
  if (!pidfd) {
    if (pidfd.error().err == ESRCH)
      return fail(MakeError(target + ": no such process"), ApplyFailure::kTargetGone);
    return fail(pidfd.error().Wrap(target), ApplyFailure::kOther);
  }
  for (const auto& info : AllRlimits()) {
    auto value = ops.GetLimit(pid, info.resource);
    if (!value) {
      ops.ClosePidfd(*pidfd);
      int err = value.error().err;
      if (err == ESRCH)
        return fail(MakeError(target + ": process exited"), ApplyFailure::kTargetGone);
      return fail(value.error().Wrap(target + ": " + std::string(info.name)),
                  err == EPERM ? ApplyFailure::kPermission : ApplyFailure::kOther);
    }
    out.limits.push_back({info.resource, value->soft, value->hard});
  }
  // Alive after the last read means the pid was never reused while we read.
  Status alive = ops.CheckAlive(*pidfd);
  ops.ClosePidfd(*pidfd);
  if (!alive) {
    return fail(MakeError(target + ": process exited while its limits were being read"),
                ApplyFailure::kTargetGone);
  }
  return out;
}

}  // namespace ocirlimit
