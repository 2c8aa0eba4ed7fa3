#include "runtime_plan.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <map>

namespace ocirlimit {
namespace {

// ---- ResolveRuntime -------------------------------------------------------

struct ResolveCase {
  const char* name;
  std::vector<std::string> runtimes;
  std::string path_env;
  std::string want;  // empty: an error
};

// A file system: path -> inode. Inode 1 is ourselves.
const std::map<std::string, ino_t> kFiles = {
    {"/usr/sbin/runc", 10},
    {"/usr/bin/crun", 11},
    {"/opt/wrap/runc", 1},  // a symlink to oci-rlimit-runtime
    {"/usr/bin/oci-rlimit-runtime", 1},
    {"/opt/rt/kata", 12},
};

std::optional<FileId> FakeProbe(const std::string& path) {
  auto it = kFiles.find(path);
  if (it == kFiles.end()) return std::nullopt;
  return FileId{1, it->second};
}

class ResolveRuntimeTable : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveRuntimeTable, Resolves) {
  const ResolveCase& c = GetParam();
  auto r = ResolveRuntime(c.runtimes, c.path_env, FileId{1, 1}, FakeProbe);
  if (c.want.empty()) {
    ASSERT_FALSE(r.ok()) << *r;
    EXPECT_NE(r.error().Text().find("[runtime] runtimes"), std::string::npos) << r.error().Text();
  } else {
    ASSERT_TRUE(r.ok()) << r.error().Text();
    EXPECT_EQ(*r, c.want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ResolveRuntimeTable,
    ::testing::Values(
        ResolveCase{"first_on_path", {"runc", "crun"}, "/usr/bin:/usr/sbin", "/usr/sbin/runc"},
        ResolveCase{"second_when_first_missing", {"youki", "crun"}, "/usr/bin", "/usr/bin/crun"},
        ResolveCase{
            "order_of_config_wins", {"crun", "runc"}, "/usr/sbin:/usr/bin", "/usr/bin/crun"},
        ResolveCase{"absolute", {"/opt/rt/kata"}, "", "/opt/rt/kata"},
        ResolveCase{
            "absolute_missing_then_name", {"/opt/rt/nope", "runc"}, "/usr/sbin", "/usr/sbin/runc"},
        ResolveCase{"symlink_to_self_on_path_is_skipped",
                    {"runc"},
                    "/opt/wrap:/usr/sbin",
                    "/usr/sbin/runc"},
        ResolveCase{"self_by_absolute_path_is_skipped",
                    {"/usr/bin/oci-rlimit-runtime", "crun"},
                    "/usr/bin",
                    "/usr/bin/crun"},
        ResolveCase{"only_self", {"runc"}, "/opt/wrap", ""},
        ResolveCase{"nothing_found", {"not-runc", "also-not-runc"}, "/usr/sbin:/usr/bin", ""},
        ResolveCase{"empty_list", {}, "/usr/sbin", ""},
        ResolveCase{"relative_path_dirs_are_ignored", {"runc"}, ":.:usr/sbin", ""},
        ResolveCase{"trailing_slash_dir", {"runc"}, "/usr/sbin/", "/usr/sbin/runc"},
        ResolveCase{"relative_entry_is_an_error", {"./runc", "runc"}, "/usr/sbin", ""}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- flavor ---------------------------------------------------------------

TEST(Flavor, FromName) {
  EXPECT_EQ(FlavorFromName("/usr/sbin/runc"), RuntimeFlavor::kRunc);
  EXPECT_EQ(FlavorFromName("crun"), RuntimeFlavor::kCrun);
  EXPECT_EQ(FlavorFromName("/usr/bin/crun"), RuntimeFlavor::kCrun);
  EXPECT_EQ(FlavorFromName("/tmp/crun-here.sh"), std::nullopt);
  EXPECT_EQ(FlavorFromName("/usr/bin/docker-runc"), std::nullopt);
}

TEST(Flavor, FromVersion) {
  EXPECT_EQ(FlavorFromVersion("crun version 1.8.1\ncommit: abc\nspec: 1.0.0\n"),
            RuntimeFlavor::kCrun);
  EXPECT_EQ(FlavorFromVersion("runc version 1.1.5\ncommit: v1.1.5\nspec: 1.0.2-dev\n"),
            RuntimeFlavor::kRunc);
  EXPECT_EQ(FlavorFromVersion("youki version 0.3.0\n"), RuntimeFlavor::kRunc);
  EXPECT_EQ(FlavorFromVersion(""), RuntimeFlavor::kRunc);
  EXPECT_EQ(FlavorFromVersion("crunchy version 1\n"), RuntimeFlavor::kRunc);
}

// ---- bundle spec ----------------------------------------------------------

const Rlimit kMemlock1M4M{RLIMIT_MEMLOCK, 1 << 20, 4 << 20};

TEST(MergeBundleSpec, NothingConfiguredLeavesTheFileAlone) {
  auto r = MergeBundleSpec("not even json", "/b/config.json", {});
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_FALSE(r->has_value());
}

TEST(MergeBundleSpec, KeepsEveryOtherFieldAnd64BitValues) {
  const std::string in =
      R"({"ociVersion":"1.0.2","x-unknown":{"z":1,"a":[1.5,null]},"process":{"args":["sh"],)"
      R"("rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024},)"
      R"({"type":"RLIMIT_MEMLOCK","hard":8388608,"soft":2097152,"x-extra":true}]},)"
      R"("linux":{"resources":{"memory":{"limit":9223372036854775807}}}})";
  auto r = MergeBundleSpec(in, "/b/config.json", {kMemlock1M4M, {RLIMIT_CORE, 0, 0}});
  ASSERT_TRUE(r.ok()) << r.error().Text();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r,
            R"({"ociVersion":"1.0.2","x-unknown":{"z":1,"a":[1.5,null]},"process":{"args":["sh"],)"
            R"("rlimits":[{"type":"RLIMIT_NOFILE","hard":18446744073709551615,"soft":1024},)"
            R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576,"x-extra":true},)"
            R"({"type":"RLIMIT_CORE","hard":0,"soft":0}]},)"
            R"("linux":{"resources":{"memory":{"limit":9223372036854775807}}}})");
}

