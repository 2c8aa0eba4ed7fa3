// `oci-rlimit node install|uninstall`: every decision of the Kubernetes node
// installer (packaging/kubernetes/install.sh keeps only the architecture,
// the check that the programs run on the node, and systemctl). On a node
// root HOST ("/" for this machine), it:
// - checks every input before anything is written: --rlimits with the rlimit
//   language, --policy as every program reads a config, --prefix and
//   --nvidia-runtime as node paths, the containerd edit, and NVIDIA's
//   runtime not leading back to the wrapper;
// - copies the programs, renders its files with real serializers, edits
//   containerd's config (node_config.h), and records all of it with the
//   node's mode (NodeMode) under HOST/var/lib/oci-rlimit/node-install;
// - on uninstall removes the handlers first, then keeps the wrapper (and the
//   drop-in it reads) while containers created through it remain, unless
//   --force.
// Output: one line per file written or removed; lines "plan KEY=VALUE" for
// the script (prefix, runtimes, restart); errors one line on stderr.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "node/host_fs.h"

namespace ocirlimit::node {

struct InstallArgs {
  std::string host;
  std::optional<std::string> prefix;  // unset: the remembered one, else /usr/local
  std::string runtime = "auto";       // containerd, crio or auto
  std::string rlimits = "memlock=unlimited";
  // --policy FILE: the fleet's config.toml (the ConfigMap), placed as the
  // node's /etc/oci-rlimit/config.toml, which wins over every drop-in; the
  // installer's drop-in then sets no rlimits. "" for none (--rlimits).
  std::string policy;
  std::optional<bool> nvidia;  // --nvidia / --no-nvidia; unset: as remembered
  std::string nvidia_runtime;
  std::string source;  // the directory holding the programs
  bool check = false;  // decide and print the plan, write nothing

  bool operator==(const InstallArgs&) const = default;
};

struct UninstallArgs {
  std::string host;
  bool force = false;

  bool operator==(const UninstallArgs&) const = default;
};

// Exit statuses: 0 done, 1 refused (nothing written), 3 uninstall kept the
// wrapper for containers that still use it.
// The files are read and written through `fs` (LinuxHostFs() without it).
int RunInstall(const InstallArgs& a, std::ostream& out, std::ostream& err);
int RunInstall(HostFs& fs, const InstallArgs& a, std::ostream& out, std::ostream& err);
int RunUninstall(const UninstallArgs& a, std::ostream& out, std::ostream& err);
int RunUninstall(HostFs& fs, const UninstallArgs& a, std::ostream& out, std::ostream& err);

}  // namespace ocirlimit::node
