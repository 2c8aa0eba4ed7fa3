#include "adapters/engines/hooks_dir.h"

#include "formats/text.h"

namespace ocirlimit::engines {

Result<HooksDirSetting> HooksDirFromConfigs(const std::vector<ConfigText>& files,
                                            const std::vector<std::string>& table) {
  HooksDirSetting out;
  std::string key = "[";
  std::vector<std::string_view> path;
  for (const auto& t : table) {
    key += (key.size() > 1 ? "." : "") + t;
    path.emplace_back(t);
  }
  key += "]";
  for (const auto& f : files) {
    auto root = ParseToml(f.text, f.path);
    if (!root) return root.error();
    const toml::table* t = TomlTableAt(*root, path);
    if (t == nullptr) continue;
    auto dirs = TomlStrings(*t, "hooks_dir", f.path + ": " + key);
    if (!dirs) return dirs.error();
    if (!*dirs) continue;
    out.dirs = **dirs;
    out.source = f.path;
  }
  return out;
}

std::vector<ConfigText> ReadConfigFiles(NodeFiles& fs, const std::vector<std::string>& paths,
                                        const std::vector<std::string>& dirs,
                                        std::string_view suffix) {
  std::vector<ConfigText> out;
  auto add = [&](const std::string& path) {
    if (auto text = fs.ReadFile(path)) out.push_back({path, *text});
  };
  for (const auto& p : paths) add(p);
  for (const auto& d : dirs) {
    for (const auto& name : fs.ListDir(d)) {
      if (name.ends_with(suffix)) add(Cat(d, "/", name));
    }
  }
  return out;
}

std::vector<ConfigText> PodmanConfigFiles(NodeFiles& fs) {
  return ReadConfigFiles(fs, {std::string(kPodmanConfUsr), std::string(kPodmanConfEtc)},
                         {std::string(kPodmanConfDir)}, ".conf");
}

}  // namespace ocirlimit::engines
