#include "runtime/decision.h"

#include "core/policy_digest.h"

namespace ocirlimit {

Verdict RecordedVerdict(const DecisionRecord& d, std::string_view command) {
  Verdict v;
  v.action = Action::kApply;
  v.limits = d.limits;
  const std::string who = d.by == kDecidedByWrapper ? std::string("oci-rlimit-runtime at create")
                          : d.by == kDecidedByNri ? std::string("oci-rlimit-nri at CreateContainer")
                                                  : "oci-rlimit-nri's heal";
  v.notes.push_back(std::string(command == "exec" ? "applies" : "deferred to") + " the decision " +
                    who + " recorded: " + DecidedLimits(d.limits));
  return v;
}

bool DefersTo(const DecisionRecord& d) { return d.by != kDecidedByWrapper; }

DecisionRecord WrapperDecision(const std::string& id, const Config& cfg, std::vector<Rlimit> limits,
                               std::string time) {
  return {.id = id,
          .by = std::string(kDecidedByWrapper),
          .policy = PolicyDigest(cfg),
          .time = std::move(time),
          .limits = std::move(limits)};
}

}  // namespace ocirlimit
