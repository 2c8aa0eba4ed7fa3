#include "cli/node/node_args.h"

#include <span>

#include "formats/argv.h"
#include "formats/text.h"

namespace ocirlimit::node {
namespace {

constexpr FlagSpec kHelp = {.name = "--help", .short_name = "-h"};
constexpr FlagSpec kHostRoot = {.name = "--host-root", .metavar = "DIR"};

constexpr FlagSpec kInstallFlags[] = {
    kHelp,
    kHostRoot,
    {.name = "--source", .metavar = "DIR"},
    {.name = "--prefix", .metavar = "DIR"},
    {.name = "--runtime", .metavar = "RUNTIME"},
    {.name = "--rlimits", .metavar = "LIST"},
    {.name = "--policy", .metavar = "FILE"},
    {.name = "--nvidia"},
    {.name = "--no-nvidia"},
    {.name = "--nvidia-runtime", .metavar = "PATH"},
    {.name = "--check"},
};
constexpr FlagSpec kUninstallFlags[] = {kHelp, kHostRoot, {.name = "--force"}};

constexpr FlagSpec kConfig = {.name = "--config", .metavar = "FILE"};
constexpr FlagSpec kName = {.name = "--name", .metavar = "NAME"};
constexpr FlagSpec kContainerdInstallFlags[] = {kHelp,
                                                kConfig,
                                                kName,
                                                {.name = "--binary", .metavar = "PATH"},
                                                {.name = "--base", .metavar = "HANDLER"}};
constexpr FlagSpec kContainerdUninstallFlags[] = {kHelp,
                                                  kConfig,
                                                  kName,
                                                  {.name = "--delete-if-empty"},
                                                  {.name = "--added-default", .metavar = "NAME"}};

constexpr NodeVerbSpec kVerbs[] = {
    {"install", kInstallFlags},
    {"uninstall", kUninstallFlags},
    {"containerd install", kContainerdInstallFlags},
    {"containerd uninstall", kContainerdUninstallFlags},
};

// Reads `args` with `flags`, calling set(item) for each flag but --help.
// Returns whether --help was given (the rest is then not read). Positional
// arguments are refused.
template <class Set>
Result<bool> ReadFlags(const std::vector<std::string>& args, std::span<const FlagSpec> flags,
                       Set set) {
  ArgReader reader(args, flags);
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) return false;
    const ArgItem& a = **next;
    if (!a.flag) return MakeError("unexpected argument " + Quote(a.value));
    if (a.Is("--help")) return true;
    if (Status st = set(a); !st) return st.error();
  }
}

// "--host-root /" is "" (node paths are HOST + path); trailing slashes go.
std::string HostRoot(std::string host) {
  while (host.size() > 1 && host.back() == '/') host.pop_back();
  return host == "/" ? std::string() : host;
}

Status SetInstall(InstallArgs& a, const ArgItem& item, bool& rlimits_given) {
  if (item.Is("--nvidia") || item.Is("--no-nvidia")) {
    const bool want = item.Is("--nvidia");
    if (a.nvidia && *a.nvidia != want) return MakeError("--nvidia and --no-nvidia: choose one");
    a.nvidia = want;
  } else if (item.Is("--nvidia-runtime")) {
    if (a.nvidia == false) return MakeError("--nvidia-runtime and --no-nvidia: choose one");
    a.nvidia = true;
    a.nvidia_runtime = item.value;
  } else if (item.Is("--check")) {
    a.check = true;
  } else if (item.Is("--host-root")) {
    a.host = item.value;
  } else if (item.Is("--prefix")) {
    a.prefix = item.value;
  } else if (item.Is("--runtime")) {
    a.runtime = item.value;
  } else if (item.Is("--rlimits") || item.Is("--policy")) {
    (item.Is("--rlimits") ? a.rlimits : a.policy) = item.value;
    if (item.Is("--rlimits")) rlimits_given = true;
    if (rlimits_given && !a.policy.empty()) return MakeError("--rlimits and --policy: choose one");
  } else if (item.Is("--source")) {
    a.source = item.value;
  }
  return Ok{};
}

Result<NodeArgs> ParseInstall(const std::vector<std::string>& args) {
  NodeArgs out;
  out.verb = NodeVerb::kInstall;
  InstallArgs& a = out.install;
  bool rlimits_given = false;
  auto help = ReadFlags(args, kInstallFlags,
                        [&](const ArgItem& item) { return SetInstall(a, item, rlimits_given); });
  if (!help) return help.error();
  if (*help) return NodeArgs{};
  if (a.host.empty()) return MakeError("--host-root: required");
  if (!a.check && a.source.empty()) return MakeError("--source: required");
  a.host = HostRoot(a.host);
  return out;
}

Result<NodeArgs> ParseUninstall(const std::vector<std::string>& args) {
  NodeArgs out;
  out.verb = NodeVerb::kUninstall;
  UninstallArgs& a = out.uninstall;
  auto help = ReadFlags(args, kUninstallFlags, [&](const ArgItem& item) -> Status {
    if (item.Is("--force")) a.force = true;
    if (item.Is("--host-root")) a.host = item.value;
    return Ok{};
  });
  if (!help) return help.error();
  if (*help) return NodeArgs{};
  if (a.host.empty()) return MakeError("--host-root: required");
  a.host = HostRoot(a.host);
  return out;
}

Result<NodeArgs> ParseContainerd(const std::string& action, const std::vector<std::string>& args) {
  NodeArgs out;
  out.verb = NodeVerb::kContainerd;
  ContainerdArgs& a = out.containerd;
  a.action = action;
  const bool install = action == "install";
  const std::span<const FlagSpec> flags =
      install ? std::span<const FlagSpec>(kContainerdInstallFlags)
              : std::span<const FlagSpec>(kContainerdUninstallFlags);
  auto help = ReadFlags(args, flags, [&](const ArgItem& item) -> Status {
    if (item.Is("--config")) a.config = item.value;
    if (item.Is("--binary")) a.binary = item.value;
    if (item.Is("--name")) a.name = item.value;
    if (item.Is("--base")) a.base = item.value;
    if (item.Is("--added-default")) a.added_default = item.value;
    if (item.Is("--delete-if-empty")) a.delete_if_empty = true;
    return Ok{};
  });
  if (!help) return help.error();
  if (*help) return NodeArgs{};
  if (a.config.empty()) return MakeError("--config: required");
  if (install && a.binary.empty()) return MakeError("--binary: required");
  if (install && !a.binary.starts_with("/")) {
    return MakeError("--binary: " + Quote(a.binary) + " must be absolute");
  }
  return out;
}

}  // namespace

std::span<const NodeVerbSpec> NodeVerbs() { return kVerbs; }

Result<NodeArgs> ParseNodeArgs(const std::vector<std::string>& args) {
  const std::string verb = args.empty() ? std::string() : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (verb == "-h" || verb == "--help") return NodeArgs{};
  if (verb == "install") return ParseInstall(rest);
  if (verb == "uninstall") return ParseUninstall(rest);
  if (verb != "containerd" || rest.empty()) {
    return MakeError("expected \"install\", \"uninstall\" or \"containerd install|uninstall\"");
  }
  if (rest[0] == "-h" || rest[0] == "--help") return NodeArgs{};
  if (rest[0] != "install" && rest[0] != "uninstall") {
    return MakeError("unknown action " + Quote(rest[0]) + ": install or uninstall");
  }
  return ParseContainerd(rest[0], std::vector<std::string>(rest.begin() + 1, rest.end()));
}

}  // namespace ocirlimit::node
