#include "effects/target_kind.h"

#include <charconv>
#include <string>

namespace ocirlimit {

Result<ProcStat> ParseProcStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return MakeError("/proc stat: no \")\" after the command");
  std::string_view rest = text.substr(close + 1);
  auto next = [&rest]() {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    size_t end = rest.find(' ');
    std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    return field;
  };
  ProcStat out;
  std::string_view state = next();
  if (state.size() != 1) return MakeError("/proc stat: no process state");
  out.state = state[0];
  for (int i = 0; i < 5; ++i) next();  // ppid, pgrp, session, tty_nr, tpgid
  std::string_view flags = next();
  auto [end, ec] = std::from_chars(flags.data(), flags.data() + flags.size(), out.flags);
  if (ec != std::errc() || end != flags.data() + flags.size() || flags.empty()) {
    return MakeError("/proc stat: no process flags");
  }
  // minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
  // num_threads itrealvalue, then starttime.
  for (int i = 0; i < 12; ++i) next();
  std::string_view start = next();
  uint64_t ticks = 0;
  auto [send, sec] = std::from_chars(start.data(), start.data() + start.size(), ticks);
  if (!start.empty() && sec == std::errc() && send == start.data() + start.size()) {
    out.start_time = ticks;
  }
  return out;
}

std::optional<TargetRefusal> RefuseTargetKind(pid_t pid, const ProcStat& stat,
                                              std::string_view when) {
  const std::string target = "pid " + std::to_string(pid);
  if (stat.flags & kPfKthread) {
    return TargetRefusal{MakeError(target + ": refusing to touch a kernel thread"),
                         ApplyFailure::kInvalidTarget};
  }
  if (stat.state == 'Z' || stat.state == 'X') {
    return TargetRefusal{
        MakeError(target + ": is a zombie (exited, not yet reaped) " + std::string(when)),
        ApplyFailure::kTargetGone};
  }
  return std::nullopt;
}

Status CheckTarget(pid_t target, pid_t self) {
  if (target <= 1) {
    return MakeError("pid " + std::to_string(target) +
                     ": refusing to touch pid 0 or 1 (init, or no process at all)");
  }
  if (target == self) {
    return MakeError("pid " + std::to_string(target) +
                     ": refusing to touch the helper's own process");
  }
  return Ok{};
}

namespace {
constexpr size_t kMaxProcStatBytes = 4096;
}  // namespace

std::optional<TargetRefusal> CheckPinnedTargetKind(ProcessOps& ops, pid_t pid, const char* when,
                                                   const ReadFileFn& read_file) {
  PinnedProcess pinned(ops, pid);
  if (pinned.failure()) return std::nullopt;
  auto text = read_file("/proc/" + std::to_string(pid) + "/stat", kMaxProcStatBytes);
  if (!text || pinned.CheckAlive(when)) return std::nullopt;
  auto stat = ParseProcStat(*text);
  if (!stat)
    return TargetRefusal{stat.error().Wrap("pid " + std::to_string(pid)), ApplyFailure::kOther};
  return RefuseTargetKind(pid, *stat, when);
}

}  // namespace ocirlimit
