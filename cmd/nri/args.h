// oci-rlimit-nri's command line and environment. Pure. Its flags are
// kNriFlags (formats/nri_status.h), which doctor reads a running plugin's argv
// with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "formats/error.h"
#include "formats/nri_status.h"

namespace ocirlimit::nri {

inline constexpr const char* kDefaultSocket = "/var/run/nri/nri.sock";
inline constexpr const char* kDefaultName = "oci-rlimit";
inline constexpr const char* kDefaultIndex = "10";

enum class NriMode { kRun, kHelp, kVersion };

struct NriArgs {
  NriMode mode = NriMode::kRun;
  std::optional<std::string> config;
  std::string socket = kDefaultSocket;
  std::string name = kDefaultName;
  std::string index = kDefaultIndex;
  // Where it tells doctor of its last (re)connect and heals (formats/nri_status.h).
  std::string status_file = std::string(kNriStatusPath);
  // Where it serves /metrics (nri/metrics_http.h's forms); empty: nowhere.
  std::string metrics_address;
  // The `node` label of every metric: --node-name, else $NODE_NAME (the
  // DaemonSet's spec.nodeName), else this host's name (flow.cc).
  std::string node_name;
  // Pre-registered: containerd exec'd us with NRI_PLUGIN_SOCKET=FD.
  std::optional<int> socket_fd;

  bool operator==(const NriArgs&) const = default;
};

// argv without argv[0]; env gives NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and
// NRI_PLUGIN_SOCKET, which a pre-registered plugin takes its identity from
// (flags given too win).
[[nodiscard]] Result<NriArgs> ParseNriArgs(const std::vector<std::string>& args,
                                           const EnvLookup& env);

}  // namespace ocirlimit::nri
