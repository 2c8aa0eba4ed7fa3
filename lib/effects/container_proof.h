// The one rule by which a root-side tool believes that a process is a
// container's init (docs/audit.md, "Which process is a container's"): audit's
// verdicts and heal, the NRI plugin's heal and the uninstall's live scan all
// ask it. Pure: the caller reads /proc/PID/status and /proc/PID/cgroup of a
// pinned process and passes their text.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ocirlimit {

// What named the process, and who wrote it.
struct InitRecord {
  // 0: root's runtime state, or the engine's own message (NRI). Else the uid
  // that owns a user's state root: a rootless engine's, or a forgery.
  uid_t owner = 0;
  // The init's start time as the runtime recorded it (/proc/PID/stat field
  // 22); the caller compares it (heal.h CheckIdentity).
  std::optional<uint64_t> start_time;
  // The cgroup the engine made for the container, as a path below the
  // cgroup mount (ResolveCgroupsPath); "" when none was recorded.
  std::string cgroup;
};

// /proc/PID/status: whether every Uid field (real, effective, saved, fs) is `uid`.
[[nodiscard]] bool StatusUidsAre(std::string_view status, uid_t uid);

// Why `caller` may not believe `r` at all, or nullopt. Root's and the
// engine's records are believed. A user's record only by that user: every
// fact in it is the user's to choose (the id, the state, the bundle, the
// names of the user's own cgroups), so it names no process to root, and a
// user auditing their own containers can set no more than the kernel lets
// them anyway.
[[nodiscard]] std::optional<std::string> Distrust(const InitRecord& r, uid_t caller);

// Why the process whose /proc/PID/status and /proc/PID/cgroup read `status`
// and `cgroup` is not the init `r` names, or nullopt (Distrust aside). A
// user's record: the process must be that user's (every uid). Then the
// record must pin it: by its start time, or by its cgroup, which must be the
// recorded one or below it (CgroupIsWithin). With neither recorded it is
// not proven.
[[nodiscard]] std::optional<std::string> NotTheInit(const InitRecord& r, std::string_view status,
                                                    std::string_view cgroup);

// NRI's and the OCI spec's `cgroupsPath` resolved as runc and crun resolve
// it: "/a/b" (cgroupfs) as is; "SLICE:PREFIX:NAME" (the systemd driver) to
// the slice's path ("a-b.slice" is /a.slice/a-b.slice; "" is system.slice)
// and the unit "PREFIX-NAME.scope" (NAME itself when it is a slice). nullopt
// for anything else (a relative path).
[[nodiscard]] std::optional<std::string> ResolveCgroupsPath(std::string_view cgroups_path);

// Whether /proc/PID/cgroup's text places the process in the cgroup `path`
// or below it, by whole components: the v1 memory hierarchy's line where
// there is one (every runtime makes that cgroup on v1), else the v2 line
// "0::". Root, and the container's own processes, are the only ones that
// can put a process there. A reader in a cgroup namespace of its own (the
// NRI plugin in a pod) sees "/../../TAIL": the tail must then be the end of
// `path` (whole components, and what is below it), under an ancestor of the
// reader's own cgroup, which root's engine made too.
[[nodiscard]] bool CgroupIsWithin(std::string_view proc_cgroup, std::string_view path);

}  // namespace ocirlimit
