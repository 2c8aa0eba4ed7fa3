#include "core/config.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/config_toml.h"
#include "core/pattern.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

// Keys of NVIDIA's own config.toml that may share a file with ours, so that
// `--config /etc/nvidia-container-runtime/config.toml` works unchanged.
bool IsNvidiaKey(std::string_view key) {
  static const std::set<std::string_view> kTopLevel = {
      "accept-nvidia-visible-devices-as-volume-mounts",
      "accept-nvidia-visible-devices-envvar-when-unprivileged",
      "disable-require",
      "supported-driver-capabilities",
      "swarm-resource",
      "features",
  };
  return key.starts_with("nvidia-") || kTopLevel.count(key) > 0;
}

Result<std::vector<std::string>> StringArray(const toml::node& node, const std::string& where) {
  const toml::array* arr = node.as_array();
  if (arr == nullptr) return MakeError(where + ": must be an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* s = (*arr)[i].as_string();
    if (s == nullptr) {
      return MakeError(where + "[" + std::to_string(i) + "]: must be a string");
    }
    if (s->get().find('\0') != std::string::npos) {
      return MakeError(where + "[" + std::to_string(i) + "]: contains a NUL character");
    }
    out.push_back(s->get());
  }
  return out;
}

Result<std::string> String(const toml::node& node, const std::string& where) {
  const auto* s = node.as_string();
  if (s == nullptr) return MakeError(where + ": must be a string");
  // A NUL would cut a path short at the syscall: `log-file = "/a\u0000b"`
  // would write /a.
  if (s->get().find('\0') != std::string::npos) {
    return MakeError(where + ": contains a NUL character");
  }
  return s->get();
}

Result<std::vector<Rlimit>> Rlimits(const toml::node& node, const std::string& where) {
  auto entries = StringArray(node, where);
  if (!entries) return entries.error();
  auto parsed = ParseRlimitList(*entries);
  if (!parsed) return parsed.error().Wrap(where);
  return parsed;
}

Status ParseRuntimeTable(const toml::node& node, const std::string& where, Config& cfg) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError(where + ": must be a table");
  for (const auto& [key, value] : *t) {
    std::string at = where + "." + std::string(key.str());
    if (key.str() != "runtimes") return MakeError("unknown key " + Quote(at));
    auto list = StringArray(value, at);
    if (!list) return list.error();
    if (list->empty()) return MakeError(at + ": must name at least one runtime");
    for (const auto& r : *list) {
      if (r.empty()) return MakeError(at + ": empty runtime name");
    }
    cfg.runtimes = *list;
  }
  return Ok{};
}

Status ParseHookTable(const toml::node& node, const std::string& where, Config& cfg) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError(where + ": must be a table");
  for (const auto& [key, value] : *t) {
    std::string at = where + "." + std::string(key.str());
    if (key.str() != "chain") return MakeError("unknown key " + Quote(at));
    auto chain = String(value, at);
    if (!chain) return chain.error();
    if (!chain->starts_with("/")) {
      return MakeError(at + ": " + Quote(*chain) + " must be an absolute path");
    }
    cfg.chain = *chain;
  }
  return Ok{};
}

Result<bool> Bool(const toml::node& node, const std::string& where) {
  const auto* b = node.as_boolean();
  if (b == nullptr) return MakeError(where + ": must be true or false");
  return b->get();
}

Status CheckPattern(const std::string& pattern, const std::string& where) {
  if (auto st = CheckRegex(pattern); !st) {
    return MakeError(where + ": regex " + Quote(pattern) + ": " + st.error().msg);
  }
  return Ok{};
}

// { "key-regex" = "value-regex", ... }, every pattern checked.
Result<std::vector<std::pair<std::string, std::string>>> PatternTable(const toml::node& node,
                                                                      const std::string& where,
                                                                      bool check_keys) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError(where + ": must be a table of \"pattern\" = \"pattern\"");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : *t) {
    std::string k(key.str());
    std::string at = where + "." + Quote(k);
    if (check_keys) {
      if (auto st = CheckPattern(k, where + " key"); !st) return st.error();
    }
    auto v = String(value, at);
    if (!v) return v.error();
    if (auto st = CheckPattern(*v, at); !st) return st.error();
    out.emplace_back(k, *v);
  }
  if (out.empty()) return MakeError(where + ": must not be empty");
  return out;
}

Result<std::vector<std::string>> NonEmptyStrings(const toml::node& node, const std::string& where) {
  auto list = StringArray(node, where);
  if (!list) return list.error();
  if (list->empty()) return MakeError(where + ": must not be empty");
  for (size_t i = 0; i < list->size(); ++i) {
    if ((*list)[i].empty()) return MakeError(where + "[" + std::to_string(i) + "]: empty");
  }
  return list;
}

