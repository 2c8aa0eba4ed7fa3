#include "adapters/k8s/verdict_checks.h"

#include <algorithm>

#include "adapters/k8s/cel_rlimits.h"
#include "core/policy.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

std::string Indices(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += Cat(i == 0 ? "" : ", ", std::to_string(i));
  return "[" + out + "]";
}

bool Clamp(const Config& cfg) { return cfg.requests.over_ceiling == OverCeiling::kClamp; }

// What the API server writes before each message of `name`'s warnings.
std::string WarningPrefix(const std::string& name) {
  return Cat("Validation failed for ValidatingAdmissionPolicy '", name, "' with binding '", name,
             "': ");
}

// The last warning, when some did not fit (never one of the node's).
constexpr std::string_view kMore =
    " more of the node's warnings for this pod left out: the API server keeps 4 KiB of warnings "
    "per request (oci-rlimit explain lists them all)";

}  // namespace

std::vector<Variable> VerdictVariables(const Config& cfg, const Judged& j,
                                       const std::string& warn_name) {
  std::string errors;
  std::string notes;
  for (RequestSource s : cfg.requests.sources) {
    const char* what = s == RequestSource::kOciRlimit && j.annotation ? "annotation"
                       : s == RequestSource::kSpec && j.ulimits       ? "ulimits"
                                                                      : nullptr;
    if (what == nullptr) continue;
    errors += Cat(errors.empty() ? "" : ", ", "variables.", what, "Error");
    notes += Cat(notes.empty() ? "" : " + ", "variables.", what, "Notes");
  }
  const std::string warnings = cfg.on_error == OnError::kWarn
                                   ? "size(variables.errors) > 0 ? [variables.errors[0]] : "
                                     "variables.notes"
                                   : "variables.notes";
  // Whole warnings, in order, while they and the room for the last one fit
  // (a container's name is at most 63 characters; all of it is ASCII).
  const size_t prefix = WarningPrefix(warn_name).size();
  const size_t last = prefix + std::string_view("container \"\": ").size() + 63 + 2 + kMore.size();
  const size_t room = kWarningRunes - last;
  return {
      {"errors", Cat("[", errors, "].filter(e, e != '')")},
      {"notes", notes.empty() ? "[]" : notes},
      {"warnings", warnings},
      {"warnIdx", Indices(kMaxWarnings)},
      {"warnKept", Cat("size(variables.warnIdx.filter(i, i < size(variables.warnings) && "
                       "variables.warnIdx.filter(k, k <= i).map(k, ",
                       std::to_string(prefix),
                       " + size(variables.warnings[k])).sum() <= ", std::to_string(room), "))")},
  };
}

std::vector<Check> RefusedChecks(const Config& cfg) {
  if (cfg.on_error == OnError::kWarn) return {};
  return {{"what the nodes refuse: the first error, as the node says it",
           "size(variables.errors) == 0",
           "the nodes refuse this pod's request; oci-rlimit explain says why",
           "string(variables.errors[0])"}};
}

std::vector<Check> WarnedChecks(const Config& cfg) {
  if (cfg.on_error == OnError::kFail && !Clamp(cfg)) return {};
  std::vector<Check> out;
  const size_t n = kMaxWarnings;
  for (size_t i = 0; i < n; ++i) {
    const std::string at = std::to_string(i);
    out.push_back({Cat("the node's warning ", at), Cat("variables.warnKept <= ", at),
                   "the nodes start this pod with a warning; oci-rlimit explain shows it",
                   Cat("string(variables.warnings[", at, "])")});
  }
  out.push_back({"warnings past the API server's 4 KiB",
                 "variables.warnKept == size(variables.warnings)",
                 "more of the node's warnings left out (oci-rlimit explain lists them all)",
                 Cat("variables.container + string(size(variables.warnings) - variables.warnKept) "
                     "+ ",
                     CelString(kMore))});
  return out;
}

}  // namespace ocirlimit::k8s
