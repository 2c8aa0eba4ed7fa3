// containerd's config.toml, versions 2 and 3: the CRI runtime handlers and
// their options, default_runtime_name, the NRI section and `imports`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "core/error.h"

namespace ocirlimit::engines {

struct ContainerdHandler {
  std::string plugin;  // the CRI plugin table it is under
  bool read = true;    // false: containerd ignores it (wrong section for the version)
  std::string name;
  std::string runtime_type;
  std::string binary_name;                   // options.BinaryName, or ""
  std::vector<std::string> pod_annotations;  // pod_annotations
  std::string source;                        // the file it was read from
};

// containerd's NRI plugin settings ([plugins."io.containerd.nri.v1.nri"]).
struct ContainerdNriSection {
  std::optional<bool> disable;
  std::optional<std::string> socket_path;
  std::optional<std::string> plugin_path;
};

struct ContainerdConfig {
  int64_t version = 1;  // the file's `version` (1 when missing)
  std::vector<ContainerdHandler> handlers;
  // containerd.default_runtime_name of the section the version reads, or
  // nullopt (containerd's default: "runc").
  std::optional<std::string> default_runtime_name;
  ContainerdNriSection nri;
  std::vector<std::string> imports;
};

// The CRI plugin whose tables a config of `version` reads, or "".
std::string_view CriPluginFor(int64_t version);

[[nodiscard]] Result<ContainerdConfig> ParseContainerdConfig(std::string_view text,
                                                             const std::string& source);

// The handler pods without a runtimeClassName get.
std::string DefaultHandlerName(const ContainerdConfig& cfg);
// The handler `name` containerd reads (in the right section), or nullptr.
const ContainerdHandler* FindHandler(const ContainerdConfig& cfg, const std::string& name);

// NRI as containerd runs it: on by default from 2.0, off before (major < 2).
struct ContainerdNri {
  bool enabled = false;
  std::string socket_path;
  std::string plugin_path;
};
ContainerdNri NriSettings(const ContainerdConfig& cfg, int containerd_major);

// The node's containerd config: /etc/containerd/config.toml, then its
// imports in order (a glob in the file name matches in name order; the
// file importing itself, as the GPU Operator writes it on 1.7, is skipped).
// A later file's handler of the same name replaces an earlier one, and its
// default_runtime_name and NRI keys win. nullopt when the file is missing.
struct ContainerdFiles {
  ContainerdConfig config;
  std::vector<std::string> read;  // the files read, main first
};
[[nodiscard]] Result<std::optional<ContainerdFiles>> ReadContainerdConfig(NodeFiles& fs);

}  // namespace ocirlimit::engines
