// oci-rlimit validate: the config, as the hook and the wrapper load it.
#include <iostream>

#include "cli/explain/command.h"
#include "cli/explain/explain.h"
#include "effects/config_loader.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::cli {

int ValidateCommand(const CliArgs& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) return ReportError(a, cfg.error());
  auto node = RootedNodeOps("/");
  const std::vector<std::string> warnings = NvidiaInjectorWarnings(*node, *cfg);
  std::cout << (a.json ? ValidateJson(*cfg, warnings).dump(2) + "\n"
                       : ValidateText(*cfg, warnings));
  return 0;
}

}  // namespace ocirlimit::cli
