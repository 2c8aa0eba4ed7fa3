#include "cli/args.h"

#include "cli/admission/command.h"
#include "cli/audit/command.h"
#include "cli/doctor/command.h"
#include "cli/explain/command.h"
#include "cli/node/command.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

constexpr FlagSpec kConfig = {.name = "--config", .metavar = "PATH"};
constexpr FlagSpec kJson = {.name = "--json"};
constexpr FlagSpec kBundle = {.name = "--bundle", .metavar = "DIR"};
constexpr FlagSpec kRoot = {.name = "--root", .metavar = "DIR"};
constexpr FlagSpec kRuntimeRoot = {.name = "--runtime-root", .metavar = "DIR"};
constexpr FlagSpec kNoDefaultRoots = {.name = "--no-default-roots"};
constexpr FlagSpec kHeal = {.name = "--heal"};
constexpr FlagSpec kPolicyNow = {.name = "--policy-now"};
constexpr FlagSpec kAll = {.name = "--all"};
constexpr FlagSpec kNoTrunc = {.name = "--no-trunc"};
constexpr FlagSpec kContainerdRoot = {.name = "--containerd-root", .metavar = "DIR"};
constexpr FlagSpec kFormat = {.name = "--format", .metavar = "FORMAT"};
constexpr FlagSpec kOutput = {.name = "--output", .metavar = "FILE"};
constexpr FlagSpec kNodeName = {.name = "--node-name", .metavar = "NAME"};

constexpr FlagSpec kValidateFlags[] = {kConfig, kJson};
constexpr FlagSpec kExplainFlags[] = {kBundle, kConfig, kJson};
constexpr FlagSpec kDoctorFlags[] = {kRoot, kConfig, kJson};
constexpr FlagSpec kAuditFlags[] = {
    kConfig, kRuntimeRoot, kNoDefaultRoots, kContainerdRoot, kJson,     kHeal,
    kAll,    kNoTrunc,     kFormat,         kOutput,         kNodeName, kPolicyNow};

// What the reader knows before it knows the command: every command's flags,
// --help and --version (the command then says which flags are its own).
constexpr FlagSpec kReaderFlags[] = {
    {.name = "--help", .short_name = "-h"},
    {.name = "--version"},
    kConfig,
    kJson,
    kBundle,
    kRoot,
    kRuntimeRoot,
    kNoDefaultRoots,
    kHeal,
    kPolicyNow,
    kAll,
    kNoTrunc,
    kContainerdRoot,
    kFormat,
    kOutput,
    kNodeName,
};