// A glob over Kubernetes names: what a namespace (DNS label) or pod name
// (DNS subdomain) can hold, plus fnmatch's * ? [ ] ! ^.
Result<std::vector<std::string>> NameGlobs(const toml::node& node, const std::string& where) {
  auto l = NonEmptyStrings(node, where);
  if (!l) return l.error();
  constexpr size_t kMaxName = 253;
  for (size_t i = 0; i < l->size(); ++i) {
    const std::string& g = (*l)[i];
    const bool ok = g.size() <= kMaxName && std::all_of(g.begin(), g.end(), [](char ch) {
                      return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                             std::string_view("-.*?[]!^").find(ch) != std::string_view::npos;
                    });
    if (!ok) {
      return MakeError(Cat(where, "[", std::to_string(i), "]: ", Quote(g),
                           " is not a Kubernetes name glob (lowercase letters, digits, '-', '.', "
                           "and * ? [...])"));
    }
  }
  return l;
}

Status ParseMatch(const toml::node& node, const std::string& where, RuleMatch& m) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError(where + ": must be a table");
  bool any = false;
  for (const auto& [key_node, value] : *t) {
    std::string key(key_node.str());
    std::string at = Cat(where, ".", key);
    any = true;
    if (key == "always") {
      auto b = Bool(value, at);
      if (!b) return b.error();
      if (!*b) return MakeError(at + ": only true is meaningful; remove the key instead");
      m.always = true;
    } else if (key == "annotations") {
      auto p = PatternTable(value, at, /*check_keys=*/true);
      if (!p) return p.error();
      m.annotations = *p;
    } else if (key == "env") {
      auto l = NonEmptyStrings(value, at);
      if (!l) return l.error();
      m.env = *l;
    } else if (key == "env-values") {
      auto p = PatternTable(value, at, /*check_keys=*/false);
      if (!p) return p.error();
      m.env_values = *p;
    } else if (key == "devices") {
      auto l = NonEmptyStrings(value, at);
      if (!l) return l.error();
      for (const auto& g : *l) {
        if (!g.starts_with("/")) return MakeError(at + ": " + Quote(g) + " must be absolute");
      }
      m.devices = *l;
    } else if (key == "cdi") {
      auto l = NonEmptyStrings(value, at);
      if (!l) return l.error();
      for (const auto& g : *l) {
        if (g.find('/') == std::string::npos || g.find('=') == std::string::npos) {
          return MakeError(at + ": " + Quote(g) +
                           " is not a CDI device name glob (vendor/class=name, e.g. "
                           "\"nvidia.com/gpu=*\")");
        }
      }
      m.cdi = *l;
    } else if (key == "namespaces" || key == "pods") {
      auto l = NameGlobs(value, at);
      if (!l) return l.error();
      (key == "namespaces" ? m.namespaces : m.pods) = *l;
    } else {
      return MakeError(where + ": unknown key " + Quote(key));
    }
  }
  if (!any) return MakeError(where + ": no conditions; use always = true for every container");
  if (m.always && t->size() > 1) {
    return MakeError(where + ": always = true cannot be combined with other conditions");
  }
  return Ok{};
}

Status ParseRules(const toml::node& node, Config& cfg) {
  const toml::array* arr = node.as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    return MakeError("rule: must be [[rule]] tables");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *(*arr)[i].as_table();
    Rule rule;
    rule.name = "rule[" + std::to_string(i) + "]";
    if (const toml::node* n = t.get("name")) {
      auto name = String(*n, rule.name + ".name");
      if (!name) return name.error();
      if (name->empty()) return MakeError(rule.name + ".name: empty");
      rule.name = *name;
    }
    if (!names.insert(rule.name).second) {
      return MakeError(rule.name + ": name " + Quote(rule.name) + " is used twice");
    }
    std::string where = "rule " + Quote(rule.name);
    bool have_rlimits = false;
    bool have_match = false;
    for (const auto& [key_node, value] : t) {
      std::string key(key_node.str());
      if (key == "name") continue;
      if (key == "rlimits") {
        auto r = Rlimits(value, where + ".rlimits");
        if (!r) return r.error();
        if (r->empty()) return MakeError(where + ".rlimits: must not be empty");
        rule.rlimits = *r;
        have_rlimits = true;
      } else if (key == "match") {
        if (auto st = ParseMatch(value, where + ".match", rule.match); !st) return st.error();
        have_match = true;
      } else {
        return MakeError(where + ": unknown key " + Quote(key));
      }
    }
    if (!have_rlimits) return MakeError(where + ": rlimits is missing");
    if (!have_match)
      return MakeError(where + ": match is missing (always = true for every container)");
    cfg.rules.push_back(std::move(rule));
  }
  return Ok{};
}

// [cdi] injectors = ["nvidia-nri", "nvidia-runtime"]: who injects named CDI
// devices on this node (docs/policy.md, "GPU pods by CDI device").
Status ParseCdi(const toml::node& node, Config& cfg) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError("cdi: must be a table");
  for (const auto& [key_node, value] : *t) {
    const std::string key(key_node.str());
    if (key != "injectors") return MakeError("cdi: unknown key " + Quote(key));
    auto l = NonEmptyStrings(value, "cdi.injectors");
    if (!l) return l.error();
    for (const auto& i : *l) {
      if (i != kCdiInjectorNvidiaNri && i != kCdiInjectorNvidiaRuntime) {
        return MakeError("cdi.injectors: " + Quote(i) +
                         " is not \"nvidia-nri\" or \"nvidia-runtime\"");
      }
    }
    cfg.cdi_injectors = *l;
  }
  return Ok{};
}

