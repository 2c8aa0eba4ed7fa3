#include "adapters/engines/nvidia.h"

#include <cerrno>

#include "adapters/engines/constants.h"
#include "adapters/engines/toml_read.h"

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

}  // namespace ocirlimit::engines
