// oci-rlimit audit: every running container's init against the policy
// (audit.h), on this node's state roots and the real processes.
#include <iostream>

#include "cli/audit.h"
#include "cli/audit_discover.h"
#include "cli/audit_scope.h"
#include "cli/commands.h"
#include "effects/config_loader.h"
#include "effects/files.h"

namespace ocirlimit::cli {

// Config errors and a --runtime-root that is not a directory are exit 2:
// nothing was audited.
int AuditCommand(const CliArgs& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) {
    ReportError(a, cfg.error());
    return 2;
  }
  std::vector<std::string> roots;
  if (!a.no_default_roots) roots = DefaultStateRoots();
  for (const auto& r : a.runtime_roots) {
    if (auto listed = LinuxFsOps().ListDir(r); !listed) {
      ReportError(a, listed.error().Wrap("--runtime-root"));
      return 2;
    }
    roots.push_back(r);
  }
  AuditRun run{
      *cfg,   LinuxFsOps(), LinuxProcessOps(), roots,
      a.heal, nullptr,      Rfc3339Now,        DecideScope(ReadScopeFacts(LinuxFsOps(), a.all))};
  if (!a.containerd_root.empty()) run.containerd_root = a.containerd_root;
  if (!cfg->log_file.empty()) {
    run.log = [&](const std::string& line) {
      if (auto logged = AppendLine(cfg->log_file, line); !logged) {
        std::cerr << kCliName << ": warning: log-file: " << logged.error().Text() << "\n";
      }
    };
  }
  AuditReport r = RunAudit(run);
  std::cout << (a.json ? AuditJson(r).dump(2) + "\n" : AuditText(r, a.no_trunc));
  return r.ok() ? 0 : 1;
}

}  // namespace ocirlimit::cli
