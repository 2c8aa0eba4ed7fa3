// Looking at and healing a running container's init process from the host,
// for `oci-rlimit audit` and the NRI plugin's heal at Synchronize: the
// process is pinned with a pidfd, and everything read of it (/proc/PID/stat,
// /proc/PID/limits) is confirmed to be the pinned process's by a liveness
// check after the read. A PID whose start time is not the one the runtime
// recorded was reused and is never touched; nor is PID 0 or 1, the caller,
// a zombie or a kernel thread (the same rules as oci-prlimit-helper).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "effects/apply.h"
#include "effects/container_proof.h"
#include "effects/fs_ops.h"
#include "effects/process_ops.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// /proc/PID/limits: a header, then one row per rlimit in the kernel's order
// ("Max locked memory  8388608  8388608  bytes"). All 16, or an error.
[[nodiscard]] Result<std::vector<Rlimit>> ParseProcLimits(std::string_view text);

// What a pinned look at one process found.
struct ProcessLook {
  std::vector<Rlimit> limits;  // all 16, in the kernel's order, when ok
  std::optional<Error> error;  // "pid N: no such process", "...: was reused", a zombie, ...
  ApplyFailure failure = ApplyFailure::kNone;
  bool ok() const { return !error.has_value(); }
};

// Reads the limits of `pid`, pinned, if `record` proves it the container's
// init to this caller (container_proof.h: Distrust, NotTheInit; its start
// time, when recorded, compared with /proc/PID/stat field 22) and it is
// neither a zombie nor a kernel thread. What does not prove it is left
// alone: kInvalidTarget, or kTargetGone for a reused PID.
[[nodiscard]] ProcessLook LookAtProcess(ProcessOps& ops, FsOps& fs, pid_t pid,
                                        const InitRecord& record);

struct HealOutcome {
  std::vector<Rlimit> limits;   // what was asked, after FitForCaller
  std::string warning;          // FitForCaller's, when it cut something
  std::vector<Change> applied;  // in order; on failure, those done before it
  std::optional<Error> error;
  ApplyFailure failure = ApplyFailure::kNone;
  bool ok() const { return !error.has_value(); }
};

// Sets `limits` on `pid` after the same checks as LookAtProcess, fitted to
// what this caller can set (FitForCaller: outside the initial user
// namespace, under `rootless`), then confirms the pinned process alive and
// not a zombie.
[[nodiscard]] HealOutcome HealProcess(ProcessOps& ops, FsOps& fs, pid_t pid,
                                      const InitRecord& record, const std::vector<Rlimit>& limits,
                                      Rootless rootless);

}  // namespace ocirlimit
