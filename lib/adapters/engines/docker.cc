#include "adapters/engines/docker.h"

#include <cerrno>

#include "adapters/engines/constants.h"
#include "adapters/oci/spec.h"

namespace ocirlimit::engines {

Result<DockerConfig> ParseDaemonJson(std::string_view text, const std::string& source) {
  auto json = ParseJsonObject(text, source);
  if (!json) return json.error();
  DockerConfig out;
  if (auto runtimes = json->find("runtimes"); runtimes != json->end() && runtimes->is_object()) {
    for (const auto& [name, rt] : runtimes->items()) {
      std::string path = rt.is_object() && rt.contains("path") && rt["path"].is_string()
                             ? rt["path"].get<std::string>()
                             : "";
      out.runtimes.push_back({name, path});
    }
  }
  if (auto def = json->find("default-runtime"); def != json->end() && def->is_string()) {
    out.default_runtime = def->get<std::string>();
  }
  return out;
}

Result<std::optional<DockerConfig>> ReadDockerConfig(NodeFiles& fs) {
  const std::string path(kDaemonJson);
  auto text = fs.ReadFile(path);
  if (!text) {
    if (text.error().err == ENOENT) return std::optional<DockerConfig>();
    return text.error().Wrap(path);
  }
  auto cfg = ParseDaemonJson(*text, path);
  if (!cfg) return cfg.error();
  return std::optional<DockerConfig>(std::move(*cfg));
}

}  // namespace ocirlimit::engines
