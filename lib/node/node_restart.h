// The engine restarts `oci-rlimit node install` asks for, remembered until
// the engine runs the new config (issue 29): a restart that did not happen
// (no systemd, another unit name, a failed restart) is asked for again by
// every later run, even one that changes nothing, and install.sh fails until
// it happened. Proof comes from the engine itself: its process (by name in
// the node's /proc) started after the config was written. This run's restart
// is always asked for; an earlier one with no engine process to see is taken
// as done (an engine that is not running reads the new config when it starts).
// Kept in HOST/var/lib/oci-rlimit/node-install/restart, lines "ENGINE SINCE"
// (epoch seconds of the write).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/error.h"
#include "node/node_ops.h"

namespace ocirlimit::node {

inline constexpr const char* kRestartFile = "restart";

struct PendingRestart {
  std::string engine;  // "containerd", "crio"
  int64_t since = 0;   // when its config was written
  bool operator==(const PendingRestart&) const = default;
};

std::vector<PendingRestart> ParsePending(std::string_view text);
std::string RenderPending(const std::vector<PendingRestart>& pending);

// `old` plus `changed` (written at `now`), less those whose engine runs the
// new config on node root `host`.
std::vector<PendingRestart> StillPending(const std::string& host,
                                         std::vector<PendingRestart> pending,
                                         const std::vector<std::string>& changed, int64_t now);

// The start times (epoch seconds) of the engine's processes that serve the
// node: root's (every uid), in the PID namespace of the node's init, and
// reading the node's config (a user's rootless containerd, one in a pod, a
// containerd with --config elsewhere, as dockerd's, are not it); empty when
// none runs. Read through `ops` (the node's /proc/stat and /proc/PID/stat).
std::vector<int64_t> EngineStartTimes(NodeOps& ops, const std::string& engine);
// The same on node root `host` ("" or "/": this machine).
std::vector<int64_t> EngineStartTimes(const std::string& host, const std::string& engine);

}  // namespace ocirlimit::node