TEST(MergeBundleSpec, UnlimitedRoundTrips) {
  auto r = MergeBundleSpec(R"({"process":{}})", "/b/config.json",
                           {{RLIMIT_MEMLOCK, kRlimInfinity, kRlimInfinity}});
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(**r, R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":18446744073709551615,)"
                 R"("soft":18446744073709551615}]}})");
}

struct BadSpecCase {
  const char* name;
  const char* text;
  const char* message;
};

class MergeBundleSpecBad : public ::testing::TestWithParam<BadSpecCase> {};

TEST_P(MergeBundleSpecBad, NamesTheFileAndField) {
  auto r = MergeBundleSpec(GetParam().text, "/b/config.json", {kMemlock1M4M});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MergeBundleSpecBad,
    ::testing::Values(
        BadSpecCase{"not_json", "{", "\"/b/config.json\": not valid JSON"},
        BadSpecCase{"not_object", "[]", "\"/b/config.json\": must be a JSON object"},
        BadSpecCase{"process_not_object", R"({"process":3})",
                    "\"/b/config.json\": process: must be an object"},
        BadSpecCase{"rlimits_not_array", R"({"process":{"rlimits":{}}})",
                    "\"/b/config.json\": process.rlimits: must be an array"},
        BadSpecCase{"negative_soft",
                    R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":0}]}})",
                    "\"/b/config.json\": process.rlimits[0].soft: -1 is not an unsigned integer"},
        BadSpecCase{"unknown_type",
                    R"({"process":{"rlimits":[{"type":"RLIMIT_X","soft":1,"hard":1}]}})",
                    "\"/b/config.json\": process.rlimits[0].type: unknown rlimit \"RLIMIT_X\""}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- exec process ---------------------------------------------------------

struct ExecCase {
  const char* name;
  const char* process;  // the --process file
  RuntimeFlavor flavor;
  const char* container;  // the container's config.json, used only when needed
  bool needs_container;
  const char* want_rlimits;  // process.rlimits afterwards
};

class ExecPlan : public ::testing::TestWithParam<ExecCase> {};

TEST_P(ExecPlan, GivesOursAndKeepsTheRest) {
  const ExecCase& c = GetParam();
  auto process = ParseProcessFile(c.process, "/tmp/p.json");
  ASSERT_TRUE(process.ok()) << process.error().Text();
  EXPECT_EQ(NeedsContainerRlimits(*process, c.flavor), c.needs_container);
  Json container = Json::parse(c.container);
  ASSERT_TRUE(MergeExecProcess(*process, "/tmp/p.json", c.needs_container ? &container : nullptr,
                               {kMemlock1M4M})
                  .ok());
  EXPECT_EQ((*process)["rlimits"].dump(), c.want_rlimits);
  EXPECT_EQ((*process)["args"].dump(), R"(["cat","/proc/self/limits"])");
}

constexpr const char* kContainer =
    R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024},)"
    R"({"type":"RLIMIT_MEMLOCK","hard":8388608,"soft":8388608}]}})";

