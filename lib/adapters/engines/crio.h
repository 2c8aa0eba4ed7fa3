// CRI-O's configuration: /etc/crio/crio.conf, then every file of
// /etc/crio/crio.conf.d in name order, whatever its suffix; a later file's
// key wins. Any file may lack any table, `[crio]` included (an empty
// crio.conf with everything in crio.conf.d is a normal setup).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/hooks_dir.h"
#include "adapters/engines/node_files.h"
#include "adapters/engines/toml_read.h"
#include "formats/error.h"

namespace ocirlimit::engines {

// [crio.runtime.runtimes.NAME]
struct CrioRuntime {
  std::string name;
  std::string runtime_path;  // "" : CRI-O looks the handler's name up on its PATH
  std::string runtime_type;  // "oci" unless set
  std::vector<std::string> monitor_env;
  std::vector<std::string> allowed_annotations;
  std::string source;  // the last file that set a key of it
};

struct CrioConfig {
  HooksDirSetting hooks;
  std::vector<CrioRuntime> runtimes;  // by name
  std::string default_runtime = std::string(kCrioDefaultRuntime);
  std::string default_runtime_source;                // "" : CRI-O's default
  bool nri_enabled = true;                           // [crio.nri] enable_nri
  std::string nri_socket = std::string(kNriSocket);  // [crio.nri] nri_listen
  std::string nri_plugin_dir = std::string(kNriPluginDir);
  std::string nri_source;          // the last file with a [crio.nri] key, or "" (CRI-O's defaults)
  std::vector<std::string> files;  // the files read, in order
};

// The PATH conmon gives a runtime: monitor_env's PATH, else conmon's default.
std::string MonitorPath(const CrioRuntime& r);

// The runtime `name`, or nullptr.
const CrioRuntime* FindCrioRuntime(const CrioConfig& cfg, const std::string& name);

[[nodiscard]] Result<CrioConfig> ParseCrioConfigs(const std::vector<ConfigText>& files);

// crio.conf and crio.conf.d, as CRI-O reads them.
std::vector<ConfigText> CrioConfigFiles(NodeFiles& fs);

}  // namespace ocirlimit::engines
