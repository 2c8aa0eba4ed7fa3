#include "adapters/engines/nvidia.h"

#include <algorithm>
#include <cerrno>

#include "adapters/engines/constants.h"
#include "adapters/engines/toml_read.h"
#include "formats/text.h"

namespace ocirlimit::engines {
namespace {

NvidiaConfig DefaultNvidiaConfig() {
  NvidiaConfig out;
  for (auto r : kNvidiaDefaultRuntimes) out.runtimes.emplace_back(r);
  return out;
}

}  // namespace

bool IsNvidiaRuntimeName(const std::string& file_name) {
  return file_name == kNvidiaRuntimeName || file_name == std::string(kNvidiaRuntimeName) + ".cdi" ||
         file_name == std::string(kNvidiaRuntimeName) + ".legacy";
}

Result<NvidiaConfig> ParseNvidiaConfig(std::string_view text, const std::string& source) {
  auto root = ParseToml(text, source);
  if (!root) return root.error();
  NvidiaConfig out = DefaultNvidiaConfig();
  out.source = source;
  if (const toml::node* v = TomlAt(*root, {kNvidiaEnvvarUnprivilegedKey})) {
    const auto* b = v->as_boolean();
    if (b == nullptr) {
      return MakeError(Cat(source, ": ", kNvidiaEnvvarUnprivilegedKey, ": want true or false"));
    }
    out.envvar_when_unprivileged = b->get();
  }
  if (const toml::table* t = TomlTableAt(*root, {"nvidia-container-runtime"})) {
    auto list = TomlStrings(*t, "runtimes", source + ": [nvidia-container-runtime]");
    if (!list) return list.error();
    if (*list) {
      out.runtimes = **list;
      out.runtimes_set = true;
    }
  }
  return out;
}

std::string NvidiaConfigPathFor(const std::string& binary) {
  if (binary.starts_with(std::string(kOperatorToolkitDir) + "/")) {
    return std::string(kOperatorNvidiaConfig);
  }
  return std::string(kNvidiaConfig);
}

Result<NvidiaConfig> ReadNvidiaConfig(NodeFiles& fs, const std::string& binary) {
  const std::string path = NvidiaConfigPathFor(binary);
  auto text = fs.ReadFile(path);
  if (!text) {
    if (text.error().err == ENOENT) return DefaultNvidiaConfig();
    return text.error().Wrap(path);
  }
  return ParseNvidiaConfig(*text, path);
}

std::vector<std::string> NvidiaInjectorGaps(NodeFiles& fs,
                                            const std::vector<std::string>& nvidia_runtimes) {
  std::vector<std::string> out;
  if (nvidia_runtimes.empty()) {
    out.emplace_back(
        "NVIDIA's runtime runs in no handler's chain on this node, so nothing turns "
        "NVIDIA_VISIBLE_DEVICES into a device");
  }
  std::vector<std::string> seen;
  for (const auto& binary : nvidia_runtimes) {
    const std::string path = NvidiaConfigPathFor(binary);
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    auto cfg = ReadNvidiaConfig(fs, binary);
    if (!cfg) {
      out.push_back(Cat("NVIDIA's config cannot be read: ", cfg.error().Text()));
    } else if (!cfg->envvar_when_unprivileged) {
      out.push_back(Cat(path, " sets ", kNvidiaEnvvarUnprivilegedKey,
                        " = false: NVIDIA ignores NVIDIA_VISIBLE_DEVICES in unprivileged "
                        "containers, so the variable injects no device there"));
    }
  }
  return out;
}

}  // namespace ocirlimit::engines
