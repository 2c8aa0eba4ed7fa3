#include "adapters/engines/our_config.h"

#include <cerrno>

#include "formats/text.h"

namespace ocirlimit::engines {

std::string KeySource(const std::vector<ConfigText>& files, std::string_view table,
                      std::string_view key) {
  std::string out;
  for (const auto& f : files) {
    auto root = ParseToml(f.text, f.path);
    if (root && TomlAt(*root, {table, key}) != nullptr) out = f.path;
  }
  return out;
}

OurConfig ReadOurConfig(NodeFiles& fs, const std::string& path) {
  OurConfig out;
  out.path = path;
  out.dropin_dir = DropInDir(path);
  for (const auto& name : fs.ListDir(out.dropin_dir)) {
    if (name.starts_with(".") || !name.ends_with(".toml")) continue;
    const std::string f = Cat(out.dropin_dir, "/", name);
    auto t = fs.ReadFile(f);
    if (!t) {
      out.state = OurConfigState::kUnreadable;
      out.error = "cannot read: " + t.error().Text();
      out.error_path = f;
      return out;
    }
    out.files.push_back({f, *t});
  }
  auto text = fs.ReadFile(path);
  if (!text && !(text.error().err == ENOENT && !out.files.empty())) {
    out.state = text.error().err == ENOENT ? OurConfigState::kAbsent : OurConfigState::kUnreadable;
    out.error = "cannot read: " + text.error().Text();
    out.error_path = path;
    return out;
  }
  if (text) out.files.push_back({path, *text});
  std::vector<ConfigFile> files;
  for (const auto& f : out.files) files.push_back({f.path, f.text});
  auto cfg = ParseConfigFiles(files);
  if (!cfg) {
    out.state = OurConfigState::kInvalid;
    out.error = cfg.error().Text();
    out.error_path = path;
    out.wrapper.readable = false;
    out.wrapper.error = out.error;
    return out;
  }
  out.state = OurConfigState::kParsed;
  out.config = *cfg;
  out.wrapper.runtimes = cfg->runtimes;
  out.wrapper.source = KeySource(out.files, "runtime", "runtimes");
  return out;
}

}  // namespace ocirlimit::engines
