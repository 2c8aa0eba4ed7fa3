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

// Reads the limits of `pid`, pinned, if it is the process that started at
// `start_time` (clock ticks after boot, /proc/PID/stat field 22; nullopt:
// not checked) and neither a zombie nor a kernel thread.
[[nodiscard]] ProcessLook LookAtProcess(ProcessOps& ops, FsOps& fs, pid_t pid,
                                        std::optional<uint64_t> start_time);

struct HealOutcome {
  std::vector<Rlimit> limits;   // what was asked, after FitForCaller
  std::string warning;          // FitForCaller's, when it cut something
  std::vector<Change> applied;  // in order; on failure, those done before it
  std::optional<Error> error;
  ApplyFailure failure = ApplyFailure::kNone;
  bool ok() const { return !error.has_value(); }
};

// /proc/PID/status: whether every Uid field (real, effective, saved, fs) is `uid`.
[[nodiscard]] bool StatusUidsAre(std::string_view status, uid_t uid);
// /proc/PID/cgroup: whether a path component of some line names `id`: is
// the id itself ("ID"), or a runtime's scope for it, exactly
// ("PREFIX-ID.scope" for libpod, crio, docker, cri-containerd, runc, crun).
// A component that only contains it is not it ("user" is not "user.slice",
// "3" is not "session-3.scope"). Never for an empty id.
[[nodiscard]] bool CgroupNames(std::string_view cgroup, std::string_view id);

// For a container whose state a user owns (a rootless engine's): the process
// healed must be that user's and inside that container.
struct ContainerProof {
  uid_t uid = 0;   // who owns the state
  std::string id;  // the container's id, which its cgroup must name
};

// Sets `limits` on `pid` after the same checks as LookAtProcess, fitted to
// what this caller can set (FitForCaller: outside the initial user
// namespace, under `rootless`), then confirms the pinned process alive and
// not a zombie. With `proof`, the pinned process must also pass it
// (StatusUidsAre, CgroupNames), or it is left alone (kInvalidTarget).
[[nodiscard]] HealOutcome HealProcess(ProcessOps& ops, FsOps& fs, pid_t pid,
                                      std::optional<uint64_t> start_time,
                                      const std::vector<Rlimit>& limits, Rootless rootless,
                                      const std::optional<ContainerProof>& proof = std::nullopt);

}  // namespace ocirlimit
