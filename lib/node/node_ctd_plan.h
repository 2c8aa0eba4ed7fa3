// Where `oci-rlimit node install` writes containerd's handler so that the
// containerd on the node reads it (issue 29), decided on the node model's
// view of what that containerd reads (engines::ReadContainerdConfig, by its
// major version):
// - containerd 2.x whose config.toml imports a glob that matches our name:
//   a drop-in of our own, conf.d/99-oci-rlimit.toml, read after NVIDIA's
//   99-nvidia.toml, in the version the merged config has (2.x merges key by
//   key, and reads only the highest version's CRI table);
// - else config.toml itself (node_config.h's edit).
// The result is checked on the same view with the planned file in place:
// the handler must be read and run the wrapper. On containerd 1.x an import
// that defines the CRI table (NVIDIA's drop-in) replaces config.toml's whole,
// so that check refuses, before anything is written, in one line naming the
// file. A version 3 config on containerd 1.x is refused too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "formats/error.h"
#include "node/node_config.h"

namespace ocirlimit::node {

inline constexpr std::string_view kContainerdDropinName = "99-oci-rlimit.toml";

struct CtdPlan {
  std::string path;  // the node path written: config.toml or the drop-in
  bool dropin = false;
  bool missing = false;  // `path` does not exist yet
  ConfigEdit edit;       // its new text, changed, base_binary, notes
  int major = 0;         // containerd's major version, 0 when unknown
};

struct CtdRequest {
  HandlerRequest handler;
  int major = 0;  // containerd's major version on the node, 0 unknown
};

// `fs` reads the node (a rooted NodeFiles).
[[nodiscard]] Result<CtdPlan> PlanContainerdHandler(NodeFiles& fs, const CtdRequest& req);

// The files on the node that define handler `name` running the wrapper, as
// containerd of `major` reads them (uninstall's check), and the view's
// winning file for it, or "" when containerd reads no such handler.
[[nodiscard]] Result<std::string> WrapperHandlerSource(NodeFiles& fs, int major,
                                                       const std::string& name);

// CRI-O, reading crio.conf and crio.conf.d with `text` at `path`, must run
// handler oci-rlimit as `wrapper`; else one line naming the file that wins.
// And crio must start on it (engines::CheckCrioMonitors).
[[nodiscard]] Status CheckCrioVisible(NodeFiles& fs, const std::string& path,
                                      const std::string& text, const std::string& wrapper);

// The handler drop-in for `path` (RenderCrioHandler over CRI-O's default
// runtime as the node's files set it), checked by CheckCrioVisible.
[[nodiscard]] Result<std::string> PlanCrioHandler(NodeFiles& fs, const std::string& path,
                                                  const std::string& prefix,
                                                  const std::string& wrapper);

// The containerd major version on the node root `fs` (its `containerd
// --version`), or 0.
int NodeContainerdMajor(const std::string& host);

}  // namespace ocirlimit::node
