#include "runtime/limit_checks.h"

#include <string>
#include <vector>

#include "core/unprivileged.h"
#include "core/unraisable.h"
#include "runtime/flow.h"

namespace ocirlimit {
namespace {

// Our own limit of each type `v` sets.
Result<std::vector<Rlimit>> Ours(RuntimeOps& ops, const Verdict& v) {
  std::vector<Rlimit> ours;
  for (const auto& l : v.limits) {
    auto now = ops.OwnLimit(l.resource);
    if (!now) return now.error().Wrap("read our own " + std::string(l.info().name) + " limit");
    ours.push_back(*now);
  }
  return ours;
}

}  // namespace

Status FitToCaller(RuntimeOps& ops, Rootless rootless, Verdict& v) {
  if (v.limits.empty() || ops.InInitialUserNamespace()) return Ok{};
  auto current = Ours(ops, v);
  if (!current) return current.error();
  auto fitted = FitToUnprivilegedCaller(v.limits, *current, rootless);
  if (!fitted) return fitted.error();
  if (!fitted->warning.empty()) v.warnings.push_back(fitted->warning);
  v.limits = fitted->limits;
  return Ok{};
}

Status CheckRaisableHere(RuntimeOps& ops, const Verdict& v) {
  if (v.limits.empty() || !ops.InInitialUserNamespace() || ops.HasSysResource()) return Ok{};
  auto ours = Ours(ops, v);
  if (!ours) return ours.error();
  if (auto u = FindUnraisable(v.limits, *ours)) {
    return MakeError(UnraisableMessage(*u, kRuntimeName));
  }
  return Ok{};
}

}  // namespace ocirlimit
