#include "prlimit-helper/read_limits.h"

#include <cerrno>

namespace ocirlimit {

ReadOutcome ReadRlimits(ProcessOps& ops, pid_t pid) {
  ReadOutcome out;
  auto fail = [&](PinFailure f) {
    out.limits.clear();
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());
  for (const auto& info : AllRlimits()) {
    auto value = ops.GetLimit(pid, info.resource);
    if (!value) {
      int err = value.error().err;
      if (err == ESRCH) {
        return fail({MakeError(pinned.target() + ": process exited"), ApplyFailure::kTargetGone});
      }
      return fail({value.error().Wrap(pinned.target() + ": " + std::string(info.name)),
                   ClassifyErrno(err)});
    }
    out.limits.push_back({info.resource, value->soft, value->hard});
  }
  if (auto gone = pinned.CheckAlive("while its limits were being read")) return fail(*gone);
  return out;
}

}  // namespace ocirlimit
