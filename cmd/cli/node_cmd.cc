#include "cli/node_cmd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "cli/node_config.h"
#include "cli/node_install.h"
#include "core/text.h"
#include "effects/files.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;

constexpr const char* kNodeUsage =
    "usage: oci-rlimit node install --host-root DIR --source DIR [--prefix DIR]\n"
    "                               [--runtime containerd|crio|auto] [--rlimits LIST]\n"
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

struct NodeArgs {
  std::string action;
  std::string config;
  std::string binary;
  std::string name = "oci-rlimit";
  std::string base = "runc";
  std::string added_default;
  bool delete_if_empty = false;
};

Result<NodeArgs> Parse(const std::vector<std::string>& args) {
  NodeArgs a;
  if (args.size() < 2 || args[0] != "containerd")
    return MakeError("expected \"containerd install|uninstall\"");
  a.action = args[1];
  if (a.action != "install" && a.action != "uninstall") {
    return MakeError("unknown action " + Quote(a.action) + ": install or uninstall");
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "--delete-if-empty") {
      a.delete_if_empty = true;
      continue;
    }
    if (s != "--config" && s != "--binary" && s != "--name" && s != "--base" &&
        s != "--added-default") {
      return MakeError("unknown argument " + Quote(s));
    }
    if (i + 1 == args.size() || args[i + 1].empty()) return MakeError(s + ": missing value");
    const std::string& v = args[++i];
    if (s == "--config") a.config = v;
    if (s == "--binary") a.binary = v;
    if (s == "--name") a.name = v;
    if (s == "--base") a.base = v;
    if (s == "--added-default") a.added_default = v;
  }
  if (a.config.empty()) return MakeError("--config: required");
  if (a.action == "install") {
    if (a.binary.empty()) return MakeError("--binary: required");
    if (!a.binary.starts_with("/"))
      return MakeError("--binary: " + Quote(a.binary) + " must be absolute");
  }
  return a;
}

// The value after flag `s` at args[*i], advancing *i.
Result<std::string> Value(const std::vector<std::string>& args, size_t* i) {
  const std::string& s = args[*i];
  if (*i + 1 == args.size() || args[*i + 1].empty()) return MakeError(s + ": missing value");
  return args[++*i];
}

Result<node::InstallArgs> ParseInstall(const std::vector<std::string>& args) {
  node::InstallArgs a;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "--nvidia" || s == "--no-nvidia") {
      if (a.nvidia && *a.nvidia != (s == "--nvidia"))
        return MakeError("--nvidia and --no-nvidia: choose one");
      a.nvidia = s == "--nvidia";
      continue;
    }
    if (s == "--check") {
      a.check = true;
      continue;
    }
    auto v = Value(args, &i);
    if (!v) return v.error();
    if (s == "--host-root") {
      a.host = *v;
    } else if (s == "--prefix") {
      a.prefix = *v;
    } else if (s == "--runtime") {
      a.runtime = *v;
    } else if (s == "--rlimits") {
      a.rlimits = *v;
    } else if (s == "--source") {
      a.source = *v;
    } else if (s == "--nvidia-runtime") {
      if (a.nvidia == false) return MakeError("--nvidia-runtime and --no-nvidia: choose one");
      a.nvidia = true;
      a.nvidia_runtime = *v;
    } else {
      return MakeError("unknown argument " + Quote(s));
    }
  }
  if (a.host.empty()) return MakeError("--host-root: required");
  if (!a.check && a.source.empty()) return MakeError("--source: required");
  while (a.host.size() > 1 && a.host.back() == '/') a.host.pop_back();
  if (a.host == "/") a.host.clear();
  return a;
}

Result<node::UninstallArgs> ParseUninstall(const std::vector<std::string>& args) {
  node::UninstallArgs a;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--force") {
      a.force = true;
      continue;
    }
    if (args[i] != "--host-root") return MakeError("unknown argument " + Quote(args[i]));
    auto v = Value(args, &i);
    if (!v) return v.error();
    a.host = *v;
  }
  if (a.host.empty()) return MakeError("--host-root: required");
  while (a.host.size() > 1 && a.host.back() == '/') a.host.pop_back();
  if (a.host == "/") a.host.clear();
  return a;
}

Status Write(const std::string& path, const std::string& text, bool create) {
  if (create) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return MakeError("create " + Quote(path), errno);
    close(fd);
  }
  auto st = AtomicWriteFile(path, text);
  if (!st && create) unlink(path.c_str());
  return st;
}

int Run(const NodeArgs& a) {
  auto text = ReadFileBounded(a.config, kMaxConfigBytes);
  bool missing = !text && text.error().err == ENOENT;
  if (!text && !(missing && a.action == "install")) {
    if (missing) {
      std::cout << "changed=no\n";
      return 0;
    }
    std::cerr << "oci-rlimit: " << text.error().Text() << "\n";
    return 1;
  }
  const std::string current = missing ? std::string() : *text;
  Result<node::ConfigEdit> edit =
      a.action == "install" ? node::InstallHandler(current, a.config, {a.name, a.binary, a.base})
                            : node::UninstallHandler(current, a.config, a.name, a.added_default);
  if (!edit) {
    std::cerr << "oci-rlimit: " << edit.error().Text() << "\n";
    return 1;
  }
  for (const auto& n : edit->notes) std::cerr << "oci-rlimit: " << n << "\n";
  bool deleted = false;
  if (a.action == "uninstall" && a.delete_if_empty && edit->only_version) {
    if (unlink(a.config.c_str()) != 0) {
      std::cerr << "oci-rlimit: " << MakeError("remove " + Quote(a.config), errno).Text() << "\n";
      return 1;
    }
    deleted = true;
  } else if (edit->changed || missing) {
    if (auto st = Write(a.config, edit->text, missing); !st) {
      std::cerr << "oci-rlimit: " << st.error().Text() << "\n";
      return 1;
    }
  }
  std::cout << "changed=" << (edit->changed || missing || deleted ? "yes" : "no") << "\n"
            << "version=" << edit->version << "\n"
            << "base-binary=" << edit->base_binary << "\n"
            << "deleted=" << (deleted ? "yes" : "no") << "\n";
  return 0;
}

}  // namespace

int NodeMain(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kNodeUsage;
    return 0;
  }
  if (!args.empty() && (args[0] == "install" || args[0] == "uninstall")) {
    if (args[0] == "install") {
      auto a = ParseInstall(args);
      if (!a) {
        std::cerr << "oci-rlimit node: " << a.error().Text() << "\n";
        return 2;
      }
      return node::RunInstall(*a, std::cout, std::cerr);
    }
    auto a = ParseUninstall(args);
    if (!a) {
      std::cerr << "oci-rlimit node: " << a.error().Text() << "\n";
      return 2;
    }
    return node::RunUninstall(*a, std::cout, std::cerr);
  }
  auto a = Parse(args);
  if (!a) {
    std::cerr << "oci-rlimit: node: " << a.error().Text() << "\n" << kNodeUsage;
    return 2;
  }
  return Run(*a);
}

}  // namespace ocirlimit