INSTANTIATE_TEST_SUITE_P(
    Table, ExecPlan,
    ::testing::Values(
        ExecCase{"runc_empty_copies_the_container_list",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[]})", RuntimeFlavor::kRunc,
                 kContainer, true,
                 R"([{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024},)"
                 R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"runc_missing_copies_the_container_list",
                 R"({"args":["cat","/proc/self/limits"]})", RuntimeFlavor::kRunc, kContainer, true,
                 R"([{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024},)"
                 R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"runc_null_with_container_without_rlimits",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":null})", RuntimeFlavor::kRunc,
                 R"({"process":{}})", true,
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"runc_own_list_is_merged",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[{"type":"RLIMIT_NOFILE",)"
                 R"("hard":512,"soft":512}]})",
                 RuntimeFlavor::kRunc, kContainer, false,
                 R"([{"type":"RLIMIT_NOFILE","hard":512,"soft":512},)"
                 R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"crun_empty_gets_only_ours",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[]})", RuntimeFlavor::kCrun,
                 kContainer, false, R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"crun_missing_gets_only_ours", R"({"args":["cat","/proc/self/limits"]})",
                 RuntimeFlavor::kCrun, kContainer, false,
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"crun_own_list_same_type_replaced",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[{"type":"RLIMIT_MEMLOCK",)"
                 R"("hard":8388608,"soft":2097152},{"type":"RLIMIT_NOFILE","hard":512,)"
                 R"("soft":512}]})",
                 RuntimeFlavor::kCrun, kContainer, false,
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576},)"
                 R"({"type":"RLIMIT_NOFILE","hard":512,"soft":512}])"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ParseProcessFile, NamesTheFileAndField) {
  auto bad = ParseProcessFile(R"({"rlimits":[{"type":"RLIMIT_CORE","soft":"x","hard":0}]})",
                              "/tmp/p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Text(),
            "--process \"/tmp/p.json\": process.rlimits[0].soft: \"x\" is not an unsigned "
            "integer");
  auto garbage = ParseProcessFile("nope", "/tmp/p.json");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().Text(), "--process \"/tmp/p.json\": not valid JSON");
}

// ---- state and log line ---------------------------------------------------

TEST(BundleFromState, ReadsTheBundle) {
  auto b = BundleFromState(
      R"({"ociVersion":"1.0.2","id":"c1","pid":42,"status":"running","bundle":"/b/c1",)"
      R"("rootfs":"/b/c1/rootfs"})",
      "c1");
  ASSERT_TRUE(b.ok()) << b.error().Text();
  EXPECT_EQ(*b, "/b/c1");
  auto none = BundleFromState(R"({"id":"c1"})", "c1");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().Text(), "state of container \"c1\": no \"bundle\"");
}

TEST(ErrorLogLine, IsRuncShapedJson) {
  EXPECT_EQ(ErrorLogLine("2024-01-02T03:04:05Z", "oci-rlimit-runtime: bad \"x\"\n"),
            R"({"level":"error","msg":"oci-rlimit-runtime: bad \"x\"\n",)"
            R"("time":"2024-01-02T03:04:05Z"})");
  // Not UTF-8: still one line of valid JSON.
  std::string line = ErrorLogLine("t", std::string("path \xff"));
  EXPECT_FALSE(Json::parse(line, nullptr, false).is_discarded()) << line;
}

}  // namespace
}  // namespace ocirlimit
