// A label selector as an admin writes it on the command line, read into the
// matchExpressions of a ValidatingAdmissionPolicyBinding's matchResources:
//   KEY=VALUE (In), KEY!=VALUE (NotIn), KEY (Exists), !KEY (DoesNotExist),
// comma-separated, as kubectl's -l reads them. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::k8s {

struct Requirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::string value;
  bool operator==(const Requirement&) const = default;
};

// `flag` names the option in errors: `--namespace-selector "a==b": ...`.
// An empty text is an error (leave the flag out to match everything).
[[nodiscard]] Result<std::vector<Requirement>> ParseSelector(std::string_view flag,
                                                             std::string_view text);

// The YAML of `matchExpressions:` at `indent` spaces.
[[nodiscard]] std::string SelectorYaml(const std::vector<Requirement>& reqs, size_t indent);

}  // namespace ocirlimit::k8s
