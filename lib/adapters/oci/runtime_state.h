// What the OCI runtimes keep about each container in their state roots
// (`--root`), as `oci-rlimit audit` reads it: the init process (its PID and
// start time) and the bundle. Two formats, measured on runc 1.1.5 and crun
// 1.8.1:
//   runc  ROOT/ID/state.json: "init_process_pid", "init_process_start" (clock
//         ticks after boot, /proc/PID/stat field 22) and "config.labels", a
//         list of "KEY=VALUE" holding "bundle=DIR" (and the annotations).
//   crun  ROOT/ID/status: "pid", "process-start-time", "bundle"; beside it a
//         copy of the bundle's config.json.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

inline constexpr std::string_view kRuncStateFile = "state.json";
inline constexpr std::string_view kCrunStateFile = "status";
// runc's and crun's state files are a few KiB; a spec copy may be large.
inline constexpr size_t kMaxRuntimeStateBytes = 4 << 20;

struct RuntimeState {
  std::string runtime;                 // "runc" or "crun": whose format it was
  pid_t pid = 0;                       // the init process, on the host
  std::optional<uint64_t> start_time;  // its starttime; nullopt when not recorded
  std::string bundle;                  // empty when not recorded
};

// The state roots the runtimes use when nobody passes --root; a "*"
// component stands for every subdirectory there (containerd's namespaces,
// rootless users' runtime dirs). Audit's discovery and the node installer's
// uninstall both look here:
//   /run/containerd/runc/*        containerd's runc shim, each namespace
//                                 (k8s.io, moby, default, ...), runc or crun
//   /run/docker/runtime-runc/moby docker 20.10+ through its own containerd
//   /run/runc, /run/crun          CRI-O (handlers without runtime_root) and
//                                 rootful podman
//   /run/user/*/runc, /run/user/*/crun  rootless podman ($XDG_RUNTIME_DIR)
const std::vector<std::string>& DefaultStateRoots();

// `where` names the file in errors.
[[nodiscard]] Result<RuntimeState> ParseRuncState(std::string_view text, const std::string& where);
[[nodiscard]] Result<RuntimeState> ParseCrunStatus(std::string_view text, const std::string& where);

// Only the bundle a state file of either format records (crun's "bundle",
// else runc's "bundle=DIR" label), whatever else it holds or lacks: the node
// installer's uninstall asks of each container only whose it is. nullopt
// when `text` is no JSON object or records no bundle.
[[nodiscard]] std::optional<std::string> RecordedBundle(std::string_view text);

}  // namespace ocirlimit
