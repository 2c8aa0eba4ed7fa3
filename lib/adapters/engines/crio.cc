#include "adapters/engines/crio.h"

#include <algorithm>

#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

CrioRuntime& RuntimeNamed(CrioConfig& cfg, const std::string& name) {
  for (auto& r : cfg.runtimes) {
    if (r.name == name) return r;
  }
  cfg.runtimes.push_back({name, "", "oci", {}, {}, "", "", "", ""});
  return cfg.runtimes.back();
}

Status ReadRuntime(const toml::table& t, const std::string& where, CrioRuntime& r) {
  auto path = TomlString(t, "runtime_path", where);
  if (!path) return path.error();
  auto type = TomlString(t, "runtime_type", where);
  if (!type) return type.error();
  auto env = TomlStrings(t, "monitor_env", where);
  if (!env) return env.error();
  auto allowed = TomlStrings(t, "allowed_annotations", where);
  if (!allowed) return allowed.error();
  for (auto [key, field] : {std::pair<const char*, std::string*>{"monitor_path", &r.monitor_path},
                            {"monitor_cgroup", &r.monitor_cgroup},
                            {"runtime_root", &r.runtime_root}}) {
    auto v = TomlString(t, key, where);
    if (!v) return v.error();
    if (*v) *field = **v;
  }
  if (*path) r.runtime_path = **path;
  if (*type) r.runtime_type = **type;
  if (*env) r.monitor_env = **env;
  if (*allowed) r.allowed_annotations = **allowed;
  return Ok{};
}

Status ReadRuntimeTable(const toml::table& root, const std::string& source, CrioConfig& cfg) {
  const toml::table* rt = TomlTableAt(root, {"crio", "runtime"});
  if (rt == nullptr) return Ok{};
  auto def = TomlString(*rt, "default_runtime", source + ": [crio.runtime]");
  if (!def) return def.error();
  if (*def && !(*def)->empty()) {
    cfg.default_runtime = **def;
    cfg.default_runtime_source = source;
  }
  for (auto [key, field] :
       {std::pair<const char*, std::string*>{"cgroup_manager", &cfg.cgroup_manager},
        {"conmon_cgroup", &cfg.conmon_cgroup}}) {
    auto v = TomlString(*rt, key, source + ": [crio.runtime]");
    if (!v) return v.error();
    if (*v) *field = **v;
  }
  const toml::node* runtimes = rt->get("runtimes");
  if (runtimes == nullptr) return Ok{};
  if (!runtimes->is_table()) {
    return MakeError(source + ": [crio.runtime] runtimes: must be a table");
  }
  for (const auto& [name, node] : *runtimes->as_table()) {
    const std::string where =
        Cat(source, ": [crio.runtime.runtimes.", std::string(name.str()), "]");
    const toml::table* t = node.as_table();
    if (t == nullptr) return MakeError(where + ": must be a table");
    CrioRuntime& r = RuntimeNamed(cfg, std::string(name.str()));
    if (auto s = ReadRuntime(*t, where, r); !s) return s.error();
    r.source = source;
  }
  return Ok{};
}

Status ReadNri(const toml::table& root, const std::string& source, CrioConfig& cfg) {
  const toml::table* nri = TomlTableAt(root, {"crio", "nri"});
  if (nri == nullptr) return Ok{};
  const std::string where = source + ": [crio.nri]";
  auto enable = TomlBool(*nri, "enable_nri", where);
  if (!enable) return enable.error();
  auto listen = TomlString(*nri, "nri_listen", where);
  if (!listen) return listen.error();
  auto dir = TomlString(*nri, "nri_plugin_dir", where);
  if (!dir) return dir.error();
  if (*enable || *listen || *dir) cfg.nri_source = source;
  if (*enable) cfg.nri_enabled = **enable;
  if (*listen && !(*listen)->empty()) cfg.nri_socket = **listen;
  if (*dir && !(*dir)->empty()) cfg.nri_plugin_dir = **dir;
  return Ok{};
}

}  // namespace

std::string MonitorPath(const CrioRuntime& r) {
  std::string out(kCrioMonitorPath);
  for (const auto& e : r.monitor_env) {
    if (e.starts_with("PATH=")) out = e.substr(5);
  }
  return out;
}

std::string RuntimeRoot(const CrioRuntime& r) {
  return r.runtime_root.empty() ? std::string(kCrioDefaultRuntimeRoot) : r.runtime_root;
}

Status CheckCrioMonitors(const CrioConfig& cfg) {
  const bool systemd = cfg.cgroup_manager == "systemd";
  for (const auto& r : cfg.runtimes) {
    std::string cgroup = cfg.conmon_cgroup.empty() ? r.monitor_cgroup : cfg.conmon_cgroup;
    if (cgroup.empty()) cgroup = "system.slice";
    if (cgroup == "pod" || (systemd && cgroup.ends_with(".slice"))) continue;
    const std::string field = cfg.conmon_cgroup.empty()
                                  ? "[crio.runtime.runtimes." + r.name + "] monitor_cgroup"
                                  : std::string("[crio.runtime] conmon_cgroup");
    const std::string value = r.monitor_cgroup.empty() && cfg.conmon_cgroup.empty()
                                  ? "unset (CRI-O makes it \"system.slice\")"
                                  : Quote(cgroup);
    return MakeError(Cat("CRI-O would not start: ", field, " is ", value,
                         r.source.empty() ? "" : " (" + r.source + ")", ", and the ",
                         cfg.cgroup_manager, " cgroup manager takes only ",
                         systemd ? "\"pod\" or a systemd slice" : "\"pod\"",
                         "; set monitor_cgroup = \"pod\" for handler ", r.name));
  }
  return Ok{};
}

const CrioRuntime* FindCrioRuntime(const CrioConfig& cfg, const std::string& name) {
  auto it = std::find_if(cfg.runtimes.begin(), cfg.runtimes.end(),
                         [&](const CrioRuntime& r) { return r.name == name; });
  return it == cfg.runtimes.end() ? nullptr : &*it;
}

Result<CrioConfig> ParseCrioConfigs(const std::vector<ConfigText>& files) {
  CrioConfig cfg;
  auto hooks = HooksDirFromConfigs(files, {"crio", "runtime"});
  if (!hooks) return hooks.error();
  cfg.hooks = *hooks;
  for (const auto& f : files) {
    auto root = ParseToml(f.text, f.path);
    if (!root) return root.error();
    if (auto s = ReadRuntimeTable(*root, f.path, cfg); !s) return s.error();
    if (auto s = ReadNri(*root, f.path, cfg); !s) return s.error();
    if (const toml::table* crio = TomlTableAt(*root, {"crio"})) {
      auto sroot = TomlString(*crio, "root", f.path + ": [crio]");
      if (!sroot) return sroot.error();
      if (*sroot && !(*sroot)->empty()) cfg.storage_root = **sroot;
    }
    cfg.files.push_back(f.path);
  }
  // CRI-O always has its default runtime, configured or not, and its
  // built-in crun (runs as "Using runtime handler crun" though no file names it).
  RuntimeNamed(cfg, cfg.default_runtime);
  RuntimeNamed(cfg, std::string(kCrioDefaultRuntime));
  return cfg;
}

std::vector<ConfigText> CrioConfigFiles(NodeFiles& fs) {
  return ReadConfigFiles(fs, {std::string(kCrioConf)}, {std::string(kCrioConfDir)}, "");
}

}  // namespace ocirlimit::engines
