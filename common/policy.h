// Which rlimits one container gets: the top-level default, then the
// [[rule]]s that match it, then its own request under the admin's ceilings
// (docs/policy.md). Pure: the caller hands in what it already parsed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config.h"
#include "error.h"
#include "rlimit.h"
#include "spec.h"

namespace ocirlimit {

// The annotation through which a container asks for limits.
inline constexpr std::string_view kRequestAnnotation = "oci-rlimit.io/rlimits";

// What rules look at, taken from a spec.
struct ContainerFacts {
  std::map<std::string, std::string> annotations;
  std::vector<std::string> env;      // NAME=VALUE, as in process.env
  std::vector<std::string> devices;  // linux.devices[].path
};

// Reads annotations, process.env and linux.devices from a spec (config.json
// or podman's precreate spec); a field of the wrong type is an error.
Result<ContainerFacts> FactsFromSpec(const Json& spec);

// True when deciding needs the container's spec: rules that look at it, or
// requests. Without either, every container gets the top-level rlimits.
bool PolicyNeedsSpec(const Config& cfg);

// Where one decided limit came from.
struct LimitSource {
  Rlimit limit;
  std::string from;  // "default", "rule \"gpu\"", "request"
};

struct Decision {
  std::vector<Rlimit> limits;        // to apply, in a stable order
  std::vector<LimitSource> sources;  // one per entry of limits
  std::vector<std::string> matched;  // names of the rules that matched, in order
  std::vector<std::string> notes;    // clamped or ignored requests, for the log
};

// Why a rule did or did not match, for `oci-rlimit explain`.
bool RuleMatches(const Rule& rule, const ContainerFacts& facts);

// Top-level rlimits, then each matching rule in file order (a later rule's
// entry replaces an earlier same-type one), then the request. An error means
// the container must not get its limits: a malformed request annotation, or
// an over-ceiling one under over-ceiling = "reject".
Result<Decision> Decide(const Config& cfg, const ContainerFacts& facts);

// FactsFromSpec, then Decide.
Result<Decision> DecideForSpec(const Config& cfg, const Json& spec, const std::string& where);

// Decide for a spec given as text (a bundle's config.json, or an exec
// --process file's process object, which has only env); `where` names it.
Result<Decision> DecideForSpecText(const Config& cfg, std::string_view text,
                                   const std::string& where);

}  // namespace ocirlimit
