// oci-rlimit explain --bundle DIR: what the config does to DIR/config.json.
#include <iostream>

#include "cli/explain/command.h"
#include "cli/explain/explain.h"
#include "effects/config_loader.h"
#include "effects/files.h"

namespace ocirlimit::cli {
namespace {
constexpr size_t kMaxSpecBytes = 64 << 20;
}  // namespace

int ExplainCommand(const CliArgs& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) return ReportError(a, cfg.error());
  const std::string path = a.bundle + "/config.json";
  auto text = ReadFileBounded(path, kMaxSpecBytes);
  if (!text) return ReportError(a, text.error().Wrap("bundle"));
  auto spec = ParseJsonObject(*text, path);
  if (!spec) return ReportError(a, spec.error());
  auto e = Explain(*cfg, *spec, path);
  if (!e) return ReportError(a, e.error().Wrap(path));
  std::cout << (a.json ? ExplainJson(*e).dump(2) + "\n" : ExplainText(*e));
  return e->error.empty() ? 0 : 1;
}

}  // namespace ocirlimit::cli
