// Which processes may have their limits set from outside: never pid 0 or 1
// or the caller itself, never a zombie (exited, not yet reaped: prlimit(2)
// "succeeds" on it and changes nothing that will ever run) or a kernel
// thread (no user memory, no user code; kthreadd is pid 2), as read from
// /proc/PID/stat. Shared by oci-prlimit-helper and `oci-rlimit audit --heal`.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "effects/apply.h"
#include "effects/process_ops.h"
#include "formats/error.h"

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

// Refuses pid <= 1 and the caller's own pid, before any syscall touches them.
[[nodiscard]] Status CheckTarget(pid_t target, pid_t self);

// Reads `pid`'s /proc stat between a pidfd open and a liveness check through
// it (so the stat is the pinned process's) and refuses a zombie or a kernel
// thread. A target that cannot be pinned or read is left to the apply, which
// reports it (no such process, permission): nullopt then, as for a target
// that may be touched.
// `read_file` reads /proc/PID/stat (ReadFileBounded, or a fake's).
using ReadFileFn = std::function<Result<std::string>(const std::string& path, size_t max_bytes)>;
[[nodiscard]] std::optional<TargetRefusal> CheckPinnedTargetKind(ProcessOps& ops, pid_t pid,
                                                                 const char* when,
                                                                 const ReadFileFn& read_file);

}  // namespace ocirlimit
