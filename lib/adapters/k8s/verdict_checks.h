// The validations of the two policies, over the sources' errors and notes
// (policy_checks.h): NAME refuses with the node's first error, as the node
// does under on-error = "fail"; NAME-warn warns with each of the node's
// warnings, in the node's order, as many as fit whole in the API server's
// 4 KiB of warnings per request, then says how many more there are. Pure.
#pragma once

#include <string>
#include <vector>

#include "adapters/k8s/policy_checks.h"
#include "core/config.h"

namespace ocirlimit::k8s {

// Which sources the policy judges, in the order of [requests] sources.
struct Judged {
  bool annotation = false;
  bool ulimits = false;
};

// The API server keeps this many characters (runes) of warnings per
// request; one more warning cuts every one to 256 (its warning recorder).
inline constexpr size_t kWarningRunes = 4096;
// At most this many of the node's warnings, each its own validation: about
// as many as fit in 4 KiB, and the API server's type check compiles every
// variable again for each validation (a second of CPU each).
inline constexpr size_t kMaxWarnings = 6;

// `errors`, `notes`, `warnings` and what of them fits; `warn_name` is the
// warning policy's name (and its binding's), which the API server puts
// before each message.
[[nodiscard]] std::vector<Variable> VerdictVariables(const Config& cfg, const Judged& j,
                                                     const std::string& warn_name);
// NAME's: one check, or none under on-error = "warn" (the node then only
// warns).
[[nodiscard]] std::vector<Check> RefusedChecks(const Config& cfg);
// NAME-warn's: none where the node never warns (reject, on-error = "fail").
[[nodiscard]] std::vector<Check> WarnedChecks(const Config& cfg);

}  // namespace ocirlimit::k8s
