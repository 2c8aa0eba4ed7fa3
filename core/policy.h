// Which rlimits one container gets: the top-level default, then the
// [[rule]]s that match it, then its own request under the admin's ceilings
// (docs/policy.md). Pure: the caller hands in the container's facts
// (adapters/oci/facts.h reads them from a spec).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "core/rlimit.h"

namespace ocirlimit {

// The annotation through which a container asks for limits.
inline constexpr std::string_view kRequestAnnotation = "oci-rlimit.io/rlimits";

// What rules look at, whoever read them (a spec, an NRI message).
struct ContainerFacts {
  std::map<std::string, std::string> annotations;
  std::vector<std::string> env;      // NAME=VALUE, as in process.env
  std::vector<std::string> devices;  // linux.devices[].path
};

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

// A configured limit that the spec also sets for the same type.
struct Conflict {
  Rlimit configured;
  Rlimit spec;
};
std::vector<Conflict> FindConflicts(const std::vector<Rlimit>& configured,
                                    const std::vector<Rlimit>& spec);

// One warning per configured type that the spec sets too: runc re-applies
// the spec's value after hooks, crun keeps ours.
std::vector<std::string> ConflictWarnings(const std::vector<Conflict>& conflicts);

}  // namespace ocirlimit
