// One name for "the policy a program runs", comparable across nodes and
// with the admission policy made from the same file (docs/policy.md,
// "Policy digest").
#pragma once

#include <string>

#include "core/config.h"

namespace ocirlimit {

// The SHA-256 (64 hex digits) of a canonical rendering of what decides a
// container's limits: rlimits, rules, requests, on-error, rootless and the
// CDI injectors, after drop-ins and environment overrides are merged.
// Comments, key order, formatting, the file's path, [log] and the wrapper's
// [runtime]/[hook] plumbing do not change it.
[[nodiscard]] std::string PolicyDigest(const Config& config);

}  // namespace ocirlimit