constexpr CommandSpec kCommands[] = {
    {.name = "validate",
     .usage = "validate [--config PATH] [--json]",
     .about = "checks a config and prints the effective limits, rules and requests;\n"
              "labels each rule condition [author] or [node] and warns on a rule that\n"
              "reads only facts a container's author sets (env, annotations).",
     .flags = kValidateFlags,
     .run = ValidateCommand},
    {.name = "explain",
     .usage = "explain --bundle DIR [--config PATH] [--json]",
     .about = "shows which rules match DIR/config.json, the limits oci-rlimit would set,\n"
              "conflicts with the spec's own process.rlimits, and what runc, crun and\n"
              "oci-rlimit-runtime each end up giving the container.",
     .flags = kExplainFlags,
     .run = ExplainCommand},
    {.name = "doctor",
     .usage = "doctor [--root DIR] [--config PATH] [--json]",
     .about =
         "inspects the node (or a copy of one under --root): runc and crun, docker,\n"
         "containerd, CRI-O, each handler's exec chain and what its pods get, NRI,\n"
         "podman/CRI-O hooks dirs, systemd LimitMEMLOCK, CAP_SYS_RESOURCE. Its config\n"
         "(--config, else $OCI_RLIMIT_CONFIG, else the default) is a node path, inside --root.",
     .flags = kDoctorFlags,
     .run = DoctorCommand},
    {.name = "audit",
     .usage = "audit [--config PATH] [--runtime-root DIR]... [--no-default-roots]\n"
              "                        [--containerd-root DIR] [--all] [--json] [--no-trunc]\n"
              "                        [--heal] [--policy-now] [--format text|json|prometheus]\n"
              "                        [--output FILE] [--node-name NAME]",
     .about = "finds the running containers in the runtimes' state roots (containerd's\n"
              "runc roots in every namespace, docker, CRI-O and podman's /run/runc and\n"
              "/run/crun, plus each --runtime-root; with --no-default-roots only those)\n"
              "and says of each init process: ok, missing (lower than the policy gives),\n"
              "over (higher), refused (its request is refused, yet it runs) or unknown\n"
              "(why), against the decision recorded when it was created (else the policy\n"
              "now; --policy-now: the policy now for all). --heal sets each missing, over\n"
              "or refused one to it (refused: the node's limits). It judges what the node's "
              "install governs\n"
              "(the installer's record: with its RuntimeClass handler only the containers\n"
              "created through oci-rlimit-runtime), or with --all every container; ids\n"
              "are cut to 12 characters unless --no-trunc. A CRI pod's annotations are\n"
              "read from containerd's metadata under --containerd-root (/var/lib/containerd).\n"
              "--format prometheus writes the verdict counts for node_exporter's textfile\n"
              "collector; --output FILE replaces FILE atomically (mode 0644); every series\n"
              "carries node=NAME (--node-name, else $NODE_NAME, else the host name).",
     .flags = kAuditFlags,
     .run = AuditCommand},
    {.name = "node",
     .usage = "node install|uninstall|containerd ...  (oci-rlimit node --help)",
     .about = "installs oci-rlimit on a node, as packaging/kubernetes/install.sh does, or\n"
              "edits containerd's runtime handlers.",
     .flags = {},
     .run_argv = NodeCommand},
    {.name = "admission-policy",
     .usage = "admission-policy [--config PATH] [--actions Deny|Warn|Audit,...]\n"
              "                        [--namespace-selector SEL] [--object-selector SEL]\n"
              "                        [--ulimits-field] [--name NAME] [--output FILE]\n"
              "       oci-rlimit admission-policy --check [--config PATH] < CLUSTER.yaml",
     .about = "writes the Kubernetes ValidatingAdmissionPolicy that refuses at `kubectl apply`\n"
              "what the nodes' [requests] ceilings refuse, with the node's message; --check\n"
              "says whether the cluster's policy was made from this config.",
     .flags = kAdmissionFlags,
     .run_argv = AdmissionPolicyCommand},
};

constexpr const char* kUsageEnd =
    "Config: --config PATH, else $OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml,\n"
    "with the $OCI_RLIMIT_RLIMITS overrides, as the hook and the wrapper read it.\n"
    "Exit status: 0 fine, 1 something is wrong, 2 usage error (audit: or a config error).\n";

// "\n" followed by `indent` spaces wherever `text` has a "\n".
std::string Indented(std::string_view text, size_t indent) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

// "a, b or c".
std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

bool Takes(const CommandSpec& c, std::string_view flag) {
  for (const FlagSpec& f : c.flags) {
    if (f.name == flag) return true;
  }
  return false;
}

// "--root: only for doctor": the commands whose table holds `flag`.
Error OnlyFor(std::string_view flag) {
  std::vector<std::string> names;
  for (const CommandSpec& c : kCommands) {
    if (Takes(c, flag)) names.emplace_back(c.name);
  }
  return MakeError(std::string(flag) + ": only for " + JoinWords(names));
}

