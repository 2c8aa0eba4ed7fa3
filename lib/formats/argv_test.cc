#include "formats/argv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr FlagSpec kSpecs[] = {
    {.name = "--config", .metavar = "PATH"},
    {.name = "--json"},
    {.name = "--help", .short_name = "-h"},
    {.name = "--label", .metavar = "TEXT", .empty_ok = true},
};

// Items as "FLAG=VALUE" for a flag with a value, "FLAG" for a switch, and
// "VALUE" for a positional; or the error's text.
std::string Read(const std::vector<std::string>& args) {
  ArgReader reader(args, kSpecs);
  std::string out;
  for (;;) {
    auto item = reader.Next();
    if (!item) return "error: " + item.error().Text();
    if (!*item) return out;
    if (!out.empty()) out += " ";
    const ArgItem& it = **item;
    if (!it.flag) {
      out += it.value;
    } else if (it.flag->metavar.empty()) {
      out += std::string(it.flag->name);
    } else {
      out += std::string(it.flag->name) + "=" + it.value;
    }
  }
}

struct ArgvCase {
  const char* name;
  std::vector<std::string> args;
  std::string want;
};

class ArgvTable : public ::testing::TestWithParam<ArgvCase> {};

TEST_P(ArgvTable, Reads) { EXPECT_EQ(Read(GetParam().args), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Items, ArgvTable,
    ::testing::Values(
        ArgvCase{"Nothing", {}, ""},
        ArgvCase{"SeparateValue", {"--config", "/x.toml"}, "--config=/x.toml"},
        ArgvCase{"EqualsValue", {"--config=/x.toml"}, "--config=/x.toml"},
        ArgvCase{"EqualsValueKeepsLaterEquals", {"--config=/a=b"}, "--config=/a=b"},
        ArgvCase{"ValueMayStartWithDash", {"--config", "-x"}, "--config=-x"},
        ArgvCase{"Switch", {"--json"}, "--json"}, ArgvCase{"ShortName", {"-h"}, "--help"},
        ArgvCase{"Positionals", {"validate", "x"}, "validate x"},
        ArgvCase{"SingleDashIsUnknown", {"-"}, "error: unknown flag \"-\""},
        ArgvCase{
            "Mixed", {"explain", "--json", "--config", "/c", "b"}, "explain --json --config=/c b"},
        ArgvCase{"EmptyAllowedWhereSaid", {"--label="}, "--label="},
        ArgvCase{"EmptySeparateAllowedWhereSaid", {"--label", ""}, "--label="},
        ArgvCase{"MissingValue", {"--config"}, "error: --config: missing PATH"},
        ArgvCase{"EmptyValue", {"--config="}, "error: --config: empty PATH"},
        ArgvCase{"EmptySeparateValue", {"--config", ""}, "error: --config: empty PATH"},
        ArgvCase{
            "SwitchWithValue", {"--json=1"}, "error: --json: takes no value, got \"--json=1\""},
        ArgvCase{"UnknownFlag", {"--jsn"}, "error: unknown flag \"--jsn\""},
        ArgvCase{"UnknownEqualsFlag", {"--conf=/x"}, "error: unknown flag \"--conf=/x\""},
        ArgvCase{"UnknownShort", {"-x"}, "error: unknown flag \"-x\""},
        ArgvCase{"ShortWithEquals", {"-h=1"}, "error: unknown flag \"-h=1\""},
        ArgvCase{"StopsAtTheFirstError",
                 {"--json", "--nope", "--config"},
                 "error: unknown flag \"--nope\""}),
    CaseName{});

TEST(LastFlagValue, ReadsAnotherProgramsArgvAsItDoes) {
  EXPECT_EQ(LastFlagValue({"--config", "/a", "--config=/b"}, kSpecs, "--config"), "/b");
  EXPECT_EQ(LastFlagValue({"--label", "--config", "--config", "/c"}, kSpecs, "--config"), "/c")
      << "the value of --label is \"--config\", not a flag";
  EXPECT_EQ(LastFlagValue({"--json"}, kSpecs, "--config"), std::nullopt);
  EXPECT_EQ(LastFlagValue({"--config=/a", "--bogus"}, kSpecs, "--config"), std::nullopt)
      << "an argv the program itself refuses says nothing";
}

}  // namespace
}  // namespace ocirlimit
