#include "nri/args.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/testing/case_name.h"
#include "tests/testing/flag_forms.h"

namespace ocirlimit::nri {
namespace {

struct ArgsCase {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string error;  // empty: ok
  std::string socket = kDefaultSocket;
  std::string plugin = "10-oci-rlimit";  // INDEX-NAME
  int fd = -1;
  std::string config = "";
  std::string status_file = "/run/oci-rlimit/nri.status";
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }

class ArgsTable : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(ArgsTable, Parses) {
  const ArgsCase& c = GetParam();
  auto env = [&](std::string_view k) -> std::optional<std::string> {
    auto it = c.env.find(std::string(k));
    if (it == c.env.end()) return std::nullopt;
    return it->second;
  };
  auto a = ParseNriArgs(c.args, env);
  if (!c.error.empty()) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().Text(), c.error);
    return;
  }
  ASSERT_TRUE(a.ok()) << a.error().Text();
  EXPECT_EQ(a->socket, c.socket);
  EXPECT_EQ(a->index + "-" + a->name, c.plugin);
  EXPECT_EQ(a->socket_fd.value_or(-1), c.fd);
  EXPECT_EQ(a->config.value_or(""), c.config);
  EXPECT_EQ(a->status_file, c.status_file);
}

INSTANTIATE_TEST_SUITE_P(
    Nri, ArgsTable,
    ::testing::Values(
        ArgsCase{"Defaults", {}, {}, ""},
        ArgsCase{"AllFlags",
                 {"--config", "/c.toml", "--socket", "/s", "--name", "rl", "--index", "05"},
                 {},
                 "",
                 "/s",
                 "05-rl",
                 -1,
                 "/c.toml"},
        ArgsCase{"StatusFile",
                 {"--status-file", "/tmp/s.status"},
                 {},
                 "",
                 kDefaultSocket,
                 "10-oci-rlimit",
                 -1,
                 "",
                 "/tmp/s.status"},
        ArgsCase{"EqualsForms",
                 {"--config=/c", "--socket=/s", "--name=oci-rlimit", "--index=99"},
                 {},
                 "",
                 "/s",
                 "99-oci-rlimit",
                 -1,
                 "/c"},
        ArgsCase{"PreRegistered",
                 {},
                 {{"NRI_PLUGIN_SOCKET", "3"},
                  {"NRI_PLUGIN_NAME", "oci-rlimit"},
                  {"NRI_PLUGIN_IDX", "42"}},
                 "",
                 kDefaultSocket,
                 "42-oci-rlimit",
                 3},
        ArgsCase{"SocketFlagBeatsEnv", {"--socket", "/s"}, {{"NRI_PLUGIN_SOCKET", "3"}}, "", "/s"},
        ArgsCase{"NameEnvIgnoredWhenExternal", {}, {{"NRI_PLUGIN_NAME", "x"}}, ""},
        ArgsCase{"UnknownFlag", {"--sock", "/s"}, {}, "unknown flag \"--sock\""},
        ArgsCase{"StrayArgument", {"run"}, {}, "unexpected argument \"run\""},
        ArgsCase{"SwitchWithValue",
                 {"--version=2"},
                 {},
                 "--version: takes no value, got \"--version=2\""},
        ArgsCase{"MissingName", {"--name"}, {}, "--name: missing NAME"},
        ArgsCase{"EmptyIndex", {"--index", ""}, {}, "--index: empty NN"},
        ArgsCase{"MissingValue", {"--socket"}, {}, "--socket: missing PATH"},
        ArgsCase{"EmptyValue", {"--config="}, {}, "--config: empty PATH"},
        ArgsCase{
            "OneDigitIndex", {"--index", "5"}, {}, "--index \"5\": must be two digits, e.g. 10"},
        ArgsCase{"BadName",
                 {"--name", "a b"},
                 {},
                 "--name \"a b\": use letters, digits, '-', '_' or '.'"},
        ArgsCase{"BadEnvIndex",
                 {},
                 {{"NRI_PLUGIN_SOCKET", "3"}, {"NRI_PLUGIN_IDX", "x1"}},
                 "--index \"x1\": must be two digits, e.g. 10"},
        ArgsCase{"BadMetricsAddress",
                 {"--metrics-address", "localhost:9464"},
                 {},
                 "--metrics-address \"localhost:9464\": the host must be an IP address "
                 "(127.0.0.1, [::1]), not a name"},
        ArgsCase{"BadSocketFd",
                 {},
                 {{"NRI_PLUGIN_SOCKET", "three"}},
                 "NRI_PLUGIN_SOCKET \"three\": not a file descriptor number"}),
    [](const auto& info) { return info.param.name; });

TEST(NriArgs, HelpAndVersion) {
  auto none = [](std::string_view) { return std::optional<std::string>(); };
  EXPECT_EQ(ParseNriArgs({"--bogus", "--help"}, none).ok(), false);
  EXPECT_EQ(ParseNriArgs({"--help"}, none)->mode, NriMode::kHelp);
  EXPECT_EQ(ParseNriArgs({"--version"}, none)->mode, NriMode::kVersion);
}

// The `node` label: --node-name wins over NODE_NAME (the DaemonSet's
// spec.nodeName); neither: empty (flow.cc then takes the host name).
TEST(NriArgs, NodeNameFromTheFlagElseTheEnvironment) {
  auto env = [](std::string_view k) {
    return k == "NODE_NAME" ? std::optional<std::string>("node-a") : std::nullopt;
  };
  auto none = [](std::string_view) { return std::optional<std::string>(); };
  EXPECT_EQ(ParseNriArgs({}, env)->node_name, "node-a");
  EXPECT_EQ(ParseNriArgs({"--node-name", "node-b"}, env)->node_name, "node-b");
  EXPECT_EQ(ParseNriArgs({}, none)->node_name, "");
}

// Every flag of kNriFlags, both ways (tests/testing/flag_forms.h). A flag
// added to the table without a sample here fails.
const FlagSample kNriSamples[] = {
    {.flag = "--config", .value = "/etc/x.toml"},
    {.flag = "--socket", .value = "/run/n.sock"},
    {.flag = "--name", .value = "limits"},
    {.flag = "--index", .value = "42"},
    {.flag = "--status-file", .value = "/run/x.status"},
    {.flag = "--metrics-address", .value = "127.0.0.1:9464"},
    {.flag = "--node-name", .value = "gpu-1"},
};

class NriFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

TEST_P(NriFlagForms, BothFormsReadTheSame) {
  ExpectFlagForms(GetParam(), [](const std::vector<std::string>& args) {
    return ParseNriArgs(args, [](std::string_view) { return std::optional<std::string>(); });
  });
}

INSTANTIATE_TEST_SUITE_P(Nri, NriFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kNriFlags, kNriSamples)), CaseName{});

}  // namespace
}  // namespace ocirlimit::nri
