// docker's /etc/docker/daemon.json: its runtimes and default-runtime.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "formats/error.h"

namespace ocirlimit::engines {

struct DockerRuntime {
  std::string name;
  std::string path;  // as written: absolute, or a name dockerd looks up on its PATH
};

struct DockerConfig {
  std::vector<DockerRuntime> runtimes;  // in file order
  std::string default_runtime;          // "" : runc
};

[[nodiscard]] Result<DockerConfig> ParseDaemonJson(std::string_view text,
                                                   const std::string& source);

// daemon.json, or nullopt when there is none.
[[nodiscard]] Result<std::optional<DockerConfig>> ReadDockerConfig(NodeFiles& fs);

}  // namespace ocirlimit::engines
