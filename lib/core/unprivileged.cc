#include "core/unprivileged.h"

#include <algorithm>
#include <cerrno>
#include <sstream>

namespace ocirlimit {
namespace {

std::string Pair(uint64_t soft, uint64_t hard) {
  return FormatLimitValue(soft) + ":" + FormatLimitValue(hard);
}

const Rlimit* Find(const std::vector<Rlimit>& v, int resource) {
  for (const auto& r : v) {
    if (r.resource == resource) return &r;
  }
  return nullptr;
}

}  // namespace

bool IsInitialUidMap(std::string_view uid_map) {
  std::istringstream in{std::string(uid_map)};
  std::string inside, outside, count, extra;
  if (!(in >> inside >> outside >> count)) return false;
  if (in >> extra) return false;  // a second range: not the identity map
  return inside == "0" && outside == "0" && count == "4294967295";
}

Result<Fitted> FitToUnprivilegedCaller(const std::vector<Rlimit>& decided,
                                       const std::vector<Rlimit>& current, Rootless mode) {
  Fitted out;
  std::string changes;
  for (const auto& want : decided) {
    const Rlimit* now = Find(current, want.resource);
    if (now == nullptr || want.hard <= now->hard) {
      out.limits.push_back(want);
      continue;
    }
    const std::string name(want.info().name);
    if (mode == Rootless::kFail) {
      return MakeError(name + " " + Pair(want.soft, want.hard) +
                       ": not in the initial user namespace (a rootless engine), so the hard "
                       "limit cannot be raised above " +
                       FormatLimitValue(now->hard) + " (rootless = \"fail\")");
    }
    Rlimit fitted = want;
    fitted.hard = now->hard;
    fitted.soft = std::min(want.soft, now->hard);
    out.limits.push_back(fitted);
    changes += (changes.empty() ? "" : ", ") + name + " " + Pair(want.soft, want.hard) + " -> " +
               Pair(fitted.soft, fitted.hard);
  }
  if (!changes.empty()) {
    out.warning = "rootless (not the initial user namespace): hard limits cannot be raised, so " +
                  changes + " (the caller's hard limit; rootless = \"fail\" refuses instead)";
  }
  return out;
}

bool UnreadableConfigIsNone(const Error& read_error, bool unprivileged) {
  return unprivileged && read_error.err == EACCES;
}

std::string UnreadableConfigWarning(const Error& read_error) {
  return "rootless (not the initial user namespace): " + read_error.Text() +
         "; running without that config (no limits from it)";
}

std::string_view RootlessName(Rootless mode) {
  return mode == Rootless::kFail ? "fail" : "degrade";
}

}  // namespace ocirlimit
