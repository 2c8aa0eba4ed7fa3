#include "cli/args.h"

#include <gtest/gtest.h>

#include <set>

#include "cli/node/node_args.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

using cli::CliArgs;
using cli::CliMode;
using node::NodeArgs;
using node::NodeVerb;

// `--flag value` pairs of `args` joined as `--flag=value`, by the flag tables
// given: the other spelling of the same argv.
std::vector<std::string> Joined(const std::vector<std::string>& args,
                                const std::vector<std::span<const FlagSpec>>& tables) {
  auto takes_value = [&](const std::string& s) {
    for (auto table : tables) {
      for (const FlagSpec& f : table) {
        if (f.name == s) return !f.metavar.empty();
      }
    }
    return false;
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (takes_value(args[i]) && i + 1 < args.size()) {
      out.push_back(args[i] + "=" + args[i + 1]);
      ++i;
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

std::vector<std::span<const FlagSpec>> CliTables();
std::vector<std::span<const FlagSpec>> NodeTables();

// The joined spelling differs from the separate one, or the tests below would
// read one argv twice.
TEST(ArgsTestJoined, JoinsValueFlagsOnly) {
  EXPECT_EQ(Joined({"audit", "--config", "/x", "--json", "--runtime-root", "/r"}, CliTables()),
            (std::vector<std::string>{"audit", "--config=/x", "--json", "--runtime-root=/r"}));
  EXPECT_EQ(Joined({"install", "--host-root", "/h", "--check"}, NodeTables()),
            (std::vector<std::string>{"install", "--host-root=/h", "--check"}));
}

std::vector<std::span<const FlagSpec>> CliTables() {
  std::vector<std::span<const FlagSpec>> out;
  for (const auto& c : cli::Commands()) out.push_back(c.flags);
  return out;
}

std::vector<std::span<const FlagSpec>> NodeTables() {
  std::vector<std::span<const FlagSpec>> out;
  for (const auto& v : node::NodeVerbs()) out.push_back(v.flags);
  return out;
}

CliArgs Cmd(const char* command) {
  CliArgs a;
  a.command = command;
  if (a.command == "audit") a.format = "text";  // audit's default
  return a;
}

template <class F>
CliArgs With(const char* command, F edit) {
  CliArgs a = Cmd(command);
  edit(a);
  return a;
}

struct CliCase {
  const char* name;
  std::vector<std::string> args;  // the `--flag value` form
  CliArgs want;
};

std::vector<CliCase> CliCases() {
  return {
      {"Validate", {"validate"}, Cmd("validate")},
      {"ValidateConfig",
       {"validate", "--config", "/x.toml"},
       With("validate", [](CliArgs& a) { a.config = "/x.toml"; })},
      {"ValidateJson", {"validate", "--json"}, With("validate", [](CliArgs& a) { a.json = true; })},
      {"FlagBeforeCommand",
       {"--config", "/x.toml", "validate"},
       With("validate", [](CliArgs& a) { a.config = "/x.toml"; })},
      {"ConfigValueLooksLikeACommand",
       {"validate", "--config", "audit"},
       With("validate", [](CliArgs& a) { a.config = "audit"; })},
      {"ExplainBundle",
       {"explain", "--bundle", "/b"},
       With("explain", [](CliArgs& a) { a.bundle = "/b"; })},
      {"ExplainEverything",
       {"explain", "--bundle", "/b", "--config", "/x.toml", "--json"},
       With("explain",
            [](CliArgs& a) {
              a.bundle = "/b";
              a.config = "/x.toml";
              a.json = true;
            })},
      {"Doctor", {"doctor"}, Cmd("doctor")},
      {"DoctorRoot", {"doctor", "--root", "/r"}, With("doctor", [](CliArgs& a) { a.root = "/r"; })},
      {"DoctorConfig",
       {"doctor", "--config", "/srv/rl.toml"},
       With("doctor", [](CliArgs& a) { a.config = "/srv/rl.toml"; })},
      {"DoctorJson", {"doctor", "--json"}, With("doctor", [](CliArgs& a) { a.json = true; })},
      {"AuditConfig",
       {"audit", "--config", "/x.toml"},
       With("audit", [](CliArgs& a) { a.config = "/x.toml"; })},
      {"AuditRuntimeRoots",
       {"audit", "--runtime-root", "/run/a", "--runtime-root", "/run/b"},
       With("audit",
            [](CliArgs& a) {
              a.runtime_roots = {"/run/a", "/run/b"};
            })},
      {"AuditOnlyItsRoots",
       {"audit", "--no-default-roots", "--runtime-root", "/run/a"},
       With("audit",
            [](CliArgs& a) {
              a.no_default_roots = true;
              a.runtime_roots = {"/run/a"};
            })},
      {"AuditJsonHeal",
       {"audit", "--json", "--heal"},
       With("audit",
            [](CliArgs& a) {
              a.json = true;
              a.format = "json";
              a.heal = true;
            })},
      {"AuditHealByThePolicyNow",
       {"audit", "--heal", "--policy-now"},
       With("audit",
            [](CliArgs& a) {
              a.heal = true;
              a.policy_now = true;
              a.format = "text";
            })},
      {"AuditAllNoTrunc",
       {"audit", "--all", "--no-trunc", "--containerd-root", "/c"},
       With("audit",
            [](CliArgs& a) {
              a.all = true;
              a.no_trunc = true;
              a.containerd_root = "/c";
              a.format = "text";
            })},
      {"AuditPrometheusToFile",
       {"audit", "--format", "prometheus", "--output", "/var/lib/t/oci.prom", "--node-name", "n1"},
       With("audit",
            [](CliArgs& a) {
              a.format = "prometheus";
              a.output = "/var/lib/t/oci.prom";
              a.node_name = "n1";
            })},
      {"AuditFormatJson",
       {"audit", "--format", "json"},
       With("audit",
            [](CliArgs& a) {
              a.format = "json";
              a.json = true;
            })},
      {"Help", {"--help"}, With("", [](CliArgs& a) { a.mode = CliMode::kHelp; })},
      {"ShortHelp", {"-h"}, With("", [](CliArgs& a) { a.mode = CliMode::kHelp; })},
      {"HelpAfterCommand",
       {"explain", "--help"},
       With("", [](CliArgs& a) { a.mode = CliMode::kHelp; })},
      {"Version", {"--version"}, With("", [](CliArgs& a) { a.mode = CliMode::kVersion; })},
  };
}

class CliArgsGood : public ::testing::TestWithParam<CliCase> {};

TEST_P(CliArgsGood, BothSpellingsParseTheSame) {
  const CliCase& c = GetParam();
  for (const auto& args : {c.args, Joined(c.args, CliTables())}) {
    auto a = cli::ParseCliArgs(args);
    ASSERT_TRUE(a.ok()) << a.error().Text();
    EXPECT_TRUE(*a == c.want) << "argv " << ::testing::PrintToString(args);
  }
}

INSTANTIATE_TEST_SUITE_P(Cli, CliArgsGood, ::testing::ValuesIn(CliCases()), CaseName{});

// Every flag of every command has a good case, with that command: a flag
// added to the table without a case fails here.
TEST(CliArgs, EveryFlagOfEveryCommandHasACase) {
  std::set<std::pair<std::string, std::string>> covered;
  for (const CliCase& c : CliCases()) {
    for (const auto& s : c.args) covered.emplace(c.want.command, s);
  }
  for (const auto& command : cli::Commands()) {
    if (command.run_argv) continue;  // reads its own argv, tested beside it
    for (const FlagSpec& f : command.flags) {
      EXPECT_TRUE(covered.contains({std::string(command.name), std::string(f.name)}))
          << command.name << " " << f.name;
    }
  }
}

// --help's usage line of each command names exactly the flags of its table
// (tests/man/check-man.sh holds the man page to those usage lines).
TEST(CliArgs, UsageNamesEachCommandsFlags) {
  const std::string usage = cli::CliUsage();
  for (const auto& command : cli::Commands()) {
    std::set<std::string> named;
    const std::string line(command.usage);
    for (size_t at = line.find("--"); at != std::string::npos; at = line.find("--", at + 2)) {
      const size_t end = line.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", at + 2);
      named.insert(line.substr(at, end - at));
    }
    named.erase("--help");  // node's pointer to its own --help
    std::set<std::string> table;
    for (const FlagSpec& f : command.flags) table.emplace(f.name);
    EXPECT_EQ(named, table) << command.name;
    EXPECT_NE(usage.find("oci-rlimit " + line), std::string::npos) << command.name;
  }
}

struct BadCase {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

class CliArgsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliArgsBad, SaysWhyInOneLine) {
  const BadCase& c = GetParam();
  auto a = cli::ParseCliArgs(c.args);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().Text(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cli, CliArgsBad,
    ::testing::Values(
        BadCase{"NoArgs",
                {},
                "missing command: validate, explain, doctor, audit, node or admission-policy"},
        BadCase{"OnlyFlags",
                {"--json"},
                "missing command: validate, explain, doctor, audit, node or admission-policy"},
        BadCase{"UnknownCommand", {"lint"}, "unknown command \"lint\""},
        BadCase{"NodeNotFirst", {"--json", "node"}, "node: must be the first argument"},
        BadCase{"UnknownFlag", {"audit", "--bogus"}, "unknown flag \"--bogus\""},
        BadCase{"UnknownFlagJoined", {"validate", "--bogus=1"}, "unknown flag \"--bogus=1\""},
        BadCase{"SingleDash", {"validate", "-"}, "unknown flag \"-\""},
        BadCase{"ConfigMissing", {"validate", "--config"}, "--config: missing PATH"},
        BadCase{"ConfigEmpty", {"validate", "--config="}, "--config: empty PATH"},
        BadCase{"ConfigEmptySeparate", {"validate", "--config", ""}, "--config: empty PATH"},
        BadCase{"BundleMissing", {"explain", "--bundle"}, "--bundle: missing DIR"},
        BadCase{"RootMissing", {"doctor", "--root"}, "--root: missing DIR"},
        BadCase{"RuntimeRootMissing", {"audit", "--runtime-root"}, "--runtime-root: missing DIR"},
        BadCase{"JsonTakesNoValue",
                {"validate", "--json=1"},
                "--json: takes no value, got \"--json=1\""},
        BadCase{"HealTakesNoValue",
                {"audit", "--heal=yes"},
                "--heal: takes no value, got \"--heal=yes\""},
        BadCase{"BadFormat",
                {"audit", "--format", "xml"},
                "--format \"xml\": use text, json or prometheus"},
        BadCase{"JsonAndPrometheus",
                {"audit", "--json", "--format", "prometheus"},
                "--json: conflicts with --format prometheus"},
        BadCase{"OutputWithoutPrometheus",
                {"audit", "--output", "/x"},
                "--output: only with --format prometheus"},
        BadCase{"FormatForDoctor", {"doctor", "--format", "json"}, "--format: only for audit"},
        BadCase{"TwoCommands", {"validate", "doctor"}, "unexpected argument \"doctor\""},
        BadCase{"ExplainWithoutBundle", {"explain"}, "explain: --bundle is required"},
        BadCase{"BundleForValidate", {"validate", "--bundle", "/b"}, "--bundle: only for explain"},
        BadCase{"RootForAudit", {"audit", "--root=/r"}, "--root: only for doctor"},
        BadCase{"RuntimeRootForDoctor",
                {"doctor", "--runtime-root", "/run/x"},
                "--runtime-root: only for audit"},
        BadCase{"HealForValidate", {"validate", "--heal"}, "--heal: only for audit"},
        BadCase{"AllForDoctor", {"doctor", "--all"}, "--all: only for audit"},
        BadCase{"NoDefaultRootsForDoctor",
                {"doctor", "--no-default-roots"},
                "--no-default-roots: only for audit"},
        BadCase{"NoDefaultRootsAlone",
                {"audit", "--no-default-roots"},
                "--no-default-roots: needs a --runtime-root"}),
    CaseName{});

NodeArgs Install(void (*edit)(node::InstallArgs&)) {
  NodeArgs out;
  out.verb = NodeVerb::kInstall;
  out.install.host = "/host";
  out.install.source = "/src";
  edit(out.install);
  return out;
}

NodeArgs Uninstall(bool force) {
  NodeArgs out;
  out.verb = NodeVerb::kUninstall;
  out.uninstall = {.host = "/host", .force = force};
  return out;
}

NodeArgs Containerd(const char* action, void (*edit)(node::ContainerdArgs&)) {
  NodeArgs out;
  out.verb = NodeVerb::kContainerd;
  out.containerd.action = action;
  out.containerd.config = "/etc/containerd/config.toml";
  if (out.containerd.action == "install") out.containerd.binary = "/usr/bin/oci-rlimit-runtime";
  edit(out.containerd);
  return out;
}

// `node install` with --host-root and --source, and `containerd install` with
// --config and --binary, plus the case's own flags.
struct NodeCase {
  const char* name;
  std::vector<std::string> args;  // the `--flag value` form
  NodeArgs want;
};

const std::vector<std::string> kInstall = {"install", "--host-root", "/host", "--source", "/src"};
const std::vector<std::string> kCdInstall = {"containerd", "install",
                                             "--config",   "/etc/containerd/config.toml",
                                             "--binary",   "/usr/bin/oci-rlimit-runtime"};
const std::vector<std::string> kCdUninstall = {"containerd", "uninstall", "--config",
                                               "/etc/containerd/config.toml"};

std::vector<std::string> Plus(std::vector<std::string> base, std::vector<std::string> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

std::vector<NodeCase> NodeCases() {
  auto nothing = [](node::InstallArgs&) {};
  return {
      {"Help", {"--help"}, NodeArgs{}},
      {"ShortHelp", {"-h"}, NodeArgs{}},
      {"InstallHelp", {"install", "--help"}, NodeArgs{}},
      {"ContainerdHelp", {"containerd", "--help"}, NodeArgs{}},
      {"Install", kInstall, Install(nothing)},
      {"InstallHostRootSlash",
       {"install", "--host-root", "/", "--source", "/src"},
       Install([](node::InstallArgs& a) { a.host = ""; })},
      {"InstallHostRootTrailingSlash",
       {"install", "--host-root", "/host//", "--source", "/src"},
       Install(nothing)},
      {"InstallPrefix", Plus(kInstall, {"--prefix", "/opt/x"}),
       Install([](node::InstallArgs& a) { a.prefix = "/opt/x"; })},
      {"InstallRuntime", Plus(kInstall, {"--runtime", "crio"}),
       Install([](node::InstallArgs& a) { a.runtime = "crio"; })},
      {"InstallRlimits", Plus(kInstall, {"--rlimits", "memlock=8M,nofile=1024"}),
       Install([](node::InstallArgs& a) { a.rlimits = "memlock=8M,nofile=1024"; })},
      {"InstallPolicy", Plus(kInstall, {"--policy", "/fleet/config.toml"}),
       Install([](node::InstallArgs& a) { a.policy = "/fleet/config.toml"; })},
      {"InstallNvidia", Plus(kInstall, {"--nvidia"}),
       Install([](node::InstallArgs& a) { a.nvidia = true; })},
      {"InstallNoNvidia", Plus(kInstall, {"--no-nvidia"}),
       Install([](node::InstallArgs& a) { a.nvidia = false; })},
      {"InstallNvidiaRuntime",
       Plus(kInstall, {"--nvidia-runtime", "/usr/bin/nvidia-container-runtime"}),
       Install([](node::InstallArgs& a) {
         a.nvidia = true;
         a.nvidia_runtime = "/usr/bin/nvidia-container-runtime";
       })},
      {"InstallCheckNeedsNoSource",
       {"install", "--host-root", "/host", "--check"},
       Install([](node::InstallArgs& a) {
         a.source = "";
         a.check = true;
       })},
      {"Uninstall", {"uninstall", "--host-root", "/host"}, Uninstall(false)},
      {"UninstallForce", {"uninstall", "--force", "--host-root", "/host/"}, Uninstall(true)},
      {"ContainerdInstall", kCdInstall, Containerd("install", [](node::ContainerdArgs&) {})},
      {"ContainerdInstallName", Plus(kCdInstall, {"--name", "rl"}),
       Containerd("install", [](node::ContainerdArgs& a) { a.name = "rl"; })},
      {"ContainerdInstallBase", Plus(kCdInstall, {"--base", "nvidia"}),
       Containerd("install", [](node::ContainerdArgs& a) { a.base = "nvidia"; })},
      {"ContainerdUninstall", kCdUninstall, Containerd("uninstall", [](node::ContainerdArgs&) {})},
      {"ContainerdUninstallName", Plus(kCdUninstall, {"--name", "rl"}),
       Containerd("uninstall", [](node::ContainerdArgs& a) { a.name = "rl"; })},
      {"ContainerdUninstallDeleteIfEmpty", Plus(kCdUninstall, {"--delete-if-empty"}),
       Containerd("uninstall", [](node::ContainerdArgs& a) { a.delete_if_empty = true; })},
      {"ContainerdUninstallAddedDefault", Plus(kCdUninstall, {"--added-default", "oci-rlimit"}),
       Containerd("uninstall", [](node::ContainerdArgs& a) { a.added_default = "oci-rlimit"; })},
  };
}

class NodeArgsGood : public ::testing::TestWithParam<NodeCase> {};

TEST_P(NodeArgsGood, BothSpellingsParseTheSame) {
  const NodeCase& c = GetParam();
  for (const auto& args : {c.args, Joined(c.args, NodeTables())}) {
    auto a = node::ParseNodeArgs(args);
    ASSERT_TRUE(a.ok()) << a.error().Text();
    EXPECT_TRUE(*a == c.want) << "argv " << ::testing::PrintToString(args);
  }
}

INSTANTIATE_TEST_SUITE_P(Node, NodeArgsGood, ::testing::ValuesIn(NodeCases()), CaseName{});

TEST(NodeArgs, EveryFlagOfEverySubcommandHasACase) {
  std::set<std::pair<std::string, std::string>> covered;
  for (const NodeCase& c : NodeCases()) {
    if (c.args.empty()) continue;
    std::string verb = c.args[0];
    if (verb == "containerd" && c.args.size() > 1) verb += " " + c.args[1];
    for (const auto& s : c.args) covered.emplace(verb, s);
  }
  for (const auto& v : node::NodeVerbs()) {
    for (const FlagSpec& f : v.flags) {
      if (f.name == "--help") continue;  // the same flag everywhere: the Help cases
      EXPECT_TRUE(covered.contains({std::string(v.words), std::string(f.name)}))
          << v.words << " " << f.name;
    }
  }
}

class NodeArgsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(NodeArgsBad, SaysWhyInOneLine) {
  const BadCase& c = GetParam();
  auto a = node::ParseNodeArgs(c.args);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().Text(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Node, NodeArgsBad,
    ::testing::Values(
        BadCase{"NoArgs",
                {},
                "expected \"install\", \"uninstall\" or \"containerd install|uninstall\""},
        BadCase{"UnknownVerb",
                {"crio"},
                "expected \"install\", \"uninstall\" or \"containerd install|uninstall\""},
        BadCase{"ContainerdAlone",
                {"containerd"},
                "expected \"install\", \"uninstall\" or \"containerd install|uninstall\""},
        BadCase{"ContainerdUnknownAction",
                {"containerd", "add"},
                "unknown action \"add\": install or uninstall"},
        BadCase{"InstallUnknownFlag", Plus(kInstall, {"--bogus"}), "unknown flag \"--bogus\""},
        BadCase{"InstallPositional", Plus(kInstall, {"extra"}), "unexpected argument \"extra\""},
        BadCase{"InstallHostRootMissing", {"install", "--host-root"}, "--host-root: missing DIR"},
        BadCase{"InstallRlimitsEmpty", Plus(kInstall, {"--rlimits="}), "--rlimits: empty LIST"},
        BadCase{"InstallRlimitsAndPolicy", Plus(kInstall, {"--rlimits=memlock=1M", "--policy=/p"}),
                "--rlimits and --policy: choose one"},
        BadCase{"InstallPolicyAndRlimits", Plus(kInstall, {"--policy=/p", "--rlimits=memlock=1M"}),
                "--rlimits and --policy: choose one"},
        BadCase{"InstallNoHostRoot", {"install", "--source", "/src"}, "--host-root: required"},
        BadCase{"InstallNoSource", {"install", "--host-root", "/h"}, "--source: required"},
        BadCase{"InstallBothNvidia", Plus(kInstall, {"--nvidia", "--no-nvidia"}),
                "--nvidia and --no-nvidia: choose one"},
        BadCase{"InstallNvidiaRuntimeAndNoNvidia",
                Plus(kInstall, {"--no-nvidia", "--nvidia-runtime=/x"}),
                "--nvidia-runtime and --no-nvidia: choose one"},
        BadCase{"InstallCheckTakesNoValue", Plus(kInstall, {"--check=1"}),
                "--check: takes no value, got \"--check=1\""},
        BadCase{"UninstallUnknownFlag",
                {"uninstall", "--host-root", "/h", "--source", "/s"},
                "unknown flag \"--source\""},
        BadCase{"UninstallNoHostRoot", {"uninstall", "--force"}, "--host-root: required"},
        BadCase{"ContainerdNoConfig",
                {"containerd", "install", "--binary", "/b"},
                "--config: required"},
        BadCase{
            "ContainerdNoBinary", {"containerd", "install", "--config=/c"}, "--binary: required"},
        BadCase{"ContainerdRelativeBinary",
                {"containerd", "install", "--config", "/c", "--binary", "b"},
                "--binary: \"b\" must be absolute"},
        BadCase{"ContainerdConfigMissing",
                {"containerd", "uninstall", "--config"},
                "--config: missing FILE"},
        BadCase{"ContainerdUninstallTakesNoBinary", Plus(kCdUninstall, {"--binary", "/b"}),
                "unknown flag \"--binary\""},
        BadCase{"ContainerdInstallTakesNoDeleteIfEmpty", Plus(kCdInstall, {"--delete-if-empty"}),
                "unknown flag \"--delete-if-empty\""}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
