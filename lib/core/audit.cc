#include "core/audit.h"

#include <utility>

#include "formats/text.h"

namespace ocirlimit {

const char* AuditStatusName(AuditStatus s) {
  switch (s) {
    case AuditStatus::kOk:
      return "ok";
    case AuditStatus::kMissing:
      return "missing";
    case AuditStatus::kOver:
      return "over";
    case AuditStatus::kRefused:
      return "refused";
    case AuditStatus::kUnknown:
      return "unknown";
  }
  return "?";
}

namespace {

AuditStatus CompareOne(const Rlimit& want, LimitPair have) {
  if (have.soft < want.soft || have.hard < want.hard) return AuditStatus::kMissing;
  if (have.soft > want.soft || have.hard > want.hard) return AuditStatus::kOver;
  return AuditStatus::kOk;
}

const Rlimit* FindType(const std::vector<Rlimit>& list, int resource) {
  for (const auto& r : list) {
    if (r.resource == resource) return &r;
  }
  return nullptr;
}

}  // namespace

AuditVerdict CompareLimits(const std::vector<Rlimit>& want, const std::vector<Rlimit>& have) {
  AuditVerdict v;
  v.target = want;
  bool missing = false;
  bool over = false;
  for (const auto& w : want) {
    const Rlimit* h = FindType(have, w.resource);
    if (h == nullptr) {
      return UnknownVerdict(Cat("the process's ", w.info().name, " limit was not read"));
    }
    LimitAudit one{w, {h->soft, h->hard}, CompareOne(w, {h->soft, h->hard})};
    missing = missing || one.status == AuditStatus::kMissing;
    over = over || one.status == AuditStatus::kOver;
    if (one.status != AuditStatus::kOk) v.heal.push_back(w);
    v.limits.push_back(one);
  }
  // Missing first: a limit a workload needs outweighs one it should not have.
  if (missing) {
    v.status = AuditStatus::kMissing;
  } else if (over) {
    v.status = AuditStatus::kOver;
  }
  return v;
}

AuditVerdict AuditContainer(const Config& cfg, const ContainerFacts& facts, EntryPoint at,
                            const std::vector<Rlimit>& have, SandboxMarker marker) {
  if (IsSandbox(facts, marker)) return SandboxVerdict();
  Verdict admitted = Admit(cfg, facts, at);
  if (admitted.action == Action::kApply) {
    AuditVerdict v = CompareLimits(admitted.limits, have);
    if (v.status == AuditStatus::kUnknown) return v;
    v.matched = std::move(admitted.matched);
    v.requests = std::move(admitted.requests);
    v.notes = std::move(admitted.notes);
    for (auto& w : admitted.warnings) v.notes.push_back(std::move(w));
    return v;
  }
  // A refused or excused request: the node's limits, as for the same
  // container without it (the pod's other facts still match rules).
  Verdict node = AdmitWithoutRequests(cfg, facts, at);
  const std::string error = admitted.error ? admitted.error->Text() : "refused";
  if (node.action != Action::kApply) {
    // Only a request can make Admit refuse; without it this cannot happen.
    return UnknownVerdict(Cat("the policy refuses it even without its request: ", error));
  }
  AuditVerdict v = CompareLimits(node.limits, have);
  if (v.status == AuditStatus::kUnknown) return v;
  v.matched = std::move(node.matched);
  v.requests = std::move(node.requests);
  // Not Admit's own on-error warning: the container is judged against the
  // node's limits, not started untouched.
  v.notes = std::move(admitted.notes);
  if (admitted.action == Action::kFail) {
    v.status = AuditStatus::kRefused;
    v.why = error;
  } else {
    v.notes.push_back(Cat("on-error = \"warn\": its request is left out: ", error));
  }
  return v;
}

AuditVerdict SandboxVerdict() {
  AuditVerdict v;
  v.judged = false;
  v.why = std::string(kSandboxNotJudged);
  return v;
}

AuditVerdict UnknownVerdict(std::string why) {
  AuditVerdict v;
  v.status = AuditStatus::kUnknown;
  v.why = std::move(why);
  return v;
}

bool NeedsAttention(const AuditVerdict& v) { return v.status != AuditStatus::kOk; }

}  // namespace ocirlimit
