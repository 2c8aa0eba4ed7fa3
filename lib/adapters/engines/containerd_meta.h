// The pod annotations of containerd's CRI sandboxes, from containerd's own
// metadata database: under a real kubelet a pod's annotations are only in
// its PodSandboxConfig, which containerd (1.7 and 2.x) keeps in
// ROOT/io.containerd.metadata.v1.bolt/meta.db, not in any config.json
// (a handler's pod_annotations filters the sandbox's spec as the
// container's). The database is a bbolt file, read here read-only from a
// snapshot of its bytes: v1/NAMESPACE/containers/SANDBOX_ID/extensions/
// io.cri-containerd.sandbox.metadata holds a protobuf Any whose value is the
// CRI plugin's JSON {"Version":"v1","Metadata":{"Config":{"annotations":...}}}.
// Pure: bytes in, annotations out (docs/audit.md, "Where audit looks").
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

inline constexpr std::string_view kContainerdRoot = "/var/lib/containerd";
inline constexpr std::string_view kContainerdMetaDb = "/io.containerd.metadata.v1.bolt/meta.db";

// Sandbox id -> its pod's annotations, for every CRI sandbox in namespace
// `ns`. A file that is not a bbolt database, or whose pages do not hold
// together, is an error; a namespace with no sandboxes is an empty map.
using PodAnnotations = std::map<std::string, std::map<std::string, std::string>>;
[[nodiscard]] Result<PodAnnotations> ReadPodAnnotations(std::string_view db, const std::string& ns);

}  // namespace ocirlimit
