// A container's requests, from every source [requests] sources names, under
// the admin's ceilings (docs/policy.md, "Requests"). Each source is the
// container's author's: what it asks is a request, never a fact. Pure.
#pragma once

#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/policy.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// The NRI sample ulimit-adjuster's annotation keys, followed by the
// container's name: the current one, and the older one it still reads.
inline constexpr std::string_view kUlimitAdjusterKey = "ulimits.noderesource.dev/container.";
inline constexpr std::string_view kUlimitAdjusterOldKey = "ulimits.nri.containerd.io/container.";

// Each source of req.sources in order: what it asks, checked against the
// ceilings, set into d (a later source's entry replaces an earlier one's of
// the same type) and recorded in d.requests. A type not in the ceilings is
// never granted: an annotation's is ignored (clamp) or refused (reject); a
// spec entry's is no request at all and stays the node's business. An
// error is the request's: malformed, or refused under over-ceiling =
// "reject" (never with kNodeOnly).
Status ApplyRequests(const Requests& req, const ContainerFacts& facts, RequestMode mode,
                     Decision& d);

// Whether annotation source s finds its annotation for this container where
// it reads it (any value, even one asking nothing); false for kSpec.
bool HasRequestAnnotation(const ContainerFacts& facts, RequestSource s);

// The spec's own entries (the last of each type) that the "spec" source
// reads and that are over their ceiling: empty unless requests are enabled
// with that source. The hook cannot lower these under runc (it applies the
// spec's entries after hooks).
std::vector<Rlimit> SpecOverCeiling(const Requests& req, const std::vector<Rlimit>& spec);

}  // namespace ocirlimit
