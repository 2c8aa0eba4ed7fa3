#include "nri/decide.h"

namespace ocirlimit::nri {

Verdict AdmitNri(const Config& cfg, const ContainerFacts& facts) {
  Verdict v;
  auto d = Decide(cfg, facts);
  if (!d) {
    if (cfg.on_error == OnError::kWarn) {
      v.warnings.push_back(d.error().Text() + " (on-error = \"warn\": created unadjusted)");
      return v;
    }
    v.action = Action::kFail;
    v.error = d.error();
    return v;
  }
  v.warnings = d->notes;
  v.matched = d->matched;
  v.sources = d->sources;
  v.limits = d->limits;
  v.action = v.limits.empty() ? Action::kProceedUnmodified : Action::kApply;
  return v;
}

}  // namespace ocirlimit::nri
