// What `oci-rlimit audit` judges: what the node's install governs. The node
// installer's record (node_record.h) says the node was set up with the
// RuntimeClass handler `oci-rlimit`, which only the pods that name it use:
// audit then judges only the containers created through oci-rlimit-runtime
// (containerd's shim records the handler's BinaryName in options.json beside
// the bundle; CRI-O names the handler in the pod sandbox's config.json), or
// marked for the installer's CRI-O hook. oci-rlimit-nri (its status file) or
// a hooks.d file that runs the hook for every container governs every
// container, as does a node with no record; --all judges every container
// (docs/audit.md, "What audit judges").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "effects/fs_ops.h"

namespace ocirlimit {

// The program every handler of the install runs (its BinaryName, CRI-O's runtime_path).
inline constexpr std::string_view kWrapperName = "oci-rlimit-runtime";
// The handler name the installer gives containerd and CRI-O (RuntimeClass handler).
inline constexpr std::string_view kInstallerHandler = "oci-rlimit";
// The annotation the installer's CRI-O hook fires on, and its value.
inline constexpr std::string_view kEnableAnnotation = "oci-rlimit.io/enable";

// What audit learns of the node before it looks at a container.
struct ScopeFacts {
  bool all_flag = false;
  // The installer's runtimes ("containerd", "crio"); nullopt: no record.
  std::optional<std::vector<std::string>> record_runtimes;
  std::string record_path;     // its mode.json
  std::string nri_status;      // oci-rlimit-nri's status file, when there is one
  std::string node_wide_hook;  // a hooks.d file with `when.always`, when there is one
};

struct AuditScope {
  bool all = true;
  bool crio_hook = false;  // the installer's annotation-gated CRI-O hook counts too
  std::string said;        // one line: which scope, and why
};

[[nodiscard]] AuditScope DecideScope(const ScopeFacts& f);

// How a container was created, as far as its state shows.
struct ContainerOrigin {
  std::string binary_name;         // containerd's shim options.json binary_name, or ""
  std::string runtime_handler;     // CRI-O's handler (the sandbox's annotation), or ""
  bool enable_annotation = false;  // annotated oci-rlimit.io/enable=true
};

// Whether `scope` judges a container of that origin.
[[nodiscard]] bool Governed(const AuditScope& scope, const ContainerOrigin& origin);

// The record (under /var/lib/oci-rlimit/node-install), the NRI status file
// and the hooks.d files, read through `fs`; an unreadable record is said in
// the scope line and counts as none.
[[nodiscard]] ScopeFacts ReadScopeFacts(FsOps& fs, bool all_flag);

}  // namespace ocirlimit