void Set(CliArgs& out, const ArgItem& a) {
  if (a.Is("--config")) out.config = a.value;
  if (a.Is("--json")) out.json = true;
  if (a.Is("--bundle")) out.bundle = a.value;
  if (a.Is("--root")) out.root = a.value;
  if (a.Is("--runtime-root")) out.runtime_roots.push_back(a.value);
  if (a.Is("--no-default-roots")) out.no_default_roots = true;
  if (a.Is("--heal")) out.heal = true;
  if (a.Is("--policy-now")) out.policy_now = true;
  if (a.Is("--all")) out.all = true;
  if (a.Is("--no-trunc")) out.no_trunc = true;
  if (a.Is("--containerd-root")) out.containerd_root = a.value;
  if (a.Is("--format")) out.format = a.value;
  if (a.Is("--output")) out.output = a.value;
  if (a.Is("--node-name")) out.node_name = a.value;
}

// --format's value (--json is --format json); --output only with prometheus.
Status CheckFormat(CliArgs& out) {
  if (out.format.empty()) {
    out.format = out.json ? "json" : "text";
  } else if (out.format != "text" && out.format != "json" && out.format != "prometheus") {
    return MakeError("--format " + Quote(out.format) + ": use text, json or prometheus");
  } else if (out.json && out.format != "json") {
    return MakeError("--json: conflicts with --format " + out.format);
  }
  out.json = out.format == "json";
  if (!out.output.empty() && out.format != "prometheus") {
    return MakeError("--output: only with --format prometheus");
  }
  return Ok{};
}

// The command's own checks, once argv is read.
Status Check(CliArgs& out, const std::vector<std::string_view>& flags) {
  const CommandSpec* c = FindCommand(out.command);
  if (!c) return MakeError("unknown command " + Quote(out.command));
  if (c->run_argv) return MakeError(out.command + ": must be the first argument");
  for (std::string_view flag : flags) {
    if (!Takes(*c, flag)) return OnlyFor(flag);
  }
  if (out.command == "explain" && out.bundle.empty()) {
    return MakeError("explain: --bundle is required");
  }
  if (out.no_default_roots && out.runtime_roots.empty()) {
    return MakeError("--no-default-roots: needs a --runtime-root");
  }
  if (out.command == "audit") return CheckFormat(out);
  return Ok{};
}

}  // namespace

std::span<const CommandSpec> Commands() { return kCommands; }

std::string CliUsage() {
  constexpr size_t kColumn = 10;  // where each command's paragraph starts
  std::string out;
  for (const CommandSpec& c : kCommands) {
    out += out.empty() ? "usage: oci-rlimit " : "       oci-rlimit ";
    out += std::string(c.usage) + "\n";
  }
  out += "       oci-rlimit --help | --version\n\n";
  for (const CommandSpec& c : kCommands) {
    std::string name(c.name);
    // A name as long as the column gets its paragraph on the next line.
    if (name.size() >= kColumn) name += '\n';
    name.append(name.size() > kColumn ? kColumn : kColumn - name.size(), ' ');
    out += name + Indented(c.about, kColumn) + "\n";
  }
  return out + "\n" + kUsageEnd;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const CommandSpec& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Result<CliArgs> ParseCliArgs(const std::vector<std::string>& args) {
  CliArgs out;
  std::vector<std::string_view> flags;  // the flags given, to check against the command's
  ArgReader reader(args, kReaderFlags);
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) break;
    const ArgItem& a = **next;
    if (a.Is("--help") || a.Is("--version")) {
      out.mode = a.Is("--help") ? CliMode::kHelp : CliMode::kVersion;
      out.command.clear();
      return out;
    }
    if (a.flag) {
      flags.push_back(a.flag->name);
      Set(out, a);
    } else if (out.command.empty()) {
      out.command = a.value;
    } else {
      return MakeError("unexpected argument " + Quote(a.value));
    }
  }
  if (out.command.empty()) {
    std::vector<std::string> names;
    for (const CommandSpec& c : kCommands) names.emplace_back(c.name);
    return MakeError("missing command: " + JoinWords(names));
  }
  if (auto st = Check(out, flags); !st) return st.error();
  return out;
}

}  // namespace ocirlimit::cli
