#include "runtime/plan.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <map>

#include "tests/testing/case_name.h"

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
  const char* process;       // the --process file
  const char* want_rlimits;  // process.rlimits afterwards
};

class ExecPlan : public ::testing::TestWithParam<ExecCase> {};

TEST_P(ExecPlan, MergesIntoTheProcessFilesOwnList) {
  const ExecCase& c = GetParam();
  auto process = ParseProcessFile(c.process, "/tmp/p.json");
  ASSERT_TRUE(process.ok()) << process.error().Text();
  ASSERT_TRUE(MergeExecProcess(*process, "/tmp/p.json", {kMemlock1M4M}).ok());
  EXPECT_EQ((*process)["rlimits"].dump(), c.want_rlimits);
  EXPECT_EQ((*process)["args"].dump(), R"(["cat","/proc/self/limits"])");
}

// runc 1.1 and crun 1.8 alike give an exec'd process exactly this list, so
// the container's spec list is never copied in (runtime_test.cc proves it).
INSTANTIATE_TEST_SUITE_P(
    Table, ExecPlan,
    ::testing::Values(
        ExecCase{"empty_list_gets_only_ours",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[]})",
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"missing_list_gets_only_ours", R"({"args":["cat","/proc/self/limits"]})",
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"null_list_gets_only_ours",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":null})",
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"own_list_is_kept_and_ours_appended",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[{"type":"RLIMIT_NOFILE",)"
                 R"("hard":512,"soft":512}]})",
                 R"([{"type":"RLIMIT_NOFILE","hard":512,"soft":512},)"
                 R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"},
        ExecCase{"own_same_type_is_replaced_in_place",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[{"type":"RLIMIT_MEMLOCK",)"
                 R"("hard":8388608,"soft":2097152},{"type":"RLIMIT_NOFILE","hard":512,)"
                 R"("soft":512}]})",
                 R"([{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576},)"
                 R"({"type":"RLIMIT_NOFILE","hard":512,"soft":512}])"},
        ExecCase{"unlimited_64_bit_values_round_trip",
                 R"({"args":["cat","/proc/self/limits"],"rlimits":[{"type":"RLIMIT_CORE",)"
                 R"("hard":18446744073709551615,"soft":18446744073709551615}]})",
                 R"([{"type":"RLIMIT_CORE","hard":18446744073709551615,)"
                 R"("soft":18446744073709551615},)"
                 R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}])"}),
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

// ---- log line ---------------------------------------------------

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
