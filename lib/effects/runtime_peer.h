// What the runtime on the other end of the NRI socket can set (for the NRI
// plugin, here for its /proc reads): the plugin's rlimits go into the spec,
// and the runtime's own process tree (containerd or CRI-O, its shim, runc)
// applies them, which for a hard limit above its own needs CAP_SYS_RESOURCE. Read at each connect
// from the socket peer's credentials (SO_PEERCRED: a root-owned process of this PID namespace only,
// runtime_peer_linux.cc), so that CreateContainer can say the one
// unraisable-limit message (core/unraisable.h) for a limit the runtime will
// fail to set. The plugin still answers what the policy says.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rlimit.h"

namespace ocirlimit {

struct RuntimeLimits {
  std::string who;             // "the runtime on the NRI socket (containerd, pid 123)"
  std::vector<Rlimit> limits;  // its limits in force (/proc/PID/limits)
  bool can_raise = false;      // CAP_SYS_RESOURCE in its effective set
};

// The one unraisable-limit message for the first of `want` whose hard part
// the runtime cannot set, or nullopt.
[[nodiscard]] std::optional<std::string> UnraisableByRuntime(const std::vector<Rlimit>& want,
                                                             const RuntimeLimits& runtime);

// Whether /proc/PID/status's CapEff line holds CAP_SYS_RESOURCE (bit 24);
// nullopt when there is no such line or it does not parse.
[[nodiscard]] std::optional<bool> CapEffHasSysResource(std::string_view status);

// The runtime at the other end of a socket connection: nullopt when the peer
// is not a root-owned process this plugin can see, or its limits cannot be
// read (then nothing is said).
[[nodiscard]] std::optional<RuntimeLimits> ReadRuntimeLimits(int pid, unsigned uid);

}  // namespace ocirlimit
