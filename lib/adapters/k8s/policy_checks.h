// The variables and validations of the admission policies: what the node
// decides about a pod's requests (core/requests.cc, core/admission.cc),
// written in CEL over a Pod or a workload's pod template. Each check says
// what the node does with a pod that fails it: refuses it (the admin's
// actions), or starts it with a warning (the policy only warns). Pure.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"

namespace ocirlimit::k8s {

struct Variable {
  std::string name;
  std::string expression;
};

// What the node does with a container that fails a check.
enum class NodeOutcome { kRefused, kStartedWithWarning };

struct Check {
  std::string what;  // for the YAML's comment: "the annotation is malformed"
  NodeOutcome outcome = NodeOutcome::kRefused;
  std::string expression;  // true: the pod passes
  std::string message;     // the static fallback
  std::string message_expression;
};

// The variables every check reads: the pod template, its containers (init
// first, as the kubelet starts them, then the app and ephemeral ones), the
// annotation's entries parsed as the node parses them, the ceilings.
[[nodiscard]] std::vector<Variable> PolicyVariables(const Config& cfg);

// The checks of the oci-rlimit.io/rlimits annotation, under cfg's
// over-ceiling and on-error.
[[nodiscard]] std::vector<Check> AnnotationChecks(const Config& cfg);

// The checks of KEP-5758's securityContext.ulimits ("spec" source), one per
// ceiling type: the last entry of that type in each container, as the runtime
// writes the list into process.rlimits.
[[nodiscard]] std::vector<Check> UlimitsChecks(const Config& cfg);

// Shared by the checks' files (malformed_check.cc, ulimits_checks.cc):
// what the node does with a request it would refuse under on-error = "fail";
// the message's head: the container, then (under on-error = "warn" for a
// request the node leaves out) the node's words, then the annotation.
[[nodiscard]] NodeOutcome OutcomeOf(const Config& cfg, bool refused_under_fail);
[[nodiscard]] std::string MessageHead(const Config& cfg, bool left_out);
// The malformed annotation: the variables that find the first bad entry (of
// the trimmed `entries`), and its check with the node's words.
[[nodiscard]] std::vector<Variable> MalformedVariables();
[[nodiscard]] Check MalformedCheck(const Config& cfg);

}  // namespace ocirlimit::k8s
