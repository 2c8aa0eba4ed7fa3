#include "effects/config_loader.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/unprivileged.h"
#include "effects/files.h"
#include "formats/text.h"

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

Result<Config> LoadConfig(const std::optional<std::string>& flag, const EnvLookup& env,
                          std::vector<std::string>* warnings) {
  return LoadConfigFrom(ResolveConfigPath(flag, env), env, warnings);
}

Result<LoadedConfig> LoadConfigAs(const std::optional<std::string>& flag, const EnvLookup& env,
                                  bool unprivileged) {
  const ConfigPath where = ResolveConfigPath(flag, env);
  std::vector<std::string> warnings;
  auto loaded = LoadConfigFrom(where, env, &warnings);
  if (loaded) return LoadedConfig{std::move(*loaded), std::move(warnings)};
  if (!UnreadableConfigIsNone(loaded.error(), unprivileged)) return loaded.error();
  auto none = ApplyEnvOverrides(Config{}, env);
  if (!none) return none.error();
  return LoadedConfig{std::move(*none), {UnreadableConfigWarning(loaded.error())}};
}

Result<std::vector<std::string>> ListDropIns(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return out;
    return MakeError("open directory " + Quote(dir), errno);
  }
  while (const dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.starts_with(".") || !name.ends_with(".toml")) continue;
    std::string path = dir;
    path.append("/").append(name);
    out.push_back(std::move(path));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Result<Config> LoadConfigFrom(const ConfigPath& where, const EnvLookup& env,
                              std::vector<std::string>* warnings) {
  std::vector<ConfigFile> files;
  auto dropins = ListDropIns(DropInDir(where.path));
  if (!dropins) return dropins.error().Wrap("config");
  for (const auto& path : *dropins) {
    auto text = ReadFileBounded(path, kMaxConfigBytes);
    if (!text && text.error().err == ENOENT) {
      if (warnings != nullptr) {
        warnings->push_back("config drop-in " + Quote(path) +
                            " is gone (removed or renamed after its directory was listed, or a "
                            "dangling symlink); skipped");
      }
      continue;
    }
    if (!text) return text.error().Wrap("config");
    files.push_back({path, std::move(*text)});
  }
  auto text = ReadFileBounded(where.path, kMaxConfigBytes);
  if (text) {
    files.push_back({where.path, std::move(*text)});
  } else if ((where.must_exist && files.empty()) || text.error().err != ENOENT) {
    // A named file may be missing when its drop-ins are there: the config
    // is the file and its drop-ins.
    return text.error().Wrap("config");
  }
  Config cfg;
  if (!files.empty()) {
    auto parsed = ParseConfigFiles(files);
    if (!parsed) return parsed.error();
    cfg = std::move(*parsed);
  }
  return ApplyEnvOverrides(std::move(cfg), env);
}

}  // namespace ocirlimit
