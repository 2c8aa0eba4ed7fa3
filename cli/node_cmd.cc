#include "cli/node_cmd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "cli/node_config.h"
#include "core/text.h"
#include "effects/files.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;

constexpr const char* kNodeUsage =
    "usage: oci-rlimit node containerd install --config FILE --binary PATH\n"
    "                                          [--name NAME] [--base HANDLER]\n"
    "       oci-rlimit node containerd uninstall --config FILE [--name NAME] [--delete-if-empty]\n"
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
    if (s != "--config" && s != "--binary" && s != "--name" && s != "--base") {
      return MakeError("unknown argument " + Quote(s));
    }
    if (i + 1 == args.size() || args[i + 1].empty()) return MakeError(s + ": missing value");
    const std::string& v = args[++i];
    if (s == "--config") a.config = v;
    if (s == "--binary") a.binary = v;
    if (s == "--name") a.name = v;
    if (s == "--base") a.base = v;
  }
  if (a.config.empty()) return MakeError("--config: required");
  if (a.action == "install") {
    if (a.binary.empty()) return MakeError("--binary: required");
    if (!a.binary.starts_with("/"))
      return MakeError("--binary: " + Quote(a.binary) + " must be absolute");
  }
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
                            : node::UninstallHandler(current, a.config, a.name);
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
  auto a = Parse(args);
  if (!a) {
    std::cerr << "oci-rlimit: node: " << a.error().Text() << "\n" << kNodeUsage;
    return 2;
  }
  return Run(*a);
}

}  // namespace ocirlimit