Status ParseRequests(const toml::node& node, Config& cfg) {
  const toml::table* t = node.as_table();
  if (t == nullptr) return MakeError("requests: must be a table");
  for (const auto& [key_node, value] : *t) {
    std::string key(key_node.str());
    std::string at = "requests." + key;
    if (key == "enabled") {
      auto b = Bool(value, at);
      if (!b) return b.error();
      cfg.requests.enabled = *b;
    } else if (key == "ceilings") {
      auto r = Rlimits(value, at);
      if (!r) return r.error();
      cfg.requests.ceilings = *r;
    } else if (key == "sources") {
      auto names = StringArray(value, at);
      if (!names) return names.error();
      if (auto st = SetRequestSources(*names, at, cfg.requests); !st) return st.error();
    } else if (key == "over-ceiling") {
      auto s = String(value, at);
      if (!s) return s.error();
      if (*s == "clamp") {
        cfg.requests.over_ceiling = OverCeiling::kClamp;
      } else if (*s == "reject") {
        cfg.requests.over_ceiling = OverCeiling::kReject;
      } else {
        return MakeError(at + ": " + Quote(*s) + " is not \"clamp\" or \"reject\"");
      }
    } else {
      return MakeError("unknown key " + Quote(at));
    }
  }
  if (cfg.requests.enabled && cfg.requests.ceilings.empty()) {
    return MakeError(
        "requests.enabled = true needs requests.ceilings: list the types (and maxima) "
        "a container may ask for");
  }
  return Ok{};
}

}  // namespace

Status ParseConfigTable(const toml::table& root, Config& cfg) {
  for (const auto& [key_node, value] : root) {
    std::string key(key_node.str());
    if (key == "rlimits") {
      auto r = Rlimits(value, "rlimits");
      if (!r) return r.error();
      cfg.rlimits = *r;
    } else if (key == "on-error") {
      auto s = String(value, key);
      if (!s) return s.error();
      if (*s == "fail") {
        cfg.on_error = OnError::kFail;
      } else if (*s == "warn") {
        cfg.on_error = OnError::kWarn;
      } else {
        return MakeError("on-error: " + Quote(*s) + " is not \"fail\" or \"warn\"");
      }
    } else if (key == "rootless") {
      auto s = String(value, key);
      if (!s) return s.error();
      if (*s == "degrade") {
        cfg.rootless = Rootless::kDegrade;
      } else if (*s == "fail") {
        cfg.rootless = Rootless::kFail;
      } else {
        return MakeError("rootless: " + Quote(*s) + " is not \"degrade\" or \"fail\"");
      }
    } else if (key == "log-file") {
      auto s = String(value, key);
      if (!s) return s.error();
      if (!s->starts_with("/")) return MakeError("log-file: " + Quote(*s) + " must be absolute");
      cfg.log_file = *s;
    } else if (key == "runtime") {
      if (auto st = ParseRuntimeTable(value, key, cfg); !st) return st.error();
    } else if (key == "hook") {
      if (auto st = ParseHookTable(value, key, cfg); !st) return st.error();
    } else if (key == "rule") {
      if (auto st = ParseRules(value, cfg); !st) return st.error();
    } else if (key == "requests") {
      if (auto st = ParseRequests(value, cfg); !st) return st.error();
    } else if (key == "cdi") {
      if (auto st = ParseCdi(value, cfg); !st) return st.error();
    } else if (!IsNvidiaKey(key)) {
      return MakeError("unknown key " + Quote(key));
    }
  }
  const toml::node* nvidia = root.get(kNvidiaSection);
  if (nvidia == nullptr) return Ok{};
  const toml::table* nt = nvidia->as_table();
  if (nt == nullptr) return MakeError(std::string(kNvidiaSection) + ": must be a table");
  const toml::node* nv_rlimits = nt->get("rlimits");
  if (nv_rlimits == nullptr) return Ok{};
  // Both forms in the merged files cannot happen: MergeRlimitsForms keeps the
  // later file's and refuses a file with both.
  auto r = Rlimits(*nv_rlimits, std::string(kNvidiaSection) + ".rlimits");
  if (!r) return r.error();
  cfg.rlimits = *r;
  return Ok{};
}

std::shared_ptr<const CompiledMatch> CompileRuleMatch(const RuleMatch& m) {
  auto out = std::make_shared<CompiledMatch>();
  for (const auto& [k, v] : m.annotations) out->annotations.emplace_back(Regex(k), Regex(v));
  for (const auto& [name, v] : m.env_values) out->env_values.emplace_back(v);
  return out;
}

}  // namespace ocirlimit
