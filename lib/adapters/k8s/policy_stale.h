// Whether the admission policy in the cluster was made from the file at hand:
// the policy carries the digest of the config it was made from
// (core/policy_digest.h) as an annotation, and `oci-rlimit admission-policy
// --check` compares what `kubectl get ... -o yaml` prints with the file's
// (docs/guides/fleet-policy.md). Pure: text in, digests out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ocirlimit::k8s {

inline constexpr std::string_view kPolicyDigestAnnotation = "oci-rlimit.io/policy-digest";

// Every distinct digest (64 lowercase hex digits) given to the annotation in
// `text`, in the order first seen: kubectl's YAML or JSON, its
// last-applied-configuration included. A value that is not a digest is left out.
[[nodiscard]] std::vector<std::string> PolicyDigestsIn(std::string_view text);

enum class Staleness { kCurrent, kStale, kNoPolicy };

// kCurrent when every digest found is `digest`; kStale when one differs;
// kNoPolicy when none is found.
[[nodiscard]] Staleness JudgeStaleness(const std::vector<std::string>& found,
                                       const std::string& digest);

}  // namespace ocirlimit::k8s
