#include "nri/decision/record.h"

#include <set>

#include "adapters/engines/constants.h"
#include "core/policy_digest.h"
#include "formats/text.h"

namespace ocirlimit::nri {

std::optional<std::string> RecordCreate(DecisionStore& store, const Config& cfg,
                                        const std::string& id, std::vector<Rlimit> limits,
                                        std::string time) {
  auto written = store.Write({.id = id,
                              .by = std::string(kDecidedByNri),
                              .policy = PolicyDigest(cfg),
                              .time = std::move(time),
                              .limits = std::move(limits)});
  if (written) return std::nullopt;
  return written.error().Text();
}

std::optional<std::string> HandlerNote(const pb::CreateContainerRequest& req,
                                       const std::optional<std::string>& unrecorded) {
  using engines::kOurHandler;
  if (req.pod().runtime_handler() != kOurHandler) return std::nullopt;
  const std::string head = "runtime handler " + Quote(kOurHandler) + ": oci-rlimit-runtime ";
  if (!unrecorded) return head + "applies this recorded decision";
  return head + "decides again from the spec and " + Quote(kDefaultConfigPath) +
         ", after NRI: the container gets the handler's limits (no decision recorded: " +
         *unrecorded + ")";
}

AuditVerdict GivenAtCreate(DecisionStore* store, const Config& cfg, const std::string& id,
                           const std::string& time, AuditVerdict now, bool record,
                           std::vector<std::string>& warnings) {
  if (store == nullptr) return now;
  auto recorded = store->Read(id);
  if (recorded && *recorded) {
    AuditVerdict v;
    v.target = (*recorded)->limits;
    v.notes.push_back("the decision recorded when it was created (by " + (*recorded)->by + ")");
    return v;
  }
  if (!recorded) warnings.push_back("decision record not believed: " + recorded.error().Text());
  now.notes.insert(now.notes.begin(), std::string(kNoRecordedDecision));
  if (record) {
    (void)store->Write({.id = id,
                        .by = std::string(kDecidedByHeal),
                        .policy = PolicyDigest(cfg),
                        .time = time,
                        .limits = now.target});
  }
  return now;
}

void PruneUnlisted(DecisionStore& store, const pb::SynchronizeRequest& req, std::time_t now) {
  auto ids = store.Ids();
  if (!ids) return;
  std::set<std::string> listed;
  for (const auto& c : req.containers()) listed.insert(c.id());
  for (const auto& p : req.pods()) listed.insert(p.id());
  for (const auto& id : *ids) {
    if (listed.contains(id)) continue;
    auto d = store.Read(id);
    if (d && *d && (*d)->by != kDecidedByWrapper && OldEnoughToPrune(**d, now)) {
      (void)store.Remove(id);
    }
  }
}

}  // namespace ocirlimit::nri
