#include "effects/config_loader.h"

#include <cerrno>
#include <cstdlib>

#include "core/unprivileged.h"
#include "effects/files.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;

}  // namespace

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<Config> LoadConfig(const std::optional<std::string>& flag, const EnvLookup& env) {
  return LoadConfigFrom(ResolveConfigPath(flag, env), env);
}

Result<LoadedConfig> LoadConfigAs(const std::optional<std::string>& flag, const EnvLookup& env,
                                  bool unprivileged) {
  const ConfigPath where = ResolveConfigPath(flag, env);
  auto loaded = LoadConfigFrom(where, env);
  if (loaded) return LoadedConfig{std::move(*loaded), {}};
  if (!UnreadableConfigIsNone(loaded.error(), unprivileged)) return loaded.error();
  auto none = ApplyEnvOverrides(Config{}, env);
  if (!none) return none.error();
  return LoadedConfig{std::move(*none), {UnreadableConfigWarning(loaded.error())}};
}

Result<Config> LoadConfigFrom(const ConfigPath& where, const EnvLookup& env) {
  Config cfg;
  auto text = ReadFileBounded(where.path, kMaxConfigBytes);
  if (text) {
    auto parsed = ParseConfig(*text, where.path);
    if (!parsed) return parsed.error();
    cfg = std::move(*parsed);
  } else if (where.must_exist || text.error().err != ENOENT) {
    return text.error().Wrap("config");
  }
  return ApplyEnvOverrides(std::move(cfg), env);
}

}  // namespace ocirlimit
