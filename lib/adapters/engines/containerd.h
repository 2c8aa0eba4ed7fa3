// containerd's config.toml, versions 2 and 3: the CRI runtime handlers and
// their options, default_runtime_name, the NRI section and `imports`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "formats/error.h"

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
  // The tables under `plugins` this file defines ("io.containerd.grpc.v1.cri", ...):
  // containerd 1.x replaces each of them whole when an import defines it.
  std::vector<std::string> plugin_tables;
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

// The node's containerd config as containerd of major version `major` reads
// it (containerd_view.cc): /etc/containerd/config.toml, then its imports in
// order (a glob in the file name matches in name order; a file imported
// twice, or the main file importing itself as the GPU Operator writes it on
// 1.7, is read once). Measured with containerd 1.7.24 and 2.1.9:
// - 1.x: a table under `plugins` that an imported file defines REPLACES the
//   one read so far whole (the CRI table, with every handler and
//   default_runtime_name; the NRI table); a version 3 file anywhere is
//   refused (containerd does not start);
// - 2.x: every file is merged key by key, the later file winning per key;
//   the merged config has the highest version of its files, and only that
//   version's CRI table is read (a version 2 table beside a version 3 file
//   is ignored, not migrated).
// `major` 0 (unknown): 2 when the main file says version 3, else 1.
// nullopt when the main file is missing.
struct ContainerdFiles {
  ContainerdConfig config;                // the merged view: handlers, default, NRI
  std::vector<std::string> read;          // the files read, main first
  int major = 1;                          // the merge rules used (1 or 2)
  std::string cri_source;                 // 1.x: the file whose CRI table containerd reads
  std::vector<ContainerdHandler> hidden;  // 1.x: handlers a later CRI table replaced
};
[[nodiscard]] Result<std::optional<ContainerdFiles>> ReadContainerdConfig(NodeFiles& fs,
                                                                          int major = 0);

// containerd's major version from `containerd --version` output ("containerd
// github.com/containerd/containerd/v2 2.1.9 ..."), or 0.
int ContainerdMajor(std::string_view version_number);

}  // namespace ocirlimit::engines
