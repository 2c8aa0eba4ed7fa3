// oci-rlimit audit: every running container's init against the policy
// (audit.h), on this node's state roots and the real processes.
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>

#include "adapters/engines/crio.h"
#include "cli/audit/audit.h"
#include "cli/audit/audit_discover.h"
#include "cli/audit/audit_prom.h"
#include "cli/audit/audit_prune.h"
#include "cli/audit/audit_scope.h"
#include "cli/audit/command.h"
#include "core/policy_digest.h"
#include "effects/config_loader.h"
#include "effects/decisions.h"
#include "effects/files.h"
#include "formats/text.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::cli {

namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The textfile is world-readable whatever the umask or an older file's mode:
// node_exporter may run as another user (a 0600 file is a scrape error, and
// every oci_rlimit_audit_* series vanishes).
constexpr mode_t kTextfileMode = 0644;

// The `node` label: --node-name, else $NODE_NAME (the DaemonSet's
// spec.nodeName), else this host's name.
std::string NodeName(const CliArgs& a) {
  if (!a.node_name.empty()) return a.node_name;
  if (auto env = ProcessEnv()("NODE_NAME"); env && !env->empty()) return *env;
  struct utsname u {};
  return uname(&u) == 0 ? std::string(u.nodename) : "";
}

// AtomicWriteFileMode replaces a file, keeping its owner: a first run makes
// it, empty (an empty file is a valid textfile for node_exporter, which reads
// only *.prom: the temp file beside it is not one).
Status MakeIfMissing(const std::string& path) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, kTextfileMode);
  if (fd >= 0) {
    close(fd);
    return Ok{};
  }
  if (errno == EEXIST) return Ok{};
  return MakeError("create " + Quote(path), errno);
}

// The report in --format's form, to stdout or (prometheus) --output, which
// is replaced atomically so node_exporter never reads half a file. False
// when --output could not be written.
bool Emit(const CliArgs& a, const AuditReport& r, const std::string& digest) {
  if (a.format != "prometheus") {
    std::cout << (a.json ? AuditJson(r).dump(2) + "\n" : AuditText(r, a.no_trunc));
    return true;
  }
  const std::string text = AuditPrometheus(r, UnixNow(), NodeName(a), digest);
  if (a.output.empty()) {
    std::cout << text;
    return true;
  }
  auto made = MakeIfMissing(a.output);
  if (auto written = made ? AtomicWriteFileMode(a.output, text, kTextfileMode) : made; !written) {
    ReportError(a, written.error().Wrap("--output"));
    return false;
  }
  return true;
}

}  // namespace

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
    // A quoted "DIR/*" (each namespace of DIR) is expanded as the default
    // roots are: DIR itself must be there.
    const size_t star = r.find("/*");
    if (auto listed = LinuxFsOps().ListDir(star == std::string::npos ? r : r.substr(0, star));
        !listed) {
      ReportError(a, listed.error().Wrap("--runtime-root"));
      return 2;
    }
    roots.push_back(r);
  }
  AuditRun run{
      *cfg,   LinuxFsOps(), LinuxProcessOps(), roots,
      a.heal, nullptr,      Rfc3339Now,        DecideScope(ReadScopeFacts(LinuxFsOps(), a.all))};
  if (!a.containerd_root.empty()) run.containerd_root = a.containerd_root;
  const std::unique_ptr<DecisionStore> decisions =
      LinuxDecisionStore(LinuxFsOps(), DecisionsDir(ProcessEnv()(kDecisionsDirEnv)));
  run.decisions = decisions.get();
  run.policy_now = a.policy_now;
  // CRI-O's storage where its config puts it; its default when that does not parse.
  if (auto crio = engines::ParseCrioConfigs(engines::CrioConfigFiles(*RootedNodeOps("/")))) {
    run.crio_storage_root = crio->storage_root;
  }
  if (!cfg->log_file.empty()) {
    run.log = [&](const std::string& line) {
      if (auto logged = AppendLine(cfg->log_file, line); !logged) {
        std::cerr << kCliName << ": warning: log-file: " << logged.error().Text() << "\n";
      }
    };
  }
  AuditReport r = RunAudit(run);
  if (a.heal) {
    // Records of containers gone from every root audit knows, the default
    // ones included whatever --no-default-roots says (audit_prune.h).
    std::vector<std::string> known = DefaultStateRoots();
    known.insert(known.end(), a.runtime_roots.begin(), a.runtime_roots.end());
    PruneReport pr = PruneDecisions(*decisions, LinuxFsOps(), known, std::time(nullptr));
    r.pruned = std::move(pr.pruned);
    r.prune_not_proven = std::move(pr.not_proven);
  }
  if (!Emit(a, r, PolicyDigest(*cfg))) return 2;
  return r.ok() ? 0 : 1;
}

}  // namespace ocirlimit::cli
