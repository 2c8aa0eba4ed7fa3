// `oci-rlimit node ...`: its usage and the run of each subcommand
// (node_args.h reads the argv).
#include <iostream>

#include "cli/node/command.h"
#include "cli/node/node_args.h"
#include "cli/node/node_containerd.h"
#include "node/node_install.h"

namespace ocirlimit::cli {
namespace {

constexpr const char* kNodeUsage =
    "usage: oci-rlimit node install --host-root DIR --source DIR [--prefix DIR]\n"
    "                               [--runtime containerd|crio|auto]\n"
    "                               [--rlimits LIST | --policy FILE]\n"
    "                               [--nvidia | --no-nvidia] [--nvidia-runtime PATH] [--check]\n"
    "       oci-rlimit node uninstall --host-root DIR [--force]\n"
    "       oci-rlimit node containerd install --config FILE --binary PATH\n"
    "                                          [--name NAME] [--base HANDLER]\n"
    "       oci-rlimit node containerd uninstall --config FILE [--name NAME] [--delete-if-empty]\n"
    "                                            [--added-default NAME]\n"
    "\n"
    "node install    every decision of packaging/kubernetes/install.sh: checks the input\n"
    "                (nothing is written when any is wrong), copies the programs to PREFIX/bin,\n"
    "                writes the drop-in, the containerd handler or CRI-O's files, and remembers\n"
    "                the node's mode: a rerun without --nvidia keeps NVIDIA (--no-nvidia drops "
    "it).\n"
    "                --policy FILE: the fleet's config.toml becomes the node's\n"
    "                /etc/oci-rlimit/config.toml (it wins over every config.d drop-in).\n"
    "node uninstall  removes the handlers, then the files; keeps oci-rlimit-runtime while\n"
    "                containers created through it exist (exit 3), unless --force.\n"
    "\n"
    "install    adds or refreshes runtime handler NAME (default oci-rlimit) in the section\n"
    "           FILE's version reads (2: io.containerd.grpc.v1.cri, 3: "
    "io.containerd.cri.v1.runtime):\n"
    "           a copy of HANDLER (default runc; nvidia on GPU nodes) running PATH, passing\n"
    "           the pod annotations oci-rlimit.io/*. A missing FILE is created (version 2).\n"
    "uninstall  removes handler NAME where it runs oci-rlimit-runtime; nothing else.\n"
    "Prints key=value lines: changed=yes|no, version=N, base-binary=PATH, deleted=yes|no.\n";

}  // namespace

int NodeCommand(const std::vector<std::string>& args) {
  auto a = node::ParseNodeArgs(args);
  if (!a) {
    std::cerr << "oci-rlimit node: " << a.error().Text() << "\n";
    // The installer's errors stay one line; the others show the usage.
    if (args.empty() || (args[0] != "install" && args[0] != "uninstall")) std::cerr << kNodeUsage;
    return 2;
  }
  switch (a->verb) {
    case node::NodeVerb::kHelp:
      std::cout << kNodeUsage;
      return 0;
    case node::NodeVerb::kInstall:
      return node::RunInstall(a->install, std::cout, std::cerr);
    case node::NodeVerb::kUninstall:
      return node::RunUninstall(a->uninstall, std::cout, std::cerr);
    case node::NodeVerb::kContainerd:
      return node::RunContainerdEdit(a->containerd, std::cout, std::cerr);
  }
  return 2;
}

}  // namespace ocirlimit::cli
