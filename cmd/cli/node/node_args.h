// `oci-rlimit node ...`'s argv (through formats/argv.h): the subcommands
// install, uninstall and containerd install|uninstall, each with its own flag
// table.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/argv.h"
#include "formats/error.h"
#include "node/node_install.h"

namespace ocirlimit::node {

// `node containerd install|uninstall`: one runtime handler in one config file.
struct ContainerdArgs {
  std::string action;  // install or uninstall
  std::string config;
  std::string binary;  // install
  std::string name = "oci-rlimit";
  std::string base = "runc";     // install
  std::string added_default;     // uninstall
  bool delete_if_empty = false;  // uninstall

  bool operator==(const ContainerdArgs&) const = default;
};

enum class NodeVerb { kHelp, kInstall, kUninstall, kContainerd };

struct NodeArgs {
  NodeVerb verb = NodeVerb::kHelp;
  InstallArgs install;      // kInstall
  UninstallArgs uninstall;  // kUninstall
  ContainerdArgs containerd;

  bool operator==(const NodeArgs&) const = default;
};

// The subcommands' flag tables: "install", "uninstall", "containerd install",
// "containerd uninstall", each with --help (-h).
struct NodeVerbSpec {
  std::string_view words;
  std::span<const FlagSpec> flags;
};
[[nodiscard]] std::span<const NodeVerbSpec> NodeVerbs();

// args: argv after "node". --help (-h) anywhere is kHelp. Errors are one
// line: formats/argv's, or
//   expected "install", "uninstall" or "containerd install|uninstall"
//   unknown action "x": install or uninstall
//   unexpected argument "x"
//   --host-root: required
//   --nvidia and --no-nvidia: choose one
//   --binary: "x" must be absolute
[[nodiscard]] Result<NodeArgs> ParseNodeArgs(const std::vector<std::string>& args);

}  // namespace ocirlimit::node
