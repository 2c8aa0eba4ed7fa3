// `oci-rlimit admission-policy --check`: whether the admission policy in the
// cluster (kubectl's YAML or JSON on stdin; the CLI has no API client) was
// made from this config, by the digest annotation the generated policy
// carries (adapters/k8s/policy_stale.h).
#pragma once

#include <iosfwd>
#include <string>

#include "core/config.h"

namespace ocirlimit::cli {

// Says one line on `out` (current) or `err` (stale, none found, unreadable
// input). 0 current; 1 stale or no policy found; 2 stdin could not be read.
[[nodiscard]] int CheckAdmissionPolicy(const Config& cfg, const std::string& config_path, int in_fd,
                                       std::ostream& out, std::ostream& err);

}  // namespace ocirlimit::cli
