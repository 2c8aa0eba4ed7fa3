#include "runtime/args.h"

#include <gtest/gtest.h>

#include <optional>
#include <tuple>

#include "tests/testing/case_name.h"
#include "tests/testing/flag_forms.h"

namespace ocirlimit {
namespace {

struct ArgsCase {
  const char* name = "";
  std::vector<std::string> args{};  // without argv[0]
  std::string subcommand{};
  RuntimeCommand command = RuntimeCommand::kNone;
  std::string bundle = ".";
  std::string process{};
  std::string id{};
  std::string root{};
  std::string log{};
  std::string log_format{};
  SelfRequest self = SelfRequest::kNone;
};

class ParseRuntimeArgsGood : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(ParseRuntimeArgsGood, Parses) {
  const ArgsCase& c = GetParam();
  auto r = ParseRuntimeArgs(c.args);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(r->global.subcommand, c.subcommand);
  EXPECT_EQ(r->global.command, c.command);
  EXPECT_EQ(r->command.bundle, c.bundle);
  EXPECT_EQ(r->command.process, c.process);
  EXPECT_EQ(r->command.id, c.id);
  EXPECT_EQ(r->global.root, c.root);
  EXPECT_EQ(r->global.log, c.log);
  EXPECT_EQ(r->global.log_format, c.log_format);
  EXPECT_EQ(r->global.self, c.self);
  if (!c.subcommand.empty()) {
    EXPECT_EQ(c.args.at(r->global.subcommand_at), c.subcommand);
  }
}

using RC = RuntimeCommand;

// The bundle forms nvidia-container-toolkit's runtime tests cover, as the
// arguments of `create`, plus the global-flag forms and what docker,
// containerd and podman send (DEVELOPERS.md).
INSTANTIATE_TEST_SUITE_P(
    Forms, ParseRuntimeArgsGood,
    ::testing::Values(
        ArgsCase{.name = "empty", .args = {}, .subcommand = "", .command = RC::kNone},
        ArgsCase{.name = "create_alone",
                 .args = {"create"},
                 .subcommand = "create",
                 .command = RC::kCreate},
        ArgsCase{.name = "bundle_space",
                 .args = {"create", "--bundle", "/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar"},
        ArgsCase{.name = "other_flag_is_not_bundle",
                 .args = {"create", "--not-bundle", "/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .id = "/foo/bar"},
        ArgsCase{.name = "double_dash_alone",
                 .args = {"create", "--"},
                 .subcommand = "create",
                 .command = RC::kCreate},
        ArgsCase{.name = "single_dash_long",
                 .args = {"create", "-bundle", "/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar"},
        ArgsCase{.name = "bundle_equals",
                 .args = {"create", "--bundle=/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar"},
        ArgsCase{.name = "b_equals",
                 .args = {"create", "-b=/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar"},
        ArgsCase{.name = "b_equals_keeps_later_equals",
                 .args = {"create", "-b=/foo/=bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/=bar"},
        ArgsCase{.name = "b_space",
                 .args = {"create", "-b", "/foo/bar"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar"},
        ArgsCase{.name = "bundle_then_id",
                 .args = {"create", "-b", "/foo/bar", "c1"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/foo/bar",
                 .id = "c1"},
        ArgsCase{.name = "bundle_named_create_then_id_create",
                 .args = {"create", "-b", "create", "create"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "create",
                 .id = "create"},
        ArgsCase{.name = "b_equals_create_then_id_create",
                 .args = {"create", "-b=create", "create"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "create",
                 .id = "create"},
        ArgsCase{.name = "bundle_named_create",
                 .args = {"create", "-b", "create"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "create"},
        ArgsCase{.name = "empty_bundle_is_cwd",
                 .args = {"create", "--bundle=", "c1"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .id = "c1"},
        ArgsCase{.name = "global_value_create_is_not_subcommand",
                 .args = {"--root", "create", "run", "--bundle", "/b", "c1"},
                 .subcommand = "run",
                 .command = RC::kRun,
                 .bundle = "/b",
                 .id = "c1",
                 .root = "create"},
        ArgsCase{.name = "global_log_value_create",
                 .args = {"--log", "create", "state", "c1"},
                 .subcommand = "state",
                 .command = RC::kOther,
                 .log = "create"},
        ArgsCase{.name = "global_equals_forms",
                 .args = {"--root=/r", "--log=/l", "--log-format=json", "--systemd-cgroup",
                          "--debug", "--criu=/c", "--rootless=false", "create", "c1"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .id = "c1",
                 .root = "/r",
                 .log = "/l",
                 .log_format = "json"},
        ArgsCase{.name = "global_space_forms",
                 .args = {"--debug", "--criu", "criu", "--rootless", "auto", "--root", "/r", "-log",
                          "/l", "-log-format", "text", "run", "c1"},
                 .subcommand = "run",
                 .command = RC::kRun,
                 .id = "c1",
                 .root = "/r",
                 .log = "/l",
                 .log_format = "text"},
        ArgsCase{.name = "containerd_docker_create",
                 .args = {"--root", "/run/containerd/runc/k8s.io", "--log", "/run/c/log.json",
                          "--log-format", "json", "create", "--bundle", "/run/c/b", "--pid-file",
                          "/run/c/init.pid", "--console-socket", "/tmp/pty.sock", "abc123"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/run/c/b",
                 .id = "abc123",
                 .root = "/run/containerd/runc/k8s.io",
                 .log = "/run/c/log.json",
                 .log_format = "json"},
        ArgsCase{.name = "containerd_docker_exec",
                 .args = {"--root", "/r", "--log", "/l.json", "--log-format", "json", "exec",
                          "--process", "/tmp/runc-process123", "--detach", "--pid-file", "/p.pid",
                          "abc123"},
                 .subcommand = "exec",
                 .command = RC::kExec,
                 .process = "/tmp/runc-process123",
                 .id = "abc123",
                 .root = "/r",
                 .log = "/l.json",
                 .log_format = "json"},
        ArgsCase{.name = "podman_conmon_create",
                 .args = {"--systemd-cgroup", "--root", "/run/runc", "--log", "/ctr/oci-log",
                          "--log-format", "json", "create", "--bundle", "/ctr/userdata",
                          "--pid-file", "/ctr/pidfile", "--no-new-keyring", "abc123"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .bundle = "/ctr/userdata",
                 .id = "abc123",
                 .root = "/run/runc",
                 .log = "/ctr/oci-log",
                 .log_format = "json"},
        ArgsCase{.name = "exec_p_short",
                 .args = {"exec", "-p", "/p.json", "c1"},
                 .subcommand = "exec",
                 .command = RC::kExec,
                 .process = "/p.json",
                 .id = "c1"},
        ArgsCase{.name = "exec_process_equals",
                 .args = {"exec", "--process=/p.json", "-d", "c1"},
                 .subcommand = "exec",
                 .command = RC::kExec,
                 .process = "/p.json",
                 .id = "c1"},
        // The container's own command may carry flags that look like ours.
        ArgsCase{.name = "exec_command_flags_are_not_ours",
                 .args = {"exec", "-t", "--user", "0:0", "--env", "A=B", "c1", "sh", "-p", "/x",
                          "-b", "/y"},
                 .subcommand = "exec",
                 .command = RC::kExec,
                 .id = "c1"},
        ArgsCase{.name = "run_detach",
                 .args = {"run", "-d", "--bundle", "/b", "--pid-file", "/p", "c1"},
                 .subcommand = "run",
                 .command = RC::kRun,
                 .bundle = "/b",
                 .id = "c1"},
        ArgsCase{.name = "state_args_not_parsed",
                 .args = {"state", "--bundle"},
                 .subcommand = "state",
                 .command = RC::kOther},
        ArgsCase{.name = "delete_force",
                 .args = {"--root", "/r", "delete", "--force", "c1"},
                 .subcommand = "delete",
                 .command = RC::kOther,
                 .root = "/r"},
        ArgsCase{.name = "version_flag_only",
                 .args = {"--version"},
                 .subcommand = "",
                 .command = RC::kNone,
                 .self = SelfRequest::kVersion},
        ArgsCase{.name = "v_short_is_version",
                 .args = {"-v"},
                 .command = RC::kNone,
                 .self = SelfRequest::kVersion},
        ArgsCase{.name = "version_after_global_flags",
                 .args = {"--root", "/r", "--version"},
                 .command = RC::kNone,
                 .root = "/r",
                 .self = SelfRequest::kVersion},
        ArgsCase{.name = "oci_rlimit_help",
                 .args = {"--oci-rlimit-help"},
                 .command = RC::kNone,
                 .self = SelfRequest::kHelp},
        ArgsCase{.name = "oci_rlimit_help_single_dash",
                 .args = {"-oci-rlimit-help"},
                 .command = RC::kNone,
                 .self = SelfRequest::kHelp},
        ArgsCase{.name = "oci_rlimit_help_wins_over_version",
                 .args = {"--version", "--oci-rlimit-help"},
                 .command = RC::kNone,
                 .self = SelfRequest::kHelp},
        // --help is the real runtime's: the wrapper passes it through.
        ArgsCase{.name = "help_is_the_runtimes", .args = {"--help"}, .command = RC::kNone},
        ArgsCase{.name = "version_after_subcommand_is_the_commands",
                 .args = {"create", "--version"},
                 .subcommand = "create",
                 .command = RC::kCreate},
        ArgsCase{.name = "root_named_version_is_a_value",
                 .args = {"--root", "--version", "state", "c1"},
                 .subcommand = "state",
                 .command = RC::kOther,
                 .root = "--version"},
        ArgsCase{.name = "help_flag_as_exec_argument_is_not_ours",
                 .args = {"exec", "c1", "sh", "--oci-rlimit-help"},
                 .subcommand = "exec",
                 .command = RC::kExec,
                 .id = "c1"},
        ArgsCase{.name = "double_dash_before_subcommand",
                 .args = {"--debug", "--", "create", "c1"},
                 .subcommand = "create",
                 .command = RC::kCreate,
                 .id = "c1"}),
    [](const auto& info) { return std::string(info.param.name); });

struct BadCase {
  const char* name;
  std::vector<std::string> args;
  const char* message;  // the whole error text
};

class ParseRuntimeArgsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseRuntimeArgsBad, FailsNamingTheFlag) {
  auto r = ParseRuntimeArgs(GetParam().args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, ParseRuntimeArgsBad,
    ::testing::Values(
        BadCase{"bundle_without_value",
                {"create", "--bundle"},
                "create flag \"--bundle\": missing value"},
        BadCase{"b_without_value", {"create", "-b"}, "create flag \"-b\": missing value"},
        BadCase{"process_without_value",
                {"exec", "--process"},
                "exec flag \"--process\": missing value"},
        BadCase{"root_without_value", {"--root"}, "global flag \"--root\": missing value"},
        BadCase{"log_without_value", {"--debug", "--log"}, "global flag \"--log\": missing value"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ParseCommandFlags, GlobalFlagsSurviveACommandError) {
  // The wrapper still needs --log to report the error to containerd.
  std::vector<std::string> args = {"--log", "/l", "--log-format", "json", "create", "-b"};
  auto g = ParseGlobalFlags(args);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->log, "/l");
  EXPECT_FALSE(ParseCommandFlags(args, g->subcommand_at + 1, g->subcommand).ok());
}

// Every flag of the wrapper's tables (runtime/args.h), in each of Go's
// spellings, the value joined by '=' or given apart: a flag added to a table
// is tested here without a new case.

// --name and -name, and a short name's -x and --x.
std::vector<std::string> GoSpellings(const FlagSpec& flag) {
  const std::string name(flag.name.substr(2));
  std::vector<std::string> out = {"--" + name, "-" + name};
  if (!flag.short_name.empty()) {
    const std::string short_name(flag.short_name.substr(1));
    out.insert(out.end(), {"-" + short_name, "--" + short_name});
  }
  return out;
}

// Each spelling, `value` joined and apart (none for a switch), before `rest`.
std::vector<std::vector<std::string>> Forms(const FlagSpec& flag, const std::string& value,
                                            const std::vector<std::string>& rest) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& spelled : GoSpellings(flag)) {
    std::vector<std::vector<std::string>> heads = {{spelled}};
    if (!flag.metavar.empty()) heads = {{spelled + "=" + value}, {spelled, value}};
    for (auto args : heads) {
      args.insert(args.end(), rest.begin(), rest.end());
      out.push_back(std::move(args));
    }
  }
  return out;
}

// All a parse gives but where the subcommand sits, which moves with the
// number of arguments.
auto Fields(const RuntimeArgs& r) {
  return std::tuple(r.global.root, r.global.log, r.global.log_format, r.global.subcommand,
                    r.global.command, r.global.self, r.command.bundle, r.command.process,
                    r.command.id);
}

// Every form of c's flag reads, and reads as the first; `check` says what
// each must give besides.
template <class Check>
void ExpectGoForms(const FlagFormCase& c, const std::string& value,
                   const std::vector<std::string>& front, const std::vector<std::string>& rest,
                   const Check& check) {
  std::optional<decltype(Fields(RuntimeArgs{}))> first;
  for (auto args : Forms(c.flag, value, rest)) {
    args.insert(args.begin(), front.begin(), front.end());
    std::string shown;
    for (const auto& a : args) shown += " " + a;
    SCOPED_TRACE("args:" + shown);
    auto r = ParseRuntimeArgs(args);
    ASSERT_TRUE(r.ok()) << r.error().Text();
    check(*r);
    if (!r->global.subcommand.empty()) {
      EXPECT_EQ(args.at(r->global.subcommand_at), r->global.subcommand);
    }
    if (!first) first = Fields(*r);
    EXPECT_EQ(Fields(*r), *first);
  }
}

class RuntimeGlobalFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

// The value, a subcommand's name, is the flag's: the subcommand is the next.
TEST_P(RuntimeGlobalFlagForms, EverySpellingReadsTheSame) {
  ExpectGoForms(GetParam(), "create", {}, {"state", "c1"}, [](const RuntimeArgs& r) {
    EXPECT_EQ(r.global.subcommand, "state");
    EXPECT_EQ(r.global.command, RC::kOther);
  });
}

INSTANTIATE_TEST_SUITE_P(Forms, RuntimeGlobalFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kRuncGlobalValueFlags, {})), CaseName{});

class RuntimeCommandFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

// The value, an id-like word, is the flag's: the id is the next argument.
TEST_P(RuntimeCommandFlagForms, EverySpellingReadsTheSame) {
  for (const char* sub : {"create", "run", "exec"}) {
    ExpectGoForms(GetParam(), "c9", {sub}, {"c1"}, [&](const RuntimeArgs& r) {
      EXPECT_EQ(r.global.subcommand, sub);
      EXPECT_EQ(r.command.id, "c1");
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, RuntimeCommandFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kRuncCommandValueFlags, {})),
                         CaseName{});

class RuntimeSelfFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

// The wrapper's own switches, before the subcommand.
TEST_P(RuntimeSelfFlagForms, EverySpellingReadsTheSame) {
  ExpectGoForms(GetParam(), "", {"--root", "/r"}, {"state", "c1"}, [](const RuntimeArgs& r) {
    EXPECT_NE(r.global.self, SelfRequest::kNone);
    EXPECT_EQ(r.global.root, "/r");
    EXPECT_EQ(r.global.subcommand, "state");
  });
}

INSTANTIATE_TEST_SUITE_P(Forms, RuntimeSelfFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kRuntimeSelfFlags, {})), CaseName{});

struct OwnFlagsCase {
  const char* name = "";
  std::vector<std::string> args{};
  std::optional<std::string> config{};
  size_t count = 0;
};

class ParseOwnFlagsGood : public ::testing::TestWithParam<OwnFlagsCase> {};

TEST_P(ParseOwnFlagsGood, TakesOnlyTheLeadingOwnFlags) {
  const OwnFlagsCase& c = GetParam();
  auto r = ParseOwnFlags(c.args);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(r->config, c.config);
  EXPECT_EQ(r->count, c.count);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, ParseOwnFlagsGood,
    ::testing::Values(OwnFlagsCase{.name = "none", .args = {"--root", "/r", "create"}},
                      OwnFlagsCase{.name = "empty", .args = {}},
                      OwnFlagsCase{.name = "space",
                                   .args = {"--config", "/c.toml", "create"},
                                   .config = "/c.toml",
                                   .count = 2},
                      OwnFlagsCase{.name = "equals",
                                   .args = {"--config=/c.toml", "--root", "/r", "create"},
                                   .config = "/c.toml",
                                   .count = 1},
                      OwnFlagsCase{.name = "last_wins",
                                   .args = {"--config", "/a", "--config=/b", "state", "c1"},
                                   .config = "/b",
                                   .count = 3},
                      OwnFlagsCase{.name = "runc_id_named_like_it",
                                   .args = {"state", "--config"},
                                   .config = std::nullopt,
                                   .count = 0}),
    CaseName{});

TEST(ParseOwnFlags, RefusesAMissingOrEmptyPath) {
  EXPECT_FALSE(ParseOwnFlags({"--config"}).ok());
  EXPECT_FALSE(ParseOwnFlags({"--config="}).ok());
}

// After runc's own flags --config would reach runc, which has no such flag.
TEST(ParseGlobalFlags, RefusesOurConfigFlagAmongTheRuntimes) {
  for (const char* form : {"--config", "-config", "--config=/x"}) {
    auto r = ParseGlobalFlags({"--root", "/r", form, "/x", "create"});
    ASSERT_FALSE(r.ok()) << form;
    EXPECT_NE(r.error().Text().find("go before the runtime's"), std::string::npos) << form;
  }
}

}  // namespace
}  // namespace ocirlimit
