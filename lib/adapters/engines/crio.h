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
  std::string monitor_path;    // "" : [crio.runtime] conmon
  std::string monitor_cgroup;  // "" : CRI-O's default (conmon_cgroup, else system.slice)
  std::string runtime_root;    // "" : CRI-O's DefaultRuntimeRoot, /run/crun
  std::string source;          // the last file that set a key of it
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
  std::string cgroup_manager = "systemd";  // [crio.runtime] cgroup_manager
  std::string conmon_cgroup;               // [crio.runtime] conmon_cgroup (deprecated global)
  std::string storage_root = std::string(kCrioStorageRoot);  // [crio] root
};

// CRI-O's runtime root for a handler without runtime_root (DefaultRuntimeRoot:
// runc too runs with --root=/run/crun).
inline constexpr std::string_view kCrioDefaultRuntimeRoot = "/run/crun";

// The handler's runtime root as CRI-O passes it (--root).
std::string RuntimeRoot(const CrioRuntime& r);

// What CRI-O 1.31 checks of the monitor fields when it starts
// (TranslateMonitorFields): conmon_cgroup, when set, replaces every
// handler's monitor_cgroup; an empty one becomes system.slice; the cgroupfs
// manager takes only "pod" (or empty), systemd "pod" or a slice. The first
// handler crio would refuse, as one line naming the field, its value and the
// file, or Ok.
[[nodiscard]] Status CheckCrioMonitors(const CrioConfig& cfg);

// The PATH conmon gives a runtime: monitor_env's PATH, else conmon's default.
std::string MonitorPath(const CrioRuntime& r);

// The runtime `name`, or nullptr.
const CrioRuntime* FindCrioRuntime(const CrioConfig& cfg, const std::string& name);

[[nodiscard]] Result<CrioConfig> ParseCrioConfigs(const std::vector<ConfigText>& files);

// crio.conf and crio.conf.d, as CRI-O reads them.
std::vector<ConfigText> CrioConfigFiles(NodeFiles& fs);

}  // namespace ocirlimit::engines
