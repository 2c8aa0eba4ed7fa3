#include "effects/heal.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "effects/target_kind.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxProcFileBytes = 1 << 16;

// /proc/PID/limits's row names, in the kernel's resource order (fs/proc/base.c).
constexpr std::string_view kRowNames[] = {
    "Max cpu time",       "Max file size",     "Max data size",         "Max stack size",
    "Max core file size", "Max resident set",  "Max processes",         "Max open files",
    "Max locked memory",  "Max address space", "Max file locks",        "Max pending signals",
    "Max msgqueue size",  "Max nice priority", "Max realtime priority", "Max realtime timeout",
};

std::string_view NextField(std::string_view& rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t end = rest.find(' ');
  std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

std::optional<uint64_t> LimitValue(std::string_view s) {
  if (s == "unlimited") return kRlimInfinity;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

PinFailure Fail(const PinnedProcess& pinned, const std::string& what, ApplyFailure f) {
  return PinFailure{MakeError(pinned.target() + ": " + what), f};
}

// Reads /proc/PID/stat between the pin and a liveness check, so it is the
// pinned process's, and refuses a reused PID, a zombie or a kernel thread.
std::optional<PinFailure> CheckIdentity(FsOps& fs, const PinnedProcess& pinned, pid_t pid,
                                        std::optional<uint64_t> start_time, const char* when) {
  auto text = fs.ReadFile("/proc/" + std::to_string(pid) + "/stat", kMaxProcFileBytes);
  if (auto gone = pinned.CheckAlive(when)) return gone;
  if (!text) return PinFailure{text.error().Wrap(pinned.target()), ApplyFailure::kOther};
  auto stat = ParseProcStat(*text);
  if (!stat) return PinFailure{stat.error().Wrap(pinned.target()), ApplyFailure::kOther};
  if (start_time && stat->start_time != start_time) {
    return Fail(
        pinned,
        Cat("started at ", stat->start_time ? std::to_string(*stat->start_time) : "?", ", not at ",
            std::to_string(*start_time), " as the runtime recorded: the PID was reused"),
        ApplyFailure::kTargetGone);
  }
  if (auto refused = RefuseTargetKind(pid, *stat, when)) {
    return PinFailure{refused->error, refused->failure};
  }
  return std::nullopt;
}

// The runtimes' systemd scope prefixes: "<prefix>-<id>.scope" (podman's
// libpod, CRI-O's crio, docker's, containerd CRI's, runc's and crun's own).
constexpr std::array<std::string_view, 6> kScopePrefixes = {"libpod",         "crio", "docker",
                                                            "cri-containerd", "runc", "crun"};

// A cgroup path component that is the container `id` itself, or a
// runtime's scope for it, exactly: never one that merely contains it
// ("user" is not "user.slice").
bool ComponentNames(std::string_view part, std::string_view id) {
  if (part == id) return true;
  constexpr std::string_view kScope = ".scope";
  if (!part.ends_with(kScope)) return false;
  part.remove_suffix(kScope.size());
  if (part.size() <= id.size() + 1 || !part.ends_with(id)) return false;
  part.remove_suffix(id.size());
  if (!part.ends_with('-')) return false;
  part.remove_suffix(1);
  return std::find(kScopePrefixes.begin(), kScopePrefixes.end(), part) != kScopePrefixes.end();
}

// Reads /proc/PID/status and /proc/PID/cgroup between the pin and a
// liveness check, and refuses a process that is not `proof`'s.
std::optional<PinFailure> CheckProof(FsOps& fs, const PinnedProcess& pinned, pid_t pid,
                                     const ContainerProof& proof) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto status = fs.ReadFile(dir + "/status", kMaxProcFileBytes);
  auto cgroup = fs.ReadFile(dir + "/cgroup", kMaxProcFileBytes);
  if (auto gone = pinned.CheckAlive("while its owner was read")) return gone;
  if (!status || !StatusUidsAre(*status, proof.uid)) {
    return Fail(pinned,
                Cat("not a process of uid ", std::to_string(proof.uid),
                    ", who owns the container's state: left alone"),
                ApplyFailure::kInvalidTarget);
  }
  if (!cgroup || !CgroupNames(*cgroup, proof.id)) {
    return Fail(pinned,
                Cat("its cgroup does not name the container ", Quote(proof.id), ": left alone"),
                ApplyFailure::kInvalidTarget);
  }
  return std::nullopt;
}

}  // namespace

