// Config files -> one merged TOML table -> Config (config.cc), and where
// the files are: the drop-in dir, the path from the flag or environment,
// the environment's overrides.
#include <sstream>

#include "core/config.h"
#include "core/config_toml.h"
#include "formats/text.h"
#include "formats/toml_guard.h"

namespace ocirlimit {
namespace {

Result<toml::table> ParseTomlFile(std::string_view toml_text, const std::string& source) {
  std::string where = "config " + Quote(source);
  if (auto guard = CheckTomlSafeText(toml_text); !guard) {
    return guard.error().Wrap(where);
  }
  try {
    return toml::parse(toml_text, source);
  } catch (const toml::parse_error& err) {
    std::ostringstream os;
    os << where << ": line " << err.source().begin.line << ": " << OneLine(err.description());
    return MakeError(os.str());
  }
}

// Merges `from` into `into`: tables key by key, [[rule]]-style arrays of
// tables appended, any other value replaced.
void MergeToml(toml::table& into, const toml::table& from) {
  for (const auto& [key, value] : from) {
    toml::node* have = into.get(key.str());
    if (have != nullptr && have->is_table() && value.is_table()) {
      MergeToml(*have->as_table(), *value.as_table());
    } else if (have != nullptr && have->is_array_of_tables() && value.is_array_of_tables()) {
      for (const auto& t : *value.as_array()) have->as_array()->push_back(t);
    } else {
      into.insert_or_assign(key, value);
    }
  }
}

// A file's rlimits list, in either form: top-level `rlimits` or NVIDIA's
// `[nvidia-container-runtime] rlimits`.
bool HasTopRlimits(const toml::table& t) { return t.get("rlimits") != nullptr; }
bool HasNvidiaRlimits(const toml::table& t) {
  const toml::node* nv = t.get(kNvidiaSection);
  return nv != nullptr && nv->is_table() && nv->as_table()->get("rlimits") != nullptr;
}

// The two forms of rlimits are one setting: across files the later file's
// list wins whatever its form, so a file that sets one form drops the other
// form from what the earlier files merged. One file holding both is an error.
Status MergeRlimitsForms(toml::table& into, const toml::table& from, const std::string& path) {
  const bool top = HasTopRlimits(from);
  const bool nvidia = HasNvidiaRlimits(from);
  if (top && nvidia) {
    return MakeError("config " + Quote(path) + ": rlimits is set both at the top level and in [" +
                     std::string(kNvidiaSection) + "]; keep one");
  }
  if (top && HasNvidiaRlimits(into)) into.get(kNvidiaSection)->as_table()->erase("rlimits");
  if (nvidia) into.erase("rlimits");
  return Ok{};
}

}  // namespace

Result<Config> ParseConfig(std::string_view toml_text, const std::string& source) {
  return ParseConfigFiles({{source, std::string(toml_text)}});
}

Result<Config> ParseConfigFiles(const std::vector<ConfigFile>& files) {
  Config cfg;
  toml::table root;
  std::string names;
  for (const auto& f : files) {
    auto t = ParseTomlFile(f.text, f.path);
    if (!t) return t.error();
    if (auto forms = MergeRlimitsForms(root, *t, f.path); !forms) return forms.error();
    MergeToml(root, *t);
    names += (names.empty() ? "" : " + ") + Quote(f.path);
  }
  if (!files.empty()) cfg.source = files.back().path;
  if (auto st = ParseConfigTable(root, cfg); !st) return st.error().Wrap("config " + names);
  for (auto& rule : cfg.rules) rule.match.compiled = CompileRuleMatch(rule.match);
  return cfg;
}

std::string DropInDir(std::string_view config_path) {
  std::string_view stem = config_path;
  if (stem.ends_with(".toml")) stem.remove_suffix(5);
  return std::string(stem) + ".d";
}

Result<Config> ApplyEnvOverrides(Config config, const EnvLookup& env) {
  for (std::string_view name : {kNvidiaRlimitsEnv, kRlimitsEnv}) {
    std::optional<std::string> value = env(name);
    if (!value) continue;
    auto parsed = ParseRlimitCsv(*value);
    if (!parsed) return parsed.error().Wrap("environment " + std::string(name));
    config.rlimits = OverrideRlimits(std::move(config.rlimits), *parsed);
  }
  return config;
}

ConfigPath ResolveConfigPath(const std::optional<std::string>& flag, const EnvLookup& env) {
  if (flag) return {*flag, true};
  if (auto e = env(kConfigEnv); e && !e->empty()) return {*e, true};
  return {std::string(kDefaultConfigPath), false};
}

}  // namespace ocirlimit
