// The audit verdict: what the admission step gives one running container,
// against the limits its init process has now, and what to apply to heal it
// (docs/audit.md). `oci-rlimit audit` and the NRI plugin's heal at
// Synchronize both decide through here. Pure: the caller reads the process.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/admission.h"
#include "core/config.h"
#include "core/policy.h"
#include "formats/rlimit.h"

namespace ocirlimit {

enum class AuditStatus {
  kOk,       // the process has exactly what the policy gives (or the policy gives nothing)
  kMissing,  // some limit is lower than the policy gives
  kOver,     // some limit is higher than the policy allows
  kRefused,  // the policy would have refused it (a rejected request), yet it runs
  kUnknown,  // could not tell: gone, no bundle, unreadable (the caller says why)
};
// "ok", "missing", "over", "refused", "unknown".
const char* AuditStatusName(AuditStatus s);

// One limit the policy gives, against the process.
struct LimitAudit {
  Rlimit want;         // what the policy gives
  LimitPair have;      // what the process has now
  AuditStatus status;  // kOk, kMissing (soft or hard lower) or kOver (higher, none lower)
};

struct AuditVerdict {
  AuditStatus status = AuditStatus::kOk;
  // The limits the process should have: Admit's, or for a refused or
  // excused request, the node's limits without the request.
  std::vector<Rlimit> target;
  std::vector<LimitAudit> limits;  // one per entry of target, in its order
  // The entries of target that differ from what the process has: what a
  // heal applies. Empty when nothing differs (a refused container healed
  // before stays refused, with nothing left to apply).
  std::vector<Rlimit> heal;
  std::vector<std::string> matched;  // the rules that matched
  // The requests target holds, each with what was granted: the request
  // the container was judged against (a refused one's are not in it).
  std::vector<RequestRecord> requests;
  std::string why;  // refused: the request's error; unknown: why; not judged: why not
  // False for a container audit does not judge (a pod sandbox): ok, with
  // nothing to compare and nothing to heal.
  bool judged = true;
  // Admit's notes and warnings, and for a request excused by on-error =
  // "warn", that the target leaves the request out.
  std::vector<std::string> notes;
};

// Each of `want` against `have` (the process's current limits, any order). A
// type `want` holds and `have` lacks makes the verdict unknown.
[[nodiscard]] AuditVerdict CompareLimits(const std::vector<Rlimit>& want,
                                         const std::vector<Rlimit>& have);

// Admit(cfg, facts, at), then CompareLimits against `have`. A pod sandbox
// (pause) container is not judged (SandboxVerdict): it runs no workload, and
// on an NRI-only node it was never adjusted (NRI creates no Container for
// it), so judging it by the top-level limits would call every one missing.
// A request Admit refuses (on-error = "fail") is kRefused, healed to the
// node's limits without it; one it excused (on-error = "warn") is compared
// against those same limits.
// `marker`: whose sandbox mark counts (IsSandbox, core/admission.h).
[[nodiscard]] AuditVerdict AuditContainer(const Config& cfg, const ContainerFacts& facts,
                                          EntryPoint at, const std::vector<Rlimit>& have,
                                          SandboxMarker marker = SandboxMarker::kEither);

// The verdict of a pod sandbox: ok, not judged, with why.
[[nodiscard]] AuditVerdict SandboxVerdict();
inline constexpr std::string_view kSandboxNotJudged =
    "pod sandbox (pause): runs no workload, not judged";

// A container that could not be audited.
[[nodiscard]] AuditVerdict UnknownVerdict(std::string why);

// Whether the verdict is anything but ok (what makes `oci-rlimit audit` exit 1).
bool NeedsAttention(const AuditVerdict& v);

}  // namespace ocirlimit