bool StatusUidsAre(std::string_view status, uid_t uid) {
  const size_t at = status.starts_with("Uid:") ? 0 : status.find("\nUid:");
  if (at == std::string_view::npos) return false;
  std::string_view rest = status.substr(status.find(':', at) + 1);
  rest = rest.substr(0, rest.find('\n'));
  int fields = 0;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
    if (rest.empty()) break;
    size_t end = rest.find_first_of("\t ");
    std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    uid_t v = 0;
    auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || p != field.data() + field.size() || v != uid) return false;
    ++fields;
  }
  return fields == 4;
}

bool CgroupNames(std::string_view cgroup, std::string_view id) {
  if (id.empty()) return false;
  while (!cgroup.empty()) {
    const size_t nl = cgroup.find('\n');
    std::string_view line = cgroup.substr(0, nl);
    cgroup.remove_prefix(nl == std::string_view::npos ? cgroup.size() : nl + 1);
    // "N:CONTROLLERS:PATH"; the path may hold ':'.
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string_view path = line.substr(c2 + 1);
    while (!path.empty()) {
      const size_t slash = path.find('/');
      if (ComponentNames(path.substr(0, slash), id)) return true;
      path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
    }
  }
  return false;
}

Result<std::vector<Rlimit>> ParseProcLimits(std::string_view text) {
  std::vector<Rlimit> out;
  size_t at = text.find('\n');  // the header
  if (at == std::string_view::npos) return MakeError("/proc limits: no rows");
  ++at;
  for (const auto& info : AllRlimits()) {
    const std::string_view row_name = kRowNames[out.size()];
    size_t nl = text.find('\n', at);
    std::string_view row = text.substr(at, nl == std::string_view::npos ? text.npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!row.starts_with(row_name)) {
      return MakeError(Cat("/proc limits: no row ", Quote(row_name)));
    }
    std::string_view rest = row.substr(row_name.size());
    auto soft = LimitValue(NextField(rest));
    auto hard = LimitValue(NextField(rest));
    if (!soft || !hard) return MakeError(Cat("/proc limits: ", Quote(row_name), ": no values"));
    out.push_back({info.resource, *soft, *hard});
  }
  return out;
}

ProcessLook LookAtProcess(ProcessOps& ops, FsOps& fs, pid_t pid,
                          std::optional<uint64_t> start_time) {
  ProcessLook out;
  auto fail = [&](PinFailure f) {
    out.limits.clear();
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());
  if (auto bad = CheckIdentity(fs, pinned, pid, start_time, "while it was read")) {
    return fail(*bad);
  }
  auto text = fs.ReadFile("/proc/" + std::to_string(pid) + "/limits", kMaxProcFileBytes);
  if (auto gone = pinned.CheckAlive("while its limits were read")) return fail(*gone);
  if (!text) return fail({text.error().Wrap(pinned.target()), ApplyFailure::kOther});
  auto limits = ParseProcLimits(*text);
  if (!limits) return fail({limits.error().Wrap(pinned.target()), ApplyFailure::kOther});
  out.limits = std::move(*limits);
  return out;
}

HealOutcome HealProcess(ProcessOps& ops, FsOps& fs, pid_t pid, std::optional<uint64_t> start_time,
                        const std::vector<Rlimit>& limits, Rootless rootless,
                        const std::optional<ContainerProof>& proof) {
  HealOutcome out;
  auto fail = [&](PinFailure f) {
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  if (auto target = CheckTarget(pid, getpid()); !target) {
    return fail({target.error(), ApplyFailure::kInvalidTarget});
  }
  // Held across the apply: ApplyRlimits pins again, and a final check of
  // this pin proves the process it changed is the one checked here.
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());
  if (proof) {
    if (auto bad = CheckProof(fs, pinned, pid, *proof)) return fail(*bad);
  }
  if (auto bad = CheckIdentity(fs, pinned, pid, start_time, "before its limits were set")) {
    return fail(*bad);
  }
  auto fitted = FitForCaller(ops, pid, limits, rootless);
  if (!fitted) return fail({fitted.error(), ApplyFailure::kPermission});
  out.limits = fitted->limits;
  out.warning = fitted->warning;
  ApplyOutcome applied = ApplyRlimits(ops, pid, out.limits);
  out.applied = std::move(applied.applied);
  if (!applied.ok()) return fail({*applied.error, applied.failure});
  if (auto bad = CheckIdentity(fs, pinned, pid, start_time, "after its limits were set")) {
    return fail(*bad);
  }
  return out;
}

}  // namespace ocirlimit
