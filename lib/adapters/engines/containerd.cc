#include "adapters/engines/containerd.h"

#include <algorithm>
#include <cerrno>

#include "adapters/engines/constants.h"
#include "adapters/engines/toml_read.h"
#include "core/pattern.h"
#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

Result<ContainerdHandler> ReadHandler(const toml::table& t, const std::string& at) {
  ContainerdHandler h;
  auto type = TomlString(t, "runtime_type", at);
  if (!type) return type.error();
  h.runtime_type = type->value_or("");
  if (const toml::node* opts = t.get("options"); opts != nullptr && opts->is_table()) {
    auto bin = TomlString(*opts->as_table(), "BinaryName", at + ": options");
    if (!bin) return bin.error();
    h.binary_name = bin->value_or("");
  }
  if (const toml::node* pa = t.get("pod_annotations"); pa != nullptr) {
    const toml::array* arr = pa->as_array();
    if (arr == nullptr) return MakeError(at + ": pod_annotations: must be an array");
    for (const auto& e : *arr) {
      if (const auto* s = e.as_string()) h.pod_annotations.push_back(s->get());
    }
  }
  return h;
}

Status ReadHandlers(const toml::table& root, const std::string& source, ContainerdConfig& out) {
  for (std::string_view plugin : {kCriPluginV2, kCriPluginV3}) {
    const toml::node* runtimes = TomlAt(root, {"plugins", plugin, "containerd", "runtimes"});
    if (runtimes == nullptr || !runtimes->is_table()) continue;
    for (const auto& [name, node] : *runtimes->as_table()) {
      const std::string at = Cat(source, ": runtime ", Quote(name.str()));
      const toml::table* t = node.as_table();
      if (t == nullptr) return MakeError(at + ": must be a table");
      auto h = ReadHandler(*t, at);
      if (!h) return h.error();
      h->plugin = std::string(plugin);
      h->read = CriPluginFor(out.version) == plugin;
      h->name = std::string(name.str());
      h->source = source;
      out.handlers.push_back(std::move(*h));
    }
  }
  return Ok{};
}

Status ReadNri(const toml::table& root, const std::string& source, ContainerdNriSection& out) {
  const toml::table* nri = TomlTableAt(root, {"plugins", kContainerdNriPlugin});
  if (nri == nullptr) return Ok{};
  const std::string where = source + ": nri";
  auto disable = TomlBool(*nri, "disable", where);
  if (!disable) return disable.error();
  auto socket = TomlString(*nri, "socket_path", where);
  if (!socket) return socket.error();
  auto plugins = TomlString(*nri, "plugin_path", where);
  if (!plugins) return plugins.error();
  out = {*disable, *socket, *plugins};
  return Ok{};
}

}  // namespace

std::string_view CriPluginFor(int64_t version) {
  if (version == 2) return kCriPluginV2;
  if (version == 3) return kCriPluginV3;
  return "";
}

Result<ContainerdConfig> ParseContainerdConfig(std::string_view text, const std::string& source) {
  auto root = ParseToml(text, source);
  if (!root) return root.error();
  ContainerdConfig out;
  if (const toml::node* v = root->get("version"); v != nullptr) {
    if (!v->is_integer()) return MakeError(source + ": version: must be an integer");
    out.version = v->as_integer()->get();
  }
  if (auto s = ReadHandlers(*root, source, out); !s) return s.error();
  if (std::string_view plugin = CriPluginFor(out.version); !plugin.empty()) {
    if (const toml::table* c = TomlTableAt(*root, {"plugins", plugin, "containerd"})) {
      auto def = TomlString(*c, "default_runtime_name", source);
      if (!def) return def.error();
      out.default_runtime_name = *def;
    }
  }
  if (auto s = ReadNri(*root, source, out.nri); !s) return s.error();
  if (const toml::table* plugins = TomlTableAt(*root, {"plugins"})) {
    for (const auto& [key, node] : *plugins) out.plugin_tables.emplace_back(key.str());
  }
  auto imports = TomlStrings(*root, "imports", source);
  if (!imports) return imports.error();
  out.imports = imports->value_or(std::vector<std::string>{});
  return out;
}

std::string DefaultHandlerName(const ContainerdConfig& cfg) {
  return cfg.default_runtime_name.value_or(std::string(kContainerdDefaultHandler));
}

const ContainerdHandler* FindHandler(const ContainerdConfig& cfg, const std::string& name) {
  for (const auto& h : cfg.handlers) {
    if (h.read && h.name == name) return &h;
  }
  return nullptr;
}

ContainerdNri NriSettings(const ContainerdConfig& cfg, int containerd_major) {
  ContainerdNri out;
  out.enabled = cfg.nri.disable.has_value() ? !*cfg.nri.disable : containerd_major >= 2;
  out.socket_path = cfg.nri.socket_path.value_or(std::string(kNriSocket));
  if (out.socket_path.empty()) out.socket_path = std::string(kNriSocket);
  out.plugin_path = cfg.nri.plugin_path.value_or(std::string(kNriPluginDir));
  if (out.plugin_path.empty()) out.plugin_path = std::string(kNriPluginDir);
  return out;
}

}  // namespace ocirlimit::engines
