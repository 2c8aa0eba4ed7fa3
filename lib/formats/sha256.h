// SHA-256 (FIPS 180-4), for digests an admin compares across nodes: the
// policy a program runs (core/policy_digest.h). Not for secrets.
#pragma once

#include <string>
#include <string_view>

namespace ocirlimit {

// The SHA-256 of `bytes`, as 64 lowercase hex digits.
[[nodiscard]] std::string Sha256Hex(std::string_view bytes);

}  // namespace ocirlimit
