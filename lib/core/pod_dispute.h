// Deciding for a container whose pod namespace or name the runtimes'
// annotations dispute (containerd's io.kubernetes.cri.sandbox-* against
// CRI-O's io.kubernetes.pod.*): once per candidate pod, then per type the
// lowest of those decisions, so that a forged annotation can only lower its
// author's own limits (docs/policy.md, "Disputed pod facts"). Pure.
#pragma once

#include <string>
#include <vector>

#include "core/policy.h"
#include "formats/error.h"

namespace ocirlimit {

// One pod the container may be: the facts with each disputed field set to
// one of its claimed values, and a label for messages.
struct PodCandidate {
  ContainerFacts facts;
  std::string label;  // namespace "a", name "p"
};

// Every combination of the claimed values (at most four), disputes cleared.
std::vector<PodCandidate> PodCandidates(const ContainerFacts& facts);

// Per type, the lowest soft and the lowest hard of the candidates'
// decisions. A candidate that leaves a type to the runtime counts with the
// spec's own entry of that type (what the container then gets); with no such
// entry the lower cannot be told, and that is an error.
Result<Decision> LowestOfCandidates(const std::vector<PodCandidate>& candidates,
                                    const std::vector<Decision>& decisions,
                                    const ContainerFacts& facts);

// The disputes, joined with "; " for notes and errors.
std::string DisputesText(const std::vector<DisputedFact>& disputes);

}  // namespace ocirlimit
