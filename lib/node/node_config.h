// The node installer's edits of containerd's config.toml, pure: text in,
// text out (`oci-rlimit node containerd install|uninstall`, used by
// packaging/kubernetes/install.sh; docs/deployment.md).
//
// The file is understood through toml++, never through markers: anything may
// have rewritten it since the last run (nvidia-ctk drops every comment). The
// edit itself is textual, so the admin's comments and layout stay: the
// sections of the handler are cut out and a fresh block is appended. The
// result is then parsed again and must mean exactly the original with the
// handler replaced; if the text edit cannot be made to mean that (say the
// handler was written as an inline table), the whole file is written out
// by toml++ instead, which is what nvidia-ctk does too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/engines/constants.h"
#include "formats/error.h"
#include "node/toml_sections.h"

namespace ocirlimit::node {

// The engine constants, from the node model (adapters/engines/constants.h).
inline constexpr std::string_view kRuntimeBinaryName = engines::kWrapperName;
inline constexpr std::string_view kPodAnnotations = engines::kPodAnnotationsGlob;

// Where a config version keeps CRI's runtime handlers.
// version 2 (containerd 1.x; 2.x migrates it on load):
//   plugins."io.containerd.grpc.v1.cri".containerd.runtimes
// version 3 (containerd 2.x):
//   plugins."io.containerd.cri.v1.runtime".containerd.runtimes
inline constexpr std::string_view kCriPluginV2 = engines::kCriPluginV2;
inline constexpr std::string_view kCriPluginV3 = engines::kCriPluginV3;

struct HandlerRequest {
  std::string name = "oci-rlimit";
  std::string binary;         // options.BinaryName: the wrapper's absolute path
  std::string base = "runc";  // handler whose settings are copied (SystemdCgroup, ...)
  // The text of the file the base handler is copied from (the file that wins
  // it in containerd's view); "" for the edited file itself.
  std::string base_text = {};
  // Declare the default handler when the file lacks it (a whole runtimes
  // table: config.toml); false for a drop-in that containerd 2.x merges.
  bool declare_default = true;
};

struct ConfigEdit {
  std::string text;
  bool changed = false;
  std::string base_binary;         // the base handler's options.BinaryName, or ""
  std::vector<std::string> notes;  // one line each, for the log
  int64_t version = 0;
  bool rewritten = false;     // the text edit failed its check; toml++ wrote the file
  bool only_version = false;  // nothing is left but `version` (uninstall)
  // install: the default handler it had to declare (see InstallHandler), or
  // "". Remembered, so that uninstall removes that table and no other.
  std::string added_default;
};

// Adds or refreshes handler `req.name` in the section the file's version
// reads: a copy of the base handler (all its options, so SystemdCgroup and
// the rest match what kubelet was set up for) with runtime_type runc v2,
// options.BinaryName = req.binary and pod_annotations gaining
// "oci-rlimit.io/*". An earlier oci-rlimit handler in the other version's
// section (ignored by containerd) is removed. Unchanged text when the file
// already says all that. An empty text becomes a version 2 file.
// Refuses a version 1 file, an unknown version, and a handler of that name
// that runs something other than oci-rlimit-runtime.
Result<ConfigEdit> InstallHandler(std::string_view text, const std::string& source,
                                  const HandlerRequest& req);

// Removes handler `name` from both sections when its BinaryName is
// oci-rlimit-runtime; anything else is left as it is, except the bare
// default handler `added_default` that install declared, once no other
// handler is left beside it.
Result<ConfigEdit> UninstallHandler(std::string_view text, const std::string& source,
                                    const std::string& name, const std::string& added_default);

// The runc --root (options.Root) of each handler `name` that runs
// oci-rlimit-runtime, in either section; "" for one that sets none.
Result<std::vector<std::string>> WrapperRoots(std::string_view text, const std::string& source,
                                              const std::string& name);

}  // namespace ocirlimit::node
