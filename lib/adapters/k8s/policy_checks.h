// The variables and validations of the admission policies: what the node
// decides about a pod's requests (core/requests.cc, core/admission.cc),
// written in CEL over a Pod or a workload's pod template. Every source the
// policy judges yields, in the variables, its error (what the node refuses,
// '' for none) and its notes (what the node starts with a warning); the
// checks read only those (verdict_checks.cc). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace ocirlimit::k8s {

struct Variable {
  std::string name;
  std::string expression;
};

struct Check {
  std::string what;        // for the YAML's comment: "what the nodes refuse"
  std::string expression;  // true: the pod passes
  std::string message;     // the static fallback
  std::string message_expression;
};

// The variables every policy starts with: the pod template, its containers
// (init first, as the kubelet starts them, then the app and ephemeral
// ones), the first one's name, the ceilings.
[[nodiscard]] std::vector<Variable> TemplateVariables(const Config& cfg);

// The oci-rlimit.io/rlimits annotation parsed as the node parses it, under
// cfg's over-ceiling and on-error; it ends with `annotationError` (a
// string: the node's refusal, '') and `annotationNotes` (a list of
// strings: the node's warnings for an entry ignored or clamped).
[[nodiscard]] std::vector<Variable> AnnotationVariables(const Config& cfg);

// KEP-5758's securityContext.ulimits ("spec" source): `ulimitsError` and
// `ulimitsNotes` as above, for the first container with an entry over its
// ceiling (the last entry of each type, as the runtime writes the list into
// process.rlimits after its own nofile), and a list too long to judge
// within CEL's cost budget (ulimits_checks.cc).
[[nodiscard]] std::vector<Variable> UlimitsVariables(const Config& cfg);

// The head of a message (CEL, ending in `+ `): `container` ('container
// "NAME": '), then (under on-error = "warn", for an error, which the node
// leaves out) the node's words for that, then `where` and ': '.
[[nodiscard]] std::string MessageHead(const Config& cfg, bool error, std::string_view container,
                                      std::string_view where);
// The malformed annotation: the variables that find the first bad entry (of
// the trimmed `entries`), and the node's words for it.
[[nodiscard]] std::vector<Variable> MalformedVariables();
[[nodiscard]] std::string MalformedError(const Config& cfg);

}  // namespace ocirlimit::k8s
