// The node's containerd config as containerd reads it: the main file and its
// imports, merged by 1.x's or 2.x's rules (containerd.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "adapters/engines/constants.h"
#include "adapters/engines/containerd.h"
#include "core/pattern.h"
#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

// The files an `imports` entry names: the path itself, or with a glob in
// its file name, the matching names of its directory in order.
std::vector<std::string> ImportPaths(NodeFiles& fs, const std::string& entry) {
  const size_t slash = entry.rfind('/');
  const std::string base = slash == std::string::npos ? entry : entry.substr(slash + 1);
  if (slash == std::string::npos || base.find_first_of("*?[") == std::string::npos) return {entry};
  std::vector<std::string> out;
  const std::string dir = entry.substr(0, slash);
  for (const auto& name : fs.ListDir(dir)) {
    if (GlobMatch(base, name)) out.push_back(Cat(dir, "/", name));
  }
  return out;
}

bool Defines(const ContainerdConfig& cfg, std::string_view plugin) {
  return std::find(cfg.plugin_tables.begin(), cfg.plugin_tables.end(), plugin) !=
         cfg.plugin_tables.end();
}

// containerd 1.x: each plugin table the imported file defines replaces the
// one read so far, whole.
void MergeReplacing(ContainerdFiles& into, ContainerdConfig from, const std::string& path) {
  ContainerdConfig& cfg = into.config;
  for (std::string_view plugin : {kCriPluginV2, kCriPluginV3}) {
    if (!Defines(from, plugin)) continue;
    auto moved = std::stable_partition(cfg.handlers.begin(), cfg.handlers.end(),
                                       [&](const auto& h) { return h.plugin != plugin; });
    into.hidden.insert(into.hidden.end(), moved, cfg.handlers.end());
    cfg.handlers.erase(moved, cfg.handlers.end());
    if (plugin == CriPluginFor(cfg.version)) {
      into.cri_source = path;
      cfg.default_runtime_name = from.default_runtime_name;
    }
  }
  for (auto& h : from.handlers) cfg.handlers.push_back(std::move(h));
  if (Defines(from, kContainerdNriPlugin)) cfg.nri = from.nri;
}

template <class T>
void Take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

// containerd 2.x: key by key, the imported file winning per key.
void MergeKeys(ContainerdConfig& cfg, ContainerdConfig from) {
  cfg.version = std::max(cfg.version, from.version);
  for (auto& h : from.handlers) {
    auto same = std::find_if(cfg.handlers.begin(), cfg.handlers.end(), [&](const auto& x) {
      return x.name == h.name && x.plugin == h.plugin;
    });
    if (same == cfg.handlers.end()) {
      cfg.handlers.push_back(std::move(h));
      continue;
    }
    if (!h.runtime_type.empty()) same->runtime_type = h.runtime_type;
    if (!h.binary_name.empty()) same->binary_name = h.binary_name;
    if (!h.pod_annotations.empty()) same->pod_annotations = h.pod_annotations;
    same->source = h.source;
  }
  Take(cfg.default_runtime_name, from.default_runtime_name);
  Take(cfg.nri.disable, from.nri.disable);
  Take(cfg.nri.socket_path, from.nri.socket_path);
  Take(cfg.nri.plugin_path, from.nri.plugin_path);
}

Status RefuseVersion3(const ContainerdConfig& cfg, const std::string& path) {
  if (cfg.version <= 2) return Ok{};
  return MakeError(path + ": version " + std::to_string(cfg.version) +
                   ": containerd 1.x reads versions 1 and 2 only and refuses to start "
                   "(version 3 is containerd 2.x's)");
}

Status ReadImports(NodeFiles& fs, ContainerdFiles& out, const std::vector<std::string>& imports) {
  for (const auto& entry : imports) {
    for (const auto& path : ImportPaths(fs, entry)) {
      if (std::find(out.read.begin(), out.read.end(), path) != out.read.end()) continue;
      auto t = fs.ReadFile(path);
      if (!t) {
        if (t.error().err == ENOENT) continue;  // containerd skips a missing import
        return t.error().Wrap(path);
      }
      auto imported = ParseContainerdConfig(*t, path);
      if (!imported) return imported.error();
      out.read.push_back(path);
      if (out.major >= 2) {
        MergeKeys(out.config, std::move(*imported));
        continue;
      }
      if (auto st = RefuseVersion3(*imported, path); !st) return st.error();
      MergeReplacing(out, std::move(*imported), path);
    }
  }
  return Ok{};
}

}  // namespace

int ContainerdMajor(std::string_view version_number) {
  if (version_number.empty() || version_number[0] < '0' || version_number[0] > '9') return 0;
  return std::atoi(std::string(version_number.substr(0, version_number.find('.'))).c_str());
}

Result<std::optional<ContainerdFiles>> ReadContainerdConfig(NodeFiles& fs, int major) {
  const std::string main(kContainerdConfig);
  auto text = fs.ReadFile(main);
  if (!text) {
    if (text.error().err == ENOENT) return std::optional<ContainerdFiles>();
    return text.error().Wrap(main);
  }
  auto cfg = ParseContainerdConfig(*text, main);
  if (!cfg) return cfg.error();
  ContainerdFiles out{*cfg, {main}, major, main, {}};
  if (out.major <= 0) out.major = cfg->version >= 3 ? 2 : 1;
  if (out.major < 2) {
    if (auto st = RefuseVersion3(*cfg, main); !st) return st.error();
  }
  if (auto st = ReadImports(fs, out, cfg->imports); !st) return st.error();
  for (auto& h : out.config.handlers) h.read = CriPluginFor(out.config.version) == h.plugin;
  return std::optional<ContainerdFiles>(std::move(out));
}

}  // namespace ocirlimit::engines
