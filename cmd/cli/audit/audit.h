// `oci-rlimit audit`: every running container found under the runtimes'
// state roots (cli/audit_discover.h), judged by the admission step against
// what its init process has now (core/audit.h), and with --heal, set to
// what the policy gives (effects/heal.h). A table or JSON (docs/audit.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/constants.h"
#include "adapters/engines/containerd_meta.h"
#include "adapters/oci/spec.h"
#include "cli/audit/audit_discover.h"
#include "cli/audit/audit_scope.h"
#include "core/audit.h"
#include "core/config.h"
#include "effects/decisions.h"
#include "effects/fs_ops.h"
#include "effects/heal.h"
#include "effects/process_ops.h"

namespace ocirlimit {

// What an entry was judged against (docs/audit.md, "Recorded decisions").
enum class DecisionState {
  kNone,       // no record: the policy now (created before the upgrade, by a rootless engine)
  kRecorded,   // the decision recorded when it was created, under the policy now
  kOlder,      // the decision recorded when it was created, under an older policy
  kPolicyNow,  // --policy-now: the policy now, over its record
};
// "none", "recorded", "older-policy", "policy-now".
const char* DecisionStateName(DecisionState s);

struct AuditEntry {
  std::string root;
  std::string id;
  std::string runtime;  // "runc", "crun", or empty when no state was read
  pid_t pid = 0;        // 0 when no state was read
  AuditVerdict verdict;
  DecisionState decision = DecisionState::kNone;
  std::optional<HealOutcome> heal;  // with --heal, when there was something to apply
  // Whether the entry still needs the admin: not ok, and not healed (a
  // refused container always does).
  bool attention() const;
};

struct AuditReport {
  std::vector<std::string> roots;
  std::vector<std::string> unreadable_roots;  // Discovery::unreadable: not ok
  std::vector<std::string> namespace_dirs;    // Discovery::namespace_dirs: a hint
  std::vector<std::string> notes;             // Discovery::notes
  std::vector<AuditEntry> entries;
  std::string scope;        // AuditScope::said
  size_t out_of_scope = 0;  // containers the install does not govern: not judged, not listed
  bool healing = false;
  bool decisions = false;  // the decision records were consulted (AuditRun::decisions)
  // --heal's prune of decision records (audit_prune.h): the ids pruned, and
  // why none could be (a root or the records unreadable), or "".
  std::vector<std::string> pruned;
  std::string prune_not_proven;
  bool ok() const;  // every root read, no entry needs attention: exit 0
};

struct AuditRun {
  const Config& cfg;
  FsOps& fs;
  ProcessOps& ops;
  std::vector<std::string> roots;  // patterns: DefaultStateRoots(), then --runtime-root
  bool heal = false;
  // One log line per healed container (FormatLogLine, via="audit").
  std::function<void(const std::string& line)> log;
  std::function<std::string()> now;  // RFC 3339
  AuditScope scope = {};  // what the install governs (audit_scope.h); default: every container
  // Where containerd keeps its metadata database (the pods' annotations).
  std::string containerd_root = std::string(kContainerdRoot);
  // CRI-O's container storage ([crio] root): a pod's sandbox config.json
  // names its runtime handler (AddCrioPodHandlers).
  std::string crio_storage_root = std::string(engines::kCrioStorageRoot);
  // The decision records (effects/decisions.h); nullptr: none, every
  // container judged by the policy now.
  DecisionStore* decisions = nullptr;
  bool policy_now = false;  // judge by the policy now even where a decision is recorded
};

[[nodiscard]] AuditReport RunAudit(const AuditRun& run);

// One row per container: STATUS ID PID LIMITS/WHY ROOT, then what --heal
// did; ids cut to 12 characters unless `no_trunc`.
std::string AuditText(const AuditReport& r, bool no_trunc = false);
// The schema in docs/audit.md.
Json AuditJson(const AuditReport& r);

}  // namespace ocirlimit
