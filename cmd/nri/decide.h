// The one place oci-rlimit-nri asks the core for a verdict: Admit with
// EntryPoint::kNri (core/admission.h), mapped onto what a CreateContainer
// reply can say: adjust, leave unadjusted (with its warnings), or fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/policy.h"
#include "formats/error.h"

namespace ocirlimit::nri {

enum class Action { kApply, kProceedUnmodified, kFail };

struct Verdict {
  Action action = Action::kProceedUnmodified;
  std::vector<Rlimit> limits;
  std::vector<LimitSource> sources;
  std::vector<std::string> matched;
  std::vector<std::string> warnings;  // notes on requests, excused errors
  std::optional<Error> error;         // set for kFail
};

[[nodiscard]] Verdict AdmitNri(const Config& cfg, const ContainerFacts& facts);

}  // namespace ocirlimit::nri
