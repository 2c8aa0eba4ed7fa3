#include "nri/decide.h"

#include "core/admission.h"

namespace ocirlimit::nri {

Verdict AdmitNri(const Config& cfg, const ContainerFacts& facts) {
  const ocirlimit::Verdict a = Admit(cfg, facts, EntryPoint::kNri);
  Verdict v;
  v.limits = a.limits;
  v.sources = a.sources;
  v.matched = a.matched;
  v.warnings = a.notes;
  v.warnings.insert(v.warnings.end(), a.warnings.begin(), a.warnings.end());
  switch (a.action) {
    case ocirlimit::Action::kFail:
      v.action = Action::kFail;
      v.error = a.error;
      break;
    case ocirlimit::Action::kProceedUnmodified:
      v.action = Action::kProceedUnmodified;
      v.limits.clear();
      break;
    case ocirlimit::Action::kApply:
      v.action = v.limits.empty() ? Action::kProceedUnmodified : Action::kApply;
      break;
  }
  return v;
}

}  // namespace ocirlimit::nri
