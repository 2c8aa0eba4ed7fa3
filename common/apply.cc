#include "apply.h"

#include <cerrno>

namespace ocirlimit {
namespace {

std::string Pair(LimitPair p) { return FormatLimitValue(p.soft) + ":" + FormatLimitValue(p.hard); }

class PidfdGuard {
 public:
  PidfdGuard(ProcessOps& ops, int fd) : ops_(ops), fd_(fd) {}
  ~PidfdGuard() { ops_.ClosePidfd(fd_); }
  PidfdGuard(const PidfdGuard&) = delete;
  PidfdGuard& operator=(const PidfdGuard&) = delete;

 private:
  ProcessOps& ops_;
  int fd_;
};

ApplyFailure Classify(int err) {
  if (err == ESRCH) return ApplyFailure::kTargetGone;
  if (err == EPERM) return ApplyFailure::kPermission;
  return ApplyFailure::kOther;
}

// Only ESRCH means the process exited; any other failure is ours (a bad
// pidfd, say) and must not be reported as a vanished container.
Error NotAlive(const Error& e, const std::string& target, const std::string& when) {
  if (e.err == ESRCH) return MakeError(target + ": process exited " + when);
  return e.Wrap(target + ": cannot check that the process is alive");
}

}  // namespace

ApplyOutcome ApplyRlimits(ProcessOps& ops, pid_t pid, const std::vector<Rlimit>& limits) {
  ApplyOutcome out;
  auto fail = [&](Error e, ApplyFailure f) {
    out.error = std::move(e);
    out.failure = f;
    return out;
  };
  const std::string target = "pid " + std::to_string(pid);
  if (pid <= 1) {
    return fail(MakeError(target + ": refusing to touch pid 0 or 1"), ApplyFailure::kInvalidTarget);
  }

  auto pidfd = ops.OpenPidfd(pid);
  if (!pidfd) {
    if (pidfd.error().err == ESRCH) {
      return fail(MakeError(target + ": no such process"), ApplyFailure::kTargetGone);
    }
    return fail(pidfd.error().Wrap(target), Classify(pidfd.error().err));
  }
  PidfdGuard guard(ops, *pidfd);

  for (const auto& limit : limits) {
    const std::string what = target + ": " + std::string(limit.info().name);
    if (auto alive = ops.CheckAlive(*pidfd); !alive) {
      return fail(NotAlive(alive.error(), target, "before its limits were set"),
                  Classify(alive.error().err));
    }
    LimitPair want{limit.soft, limit.hard};
    auto before = ops.SetLimit(pid, limit.resource, want);
    if (!before) {
      int err = before.error().err;
      if (err == EPERM) {
        auto current = ops.GetLimit(pid, limit.resource);
        if (current && want.hard > current->hard && !ops.HasSysResource()) {
          return fail(
              MakeError(what + ": raising the hard limit from " + FormatLimitValue(current->hard) +
                        " to " + FormatLimitValue(want.hard) +
                        " needs CAP_SYS_RESOURCE; a rootless runtime cannot raise hard "
                        "limits"),
              ApplyFailure::kPermission);
        }
      }
      return fail(before.error().Wrap(what + " to " + Pair(want)), Classify(err));
    }
    out.applied.push_back({limit.resource, *before, want});
  }
  // While the pidfd still reports the process alive, `pid` was never reused,
  // so every prlimit above reached the process we pinned.
  if (auto alive = ops.CheckAlive(*pidfd); !alive) {
    return fail(NotAlive(alive.error(), target, "while its limits were being set"),
                Classify(alive.error().err));
  }
  return out;
}

Result<Fitted> FitForCaller(ProcessOps& ops, pid_t pid, const std::vector<Rlimit>& limits,
                            Rootless mode) {
  if (ops.InInitialUserNamespace()) return Fitted{limits, ""};
  std::vector<Rlimit> current;
  for (const auto& l : limits) {
    auto now = ops.GetLimit(pid, l.resource);
    if (!now) {
      return now.error().Wrap("pid " + std::to_string(pid) + ": read the current " +
                              std::string(l.info().name) + " limit");
    }
    current.push_back({l.resource, now->soft, now->hard});
  }
  return FitToUnprivilegedCaller(limits, current, mode);
}

std::string FormatChanges(const std::vector<Change>& changes) {
  std::string s;
  for (const auto& c : changes) {
    if (!s.empty()) s += ' ';
    s += std::string(FindRlimitByResource(c.resource)->name) + " " + Pair(c.before) + "->" +
         Pair(c.after);
  }
  return s;
}

}  // namespace ocirlimit
