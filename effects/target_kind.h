// What kind of process a target is (oci-prlimit-helper's, audit's heal),
// from /proc/PID/stat: a zombie
// (exited, not yet reaped: prlimit(2) "succeeds" on it and changes nothing
// that will ever run) or a kernel thread (no user memory, no user code;
// kthreadd is pid 2) is refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "effects/apply.h"

namespace ocirlimit {

// PF_KTHREAD in include/linux/sched.h: the task is a kernel thread.
inline constexpr uint64_t kPfKthread = 0x00200000;

struct ProcStat {
  char state = '?';    // R, S, D, Z (zombie), X (dead), ...
  uint64_t flags = 0;  // the task's PF_* flags
  // Field 22, starttime: clock ticks after boot, as runc's
  // init_process_start and crun's process-start-time record it. With the
  // PID it names one process for good; unset when the line is cut short.
  std::optional<uint64_t> start_time;
};

// Parses /proc/PID/stat: "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS ...".
// COMM may hold spaces and parentheses, so fields are counted after the last ')'.
// STATE and FLAGS are required; STARTTIME (field 22) is read when present.
Result<ProcStat> ParseProcStat(std::string_view text);

struct TargetRefusal {
  Error error;
  ApplyFailure failure;  // kTargetGone for a zombie, kInvalidTarget for a kernel thread
};

// Why `pid` with this stat must not be a target; nullopt when it may.
// `when` says when the stat was read ("before", "after its limits were set").
std::optional<TargetRefusal> RefuseTargetKind(pid_t pid, const ProcStat& stat,
                                              std::string_view when);

}  // namespace ocirlimit
