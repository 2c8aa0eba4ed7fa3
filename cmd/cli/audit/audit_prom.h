// `oci-rlimit audit --format prometheus`: the verdict counts in the
// Prometheus text format, for node_exporter's textfile collector
// (docs/audit.md, "Fleet"). Labels: the verdict's state and the state root,
// both bounded (the node's runtimes' roots, never a container id).
#pragma once

#include <cstdint>
#include <string>

#include "cli/audit/audit.h"

namespace ocirlimit {

// The states a container is counted in: AuditStatusName's, and
// "not_judged" for a pod sandbox.
inline constexpr const char* kAuditPromStates[] = {"ok",      "missing", "over",
                                                   "refused", "unknown", "not_judged"};

// The report's counts; `unix_now` is the run's time (seconds). Every sample
// carries node="NODE" (the `node` label, docs/audit.md "Fleet"); none when
// node is empty. `digest`: the policy judged by (core/policy_digest.h), as
// oci_rlimit_policy_info; none when empty.
[[nodiscard]] std::string AuditPrometheus(const AuditReport& r, int64_t unix_now,
                                          const std::string& node = "",
                                          const std::string& digest = "");

}  // namespace ocirlimit
