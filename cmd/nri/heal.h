// The Synchronize heal: at every (re)connect the runtime lists its running
// pods and containers (Container.pid is the init's host PID; CRI-O gives 0,
// and the init is then read from the runtime's root-owned state). Each
// container's limits are its recorded decision (nri/decision/record.h), else
// the policy's now (Admit with EntryPoint::kNri, on the facts a
// CreateContainer would carry), then recorded. An init that lacks them, or
// is over them, gets them now, through a pidfd-pinned prlimit(2), once its
// cgroup shows the PID is still that container's. A container whose request the policy refuses gets
// the node's limits without its request, logged as refused-but-running. Init only: an exec session
// started later follows the spec's own rlimits (docs/nri.md).
//
// One Healer lives as long as the process: its counts and its "said once"
// notes survive reconnects. Single-threaded, like the rest of the plugin.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/nri/facts.h"
#include "core/audit.h"
#include "core/config.h"
#include "effects/decisions.h"
#include "formats/nri_status.h"
#include "nri/heal_ops.h"
#include "nri/plugin.h"

namespace ocirlimit::nri {

// The log line's via for a heal: `TIME id="ID" pid=N via="nri-sync" memlock 1:2->3:4`.
inline constexpr std::string_view kHealVia = "nri-sync";
// The warning on the line of a container whose request the policy refuses.
inline constexpr std::string_view kRefusedButRunning = "refused-but-running";

enum class HealResult {
  kHealed,      // its init got the limits it lacked (or was over)
  kOk,          // it had them already
  kNothing,     // the policy gives it nothing: left alone
  kNotRunning,  // no init PID (created, stopped)
  kGone,        // the init exited before or while we looked
  kReused,      // the PID is no longer this container's init: left alone
  kCannot,      // it needs a heal we cannot make: reported
  kOutOfTime,   // not reached within the budget
};
const char* HealResultName(HealResult r);

struct HealCounts {
  uint64_t containers = 0;
  std::array<uint64_t, 8> by = {};  // indexed by HealResult
  uint64_t refused = 0;             // of them, refused-but-running (healed, ok or cannot)
  [[nodiscard]] uint64_t of(HealResult r) const { return by.at(static_cast<size_t>(r)); }
};

struct HealOptions {
  // Synchronize must be answered inside the runtime's request timeout (2 s):
  // containers not reached within this are counted and said, not waited for.
  int budget_ms = 1000;
};

class Healer {
 public:
  explicit Healer(HealOps& ops, HealOptions opt = {}) : ops_(ops), opt_(opt) {}

  // The runtime configured the plugin (a (re)connect) at `time`.
  void Connected(const std::string& time, Output& out);
  // One SynchronizeRequest; the heal runs once the last one (more = false)
  // is in, over the pods and containers of all of them.
  void Synchronize(const Config& cfg, const pb::SynchronizeRequest& req, Output& out,
                   const std::function<std::string()>& now);

  // Where decisions are recorded (effects/decisions.h); nullptr: none, and
  // every container is decided with the facts at Synchronize.
  void SetDecisions(DecisionStore* decisions) { decisions_ = decisions; }

  [[nodiscard]] const HealCounts& last() const { return last_; }
  [[nodiscard]] const NriStatus& status() const { return status_; }

 private:
  struct One;
  HealResult HealOne(const Config& cfg, const pb::PodSandbox* pod, const pb::Container& c,
                     Output& out, const std::string& time);
  HealResult Apply(const Config& cfg, One& one, Output& out);
  bool FindInit(One& one);
  AuditVerdict Decided(const Config& cfg, One& one);
  void Summarize(Output& out, int64_t took_ms);
  void SaveStatus(Output& out);

  HealOps& ops_;
  HealOptions opt_;
  DecisionStore* decisions_ = nullptr;
  pb::SynchronizeRequest pending_;
  HealCounts last_;
  NriStatus status_;
  bool said_report_only_ = false;
  bool said_cannot_ = false;
  bool said_status_ = false;
};

}  // namespace ocirlimit::nri
