#include "effects/apply.h"

#include <cerrno>

#include "core/unraisable.h"

namespace ocirlimit {
namespace {

std::string Pair(LimitPair p) { return FormatLimitValue(p.soft) + ":" + FormatLimitValue(p.hard); }

}  // namespace

ApplyFailure ClassifyErrno(int err) {
  if (err == ESRCH) return ApplyFailure::kTargetGone;
  if (err == EPERM) return ApplyFailure::kPermission;
  return ApplyFailure::kOther;
}

PinnedProcess::PinnedProcess(ProcessOps& ops, pid_t pid)
    : ops_(ops), target_("pid " + std::to_string(pid)) {
  if (pid <= 1) {
    failure_ = PinFailure{MakeError(target_ + ": refusing to touch pid 0 or 1"),
                          ApplyFailure::kInvalidTarget};
    return;
  }
  auto fd = ops_.OpenPidfd(pid);
  if (fd) {
    pidfd_ = *fd;
  } else if (fd.error().err == ESRCH) {
    failure_ = PinFailure{MakeError(target_ + ": no such process"), ApplyFailure::kTargetGone};
  } else {
    failure_ = PinFailure{fd.error().Wrap(target_), ClassifyErrno(fd.error().err)};
  }
}

PinnedProcess::~PinnedProcess() {
  if (pidfd_ >= 0) ops_.ClosePidfd(pidfd_);
}

std::optional<PinFailure> PinnedProcess::CheckAlive(const std::string& when) const {
  if (failure_) return failure_;
  auto alive = ops_.CheckAlive(pidfd_);
  if (alive) return std::nullopt;
  // Only ESRCH means the process exited; any other failure is ours (a bad
  // pidfd, say) and must not be reported as a vanished container.
  const Error& e = alive.error();
  if (e.err == ESRCH) {
    return PinFailure{MakeError(target_ + ": process exited " + when), ApplyFailure::kTargetGone};
  }
  return PinFailure{e.Wrap(target_ + ": cannot check that the process is alive"),
                    ClassifyErrno(e.err)};
}

ApplyOutcome ApplyRlimits(ProcessOps& ops, pid_t pid, const std::vector<Rlimit>& limits) {
  ApplyOutcome out;
  auto fail = [&](PinFailure f) {
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());

  for (const auto& limit : limits) {
    const std::string what = pinned.target() + ": " + std::string(limit.info().name);
    if (auto gone = pinned.CheckAlive("before its limits were set")) return fail(*gone);
    LimitPair want{limit.soft, limit.hard};
    auto before = ops.SetLimit(pid, limit.resource, want);
    if (!before) {
      int err = before.error().err;
      if (err == EPERM) {
        auto current = ops.GetLimit(pid, limit.resource);
        if (current && want.hard > current->hard && !ops.HasSysResource()) {
          // The one message every path gives (core/unraisable.h); rootless
          // only when we really run outside the initial user namespace.
          const std::string who = program_invocation_short_name;
          return fail({MakeError(pinned.target() + ": " +
                                 UnraisableMessage({limit, current->hard}, who,
                                                   !ops.InInitialUserNamespace())),
                       ApplyFailure::kPermission});
        }
      }
      return fail({before.error().Wrap(what + " to " + Pair(want)), ClassifyErrno(err)});
    }
    out.applied.push_back({limit.resource, *before, want});
  }
  if (auto gone = pinned.CheckAlive("while its limits were being set")) return fail(*gone);
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

}  // namespace ocirlimit
