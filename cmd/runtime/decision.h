// The wrapper and the decision records (effects/decisions.h): at create it
// applies the NRI plugin's record when there is one (the plugin decided at
// CreateContainer, with the pod's facts, before this create), else decides
// and records; an exec applies the container's record. docs/runtime-mode.md,
// "One decision per container".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/admission.h"
#include "core/config.h"
#include "formats/decision.h"

namespace ocirlimit {

// The verdict a record gives: its limits, applied as they are, with a note
// naming who decided. `command`: "create", "run" or "exec".
[[nodiscard]] Verdict RecordedVerdict(const DecisionRecord& d, std::string_view command);

// Whether create/run defers to `d`: one another program (the NRI plugin)
// recorded. The wrapper's own record for this id is an earlier container's
// (the id reused after `runc run --rm`): decided again.
[[nodiscard]] bool DefersTo(const DecisionRecord& d);

// The wrapper's record of what it decided at create.
[[nodiscard]] DecisionRecord WrapperDecision(const std::string& id, const Config& cfg,
                                             std::vector<Rlimit> limits, std::string time);

}  // namespace ocirlimit
