#include "effects/heal.h"

#include <unistd.h>

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
  auto text = fs.ReadProcFile("/proc/" + std::to_string(pid) + "/stat", kMaxProcFileBytes);
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

// Reads what the proof needs of the pinned process (its /proc/PID/status
// for a user's record, its /proc/PID/cgroup when a cgroup was recorded)
// between the pin and a liveness check, and refuses a process that
// `record` does not prove (container_proof.h).
std::optional<PinFailure> CheckProof(FsOps& fs, const PinnedProcess& pinned, pid_t pid,
                                     const InitRecord& record) {
  const std::string dir = "/proc/" + std::to_string(pid);
  Result<std::string> status = std::string();
  Result<std::string> cgroup = std::string();
  if (record.owner != 0) status = fs.ReadProcFile(dir + "/status", kMaxProcFileBytes);
  if (!record.cgroup.empty()) cgroup = fs.ReadProcFile(dir + "/cgroup", kMaxProcFileBytes);
  if (record.owner != 0 || !record.cgroup.empty()) {
    if (auto gone = pinned.CheckAlive("while its cgroup was read")) return gone;
  }
  for (const auto* read : {&status, &cgroup}) {
    if (!*read) return PinFailure{read->error().Wrap(pinned.target()), ApplyFailure::kOther};
  }
  if (auto why = NotTheInit(record, *status, *cgroup)) {
    return Fail(pinned, *why + ": left alone", ApplyFailure::kInvalidTarget);
  }
  return std::nullopt;
}

// The proof before the pin: whose record it is.
std::optional<PinFailure> CheckRecord(pid_t pid, const InitRecord& record) {
  if (auto why = Distrust(record, geteuid())) {
    return PinFailure{MakeError(Cat("pid ", std::to_string(pid), ": ", *why, ": left alone")),
                      ApplyFailure::kInvalidTarget};
  }
  return std::nullopt;
}

}  // namespace

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

ProcessLook LookAtProcess(ProcessOps& ops, FsOps& fs, pid_t pid, const InitRecord& record) {
  ProcessLook out;
  auto fail = [&](PinFailure f) {
    out.limits.clear();
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  if (auto bad = CheckRecord(pid, record)) return fail(*bad);
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());
  if (auto bad = CheckIdentity(fs, pinned, pid, record.start_time, "while it was read")) {
    return fail(*bad);
  }
  if (auto bad = CheckProof(fs, pinned, pid, record)) return fail(*bad);
  auto text = fs.ReadProcFile("/proc/" + std::to_string(pid) + "/limits", kMaxProcFileBytes);
  if (auto gone = pinned.CheckAlive("while its limits were read")) return fail(*gone);
  if (!text) return fail({text.error().Wrap(pinned.target()), ApplyFailure::kOther});
  auto limits = ParseProcLimits(*text);
  if (!limits) return fail({limits.error().Wrap(pinned.target()), ApplyFailure::kOther});
  out.limits = std::move(*limits);
  return out;
}

HealOutcome HealProcess(ProcessOps& ops, FsOps& fs, pid_t pid, const InitRecord& record,
                        const std::vector<Rlimit>& limits, Rootless rootless) {
  HealOutcome out;
  auto fail = [&](PinFailure f) {
    out.error = std::move(f.error);
    out.failure = f.failure;
    return out;
  };
  if (auto target = CheckTarget(pid, getpid()); !target) {
    return fail({target.error(), ApplyFailure::kInvalidTarget});
  }
  if (auto bad = CheckRecord(pid, record)) return fail(*bad);
  // Held across the apply: ApplyRlimits pins again, and a final check of
  // this pin proves the process it changed is the one checked here.
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return fail(*pinned.failure());
  if (auto bad = CheckIdentity(fs, pinned, pid, record.start_time, "before its limits were set")) {
    return fail(*bad);
  }
  if (auto bad = CheckProof(fs, pinned, pid, record)) return fail(*bad);
  auto fitted = FitForCaller(ops, pid, limits, rootless);
  if (!fitted) return fail({fitted.error(), ApplyFailure::kPermission});
  out.limits = fitted->limits;
  out.warning = fitted->warning;
  ApplyOutcome applied = ApplyRlimits(ops, pid, out.limits);
  out.applied = std::move(applied.applied);
  if (!applied.ok()) return fail({*applied.error, applied.failure});
  if (auto bad = CheckIdentity(fs, pinned, pid, record.start_time, "after its limits were set")) {
    return fail(*bad);
  }
  return out;
}

}  // namespace ocirlimit
