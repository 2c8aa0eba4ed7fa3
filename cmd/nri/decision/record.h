// The plugin's side of the decision records (effects/decisions.h;
// docs/policy.md, "One decision per container"): what CreateContainer
// records, what the heal at Synchronize applies (the record, else a decision
// made now and recorded), and which records go (RemoveContainer, and after a
// heal those of the plugin's whose container the runtime no longer lists).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/nri/facts.h"
#include "core/audit.h"
#include "core/config.h"
#include "effects/decisions.h"

namespace ocirlimit::nri {

// The heal's record for a container that had none.
inline constexpr std::string_view kDecidedByHeal = "nri-sync";
// The note on the heal's line of a container decided then, having no record.
inline constexpr std::string_view kNoRecordedDecision =
    "no recorded decision (created while no plugin was connected, or before the upgrade): "
    "decided now, with the facts at Synchronize, and recorded";

// Records what CreateContainer gave container `id` (empty: nothing). nullopt
// when written, else why not.
[[nodiscard]] std::optional<std::string> RecordCreate(DecisionStore& store, const Config& cfg,
                                                      const std::string& id,
                                                      std::vector<Rlimit> limits, std::string time);

// The warning on CreateContainer's line for a pod of the installer's
// handler: oci-rlimit-runtime runs after every NRI plugin and applies this
// record; without one (`unrecorded`: why) it decides again.
[[nodiscard]] std::optional<std::string> HandlerNote(const pb::CreateContainerRequest& req,
                                                     const std::optional<std::string>& unrecorded);

// What the heal applies to a running container: its record's limits; with
// none, `now` (the policy's verdict now), which is then recorded when
// `record` (the plugin sees the host's PIDs). `warnings` gets why a record
// was not believed.
[[nodiscard]] AuditVerdict GivenAtCreate(DecisionStore* store, const Config& cfg,
                                         const std::string& id, const std::string& time,
                                         AuditVerdict now, bool record,
                                         std::vector<std::string>& warnings);

// Removes the records the plugin wrote (at CreateContainer or a heal) of
// containers `req` does not list, once older than kPruneGrace at `now` (a
// create in flight may not be listed yet). The wrapper's are left to it.
void PruneUnlisted(DecisionStore& store, const pb::SynchronizeRequest& req, std::time_t now);

}  // namespace ocirlimit::nri
