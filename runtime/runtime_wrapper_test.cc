// The wrapper's flow against a fake world: what it writes, what it runs,
// and that a failure before the exec means no write and no exec.
#include "runtime/runtime_wrapper.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <map>

#include "runtime/runtime_plan.h"

namespace ocirlimit {
namespace {

class FakeOps final : public RuntimeOps {
 public:
  Result<Config> config = Config{};
  std::map<std::string, std::string> files;
  std::map<std::string, ino_t> executables = {{"/usr/sbin/runc", 10}, {"/usr/bin/crun", 11}};
  bool fail_writes = false;
  std::vector<std::string> load_warnings;
  bool initial_userns = true;
  std::map<int, std::pair<uint64_t, uint64_t>> own;  // resource -> our soft, hard

  std::vector<std::string> written;  // paths
  std::vector<std::string> stderr_lines;
  std::vector<std::pair<std::string, std::string>> log_lines;
  std::optional<std::vector<std::string>> exec_argv;
  std::string exec_path;

  Result<LoadedConfig> LoadConfig() override {
    if (!config) return config.error();
    return LoadedConfig{*config, load_warnings};
  }
  bool InInitialUserNamespace() override { return initial_userns; }
  Result<Rlimit> OwnLimit(int resource) override {
    auto it = own.find(resource);
    if (it == own.end()) return Rlimit{resource, kRlimInfinity, kRlimInfinity};
    return Rlimit{resource, it->second.first, it->second.second};
  }
  std::optional<std::string> Getenv(std::string_view name) override {
    if (name == "PATH") return "/usr/sbin:/usr/bin";
    return std::nullopt;
  }
  std::optional<FileId> Probe(const std::string& path) override {
    auto it = executables.find(path);
    if (it == executables.end()) return std::nullopt;
    return FileId{1, it->second};
  }
  Result<FileId> Self() override { return FileId{1, 1}; }
  Result<std::string> ReadFile(const std::string& path, size_t /*max_bytes*/) override {
    auto it = files.find(path);
    if (it == files.end()) return MakeError("open \"" + path + "\"", ENOENT);
    return it->second;
  }
  Status ReplaceFile(const std::string& path, const std::string& content) override {
    if (fail_writes) return MakeError("rename to \"" + path + "\"", EROFS);
    written.push_back(path);
    files[path] = content;
    return Ok{};
  }
  Status AppendLine(const std::string& path, const std::string& line) override {
    log_lines.emplace_back(path, line);
    return Ok{};
  }
  std::string Now() override { return "2024-01-02T03:04:05Z"; }
  void Stderr(const std::string& line) override { stderr_lines.push_back(line); }
  Error Exec(const std::string& path, const std::vector<std::string>& argv) override {
    exec_path = path;
    exec_argv = argv;
    return MakeError("exec \"" + path + "\"", 0);  // a real exec would not return
  }
};

Config WithMemlock(std::vector<std::string> runtimes = {"runc", "crun"}) {
  Config c;
  c.rlimits = {{RLIMIT_MEMLOCK, 1 << 20, 4 << 20}};
  c.runtimes = std::move(runtimes);
  return c;
}

constexpr const char* kSpec =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_NOFILE",)"
    R"("hard":1024,"soft":1024}]}})";
constexpr const char* kMerged =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_NOFILE",)"
    R"("hard":1024,"soft":1024},{"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}]}})";

TEST(RuntimeWrapper, CreateMergesThenExecsTheRuntimeWithTheSameArgs) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/b/config.json"] = kSpec;
  std::vector<std::string> argv = {"oci-rlimit-runtime", "--root", "/r", "create",
                                   "--bundle",           "/b",     "c1"};
  RunRuntimeWrapper(argv, ops);
  EXPECT_EQ(ops.written, std::vector<std::string>{"/b/config.json"});
  EXPECT_EQ(ops.files["/b/config.json"], kMerged);
  ASSERT_TRUE(ops.exec_argv);
  EXPECT_EQ(ops.exec_path, "/usr/sbin/runc");
  argv[0] = "/usr/sbin/runc";
  EXPECT_EQ(*ops.exec_argv, argv);
}

TEST(RuntimeWrapper, RunUsesTheCwdBundleByDefault) {
  FakeOps ops;
  ops.config = WithMemlock({"crun"});
  ops.files["./config.json"] = kSpec;
  RunRuntimeWrapper({"oci-rlimit-runtime", "run", "c1"}, ops);
  EXPECT_EQ(ops.files["./config.json"], kMerged);
  EXPECT_EQ(ops.exec_path, "/usr/bin/crun");
}

TEST(RuntimeWrapper, NothingConfiguredTouchesNothing) {
  FakeOps ops;  // no rlimits, and no config.json either
  RunRuntimeWrapper({"oci-rlimit-runtime", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_TRUE(ops.written.empty());
  EXPECT_TRUE(ops.exec_argv.has_value());
}

TEST(RuntimeWrapper, OtherSubcommandsPassStraightThrough) {
  for (const char* sub : {"start", "state", "delete", "kill", "features", "ps"}) {
    FakeOps ops;
    ops.config = WithMemlock();
    std::vector<std::string> argv = {"x", "--root", "/r", sub, "--bundle", "/nope", "c1"};
    RunRuntimeWrapper(argv, ops);
    EXPECT_TRUE(ops.written.empty()) << sub;
    argv[0] = "/usr/sbin/runc";
    ASSERT_TRUE(ops.exec_argv) << sub;
    EXPECT_EQ(*ops.exec_argv, argv) << sub;
  }
}

// A failure before the exec: no write, no exec, one line on stderr, and the
// same line in a --log-format json file.
struct FailCase {
  const char* name;
  std::function<void(FakeOps&)> setup;
  std::vector<std::string> argv;
  const char* message;
};

class RuntimeWrapperFails : public ::testing::TestWithParam<FailCase> {};

TEST_P(RuntimeWrapperFails, NoWriteNoExec) {
  const FailCase& c = GetParam();
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/b/config.json"] = kSpec;
  c.setup(ops);
  std::map<std::string, std::string> before = ops.files;
  EXPECT_NE(RunRuntimeWrapper(c.argv, ops), 0);
  EXPECT_FALSE(ops.exec_argv.has_value()) << "the runtime must not run";
  EXPECT_TRUE(ops.written.empty());
  EXPECT_EQ(ops.files, before);
  const std::string msg = std::string("oci-rlimit-runtime: ") + c.message;
  EXPECT_EQ(ops.stderr_lines, std::vector<std::string>{msg});
  ASSERT_EQ(ops.log_lines.size(), 1u);
  EXPECT_EQ(ops.log_lines[0].first, "/log.json");
  EXPECT_EQ(ops.log_lines[0].second, ErrorLogLine("2024-01-02T03:04:05Z", msg));
}

const std::vector<std::string> kCreate = {"oci-rlimit-runtime", "--log", "/log.json",
                                          "--log-format",       "json",  "create",
                                          "--bundle",           "/b",    "c1"};
const std::vector<std::string> kExecRunc = {
    "oci-rlimit-runtime", "--root",       "/r",       "--log",
    "/log.json",          "--log-format", "json",     "exec",
    "--process",          "/p.json",      "--detach", "c1"};

INSTANTIATE_TEST_SUITE_P(
    Table, RuntimeWrapperFails,
    ::testing::Values(
        FailCase{"broken_config",
                 [](FakeOps& o) {
                   o.config = MakeError("config \"/c.toml\": rlimits: unknown name \"memlok\"");
                 },
                 kCreate, "config \"/c.toml\": rlimits: unknown name \"memlok\""},
        FailCase{"no_runtime", [](FakeOps& o) { o.executables.clear(); }, kCreate,
                 "[runtime] runtimes [\"runc\", \"crun\"]: none is an executable other than "
                 "oci-rlimit-runtime (PATH=/usr/sbin:/usr/bin)"},
        FailCase{"missing_config_json", [](FakeOps& o) { o.files.clear(); }, kCreate,
                 "create: open \"/b/config.json\": No such file or directory"},
        FailCase{"malformed_config_json", [](FakeOps& o) { o.files["/b/config.json"] = "{"; },
                 kCreate, "create: \"/b/config.json\": not valid JSON"},
        FailCase{"modify_error",
                 [](FakeOps& o) {
                   o.files["/b/config.json"] =
                       R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","soft":1}]}})";
                 },
                 kCreate, "create: \"/b/config.json\": process.rlimits[0].hard: missing"},
        FailCase{"write_error", [](FakeOps& o) { o.fail_writes = true; }, kCreate,
                 "create: rename to \"/b/config.json\": Read-only file system"},
        FailCase{"bundle_flag_without_value",
                 [](FakeOps&) {},
                 {"oci-rlimit-runtime", "--log", "/log.json", "--log-format", "json", "create",
                  "--bundle"},
                 "create flag \"--bundle\": missing value"},
        FailCase{"malformed_process_file",
                 [](FakeOps& o) { o.files["/p.json"] = R"({"rlimits":7})"; }, kExecRunc,
                 "exec: --process \"/p.json\": process.rlimits: must be an array"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RuntimeWrapper, NoLogLineWithoutJsonLogFormat) {
  FakeOps ops;
  ops.config = MakeError("config \"/c.toml\": bad");
  RunRuntimeWrapper({"x", "--log", "/log", "create", "c1"}, ops);
  EXPECT_EQ(ops.stderr_lines.size(), 1u);
  EXPECT_TRUE(ops.log_lines.empty());
  EXPECT_FALSE(ops.exec_argv.has_value());
}

// Whatever the runtime, only the process file is read and written: no
// `state`, no container spec.
TEST(RuntimeWrapper, ExecMergesIntoTheProcessFileOnly) {
  for (const auto& rt : {std::string("runc"), std::string("/opt/crun-wrapper.sh")}) {
    FakeOps ops;
    ops.config = WithMemlock({rt});
    ops.executables["/opt/crun-wrapper.sh"] = 12;
    ops.files["/p.json"] = R"({"args":["cat"],"rlimits":[]})";
    std::vector<std::string> argv = kExecRunc;
    RunRuntimeWrapper(argv, ops);
    EXPECT_EQ(ops.written, std::vector<std::string>{"/p.json"}) << rt;
    EXPECT_EQ(ops.files["/p.json"],
              R"({"args":["cat"],"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":4194304,)"
              R"("soft":1048576}]})")
        << rt;
    ASSERT_TRUE(ops.exec_argv) << rt;
    argv[0] = ops.exec_path;
    EXPECT_EQ(*ops.exec_argv, argv) << rt;
  }
}

TEST(RuntimeWrapper, ExecKeepsTheProcessFilesOwnList) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/p.json"] = R"({"rlimits":[{"type":"RLIMIT_NOFILE","hard":512,"soft":512}]})";
  RunRuntimeWrapper({"x", "exec", "-p", "/p.json", "c1"}, ops);
  EXPECT_EQ(ops.files["/p.json"], R"({"rlimits":[{"type":"RLIMIT_NOFILE","hard":512,"soft":512},)"
                                  R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576}]})");
}

TEST(RuntimeWrapper, ExecWithoutProcessFilePassesThrough) {
  FakeOps ops;
  ops.config = WithMemlock();
  RunRuntimeWrapper({"x", "exec", "c1", "sh", "-p", "/p.json"}, ops);
  EXPECT_TRUE(ops.written.empty());
  EXPECT_TRUE(ops.exec_argv.has_value());
}

// --- A rootless caller (not the initial user namespace) ---

Config WithUnlimitedMemlock() {
  Config c;
  c.rlimits = {{RLIMIT_MEMLOCK, kRlimInfinity, kRlimInfinity}};
  c.log_file = "/log";
  return c;
}

struct RootlessCase {
  std::string name;
  std::vector<std::string> argv;
  std::string file;      // the file the wrapper edits
  std::string contents;  // before
  std::string written;   // after
};

void PrintTo(const RootlessCase& c, std::ostream* os) { *os << c.name; }

// The wrapper's warnings, without the fake exec's failure line.
std::vector<std::string> Warnings(const FakeOps& ops) {
  std::vector<std::string> out;
  for (const auto& l : ops.stderr_lines) {
    if (l.find("warning") != std::string::npos) out.push_back(l);
  }
  return out;
}

class RuntimeWrapperRootless : public ::testing::TestWithParam<RootlessCase> {};

TEST_P(RuntimeWrapperRootless, ClampsToOurOwnHardLimitWithOneWarningAndExecs) {
  FakeOps ops;
  ops.config = WithUnlimitedMemlock();
  ops.initial_userns = false;
  ops.own[RLIMIT_MEMLOCK] = {1 << 20, 8 << 20};
  ops.files[GetParam().file] = GetParam().contents;
  RunRuntimeWrapper(GetParam().argv, ops);
  EXPECT_EQ(ops.files[GetParam().file], GetParam().written);
  ASSERT_EQ(Warnings(ops).size(), 1u);
  EXPECT_NE(Warnings(ops)[0].find("oci-rlimit-runtime: warning: rootless (not the initial user "
                                  "namespace): hard limits cannot be raised, so memlock "
                                  "unlimited:unlimited -> 8388608:8388608"),
            std::string::npos)
      << Warnings(ops)[0];
  ASSERT_EQ(ops.log_lines.size(), 1u) << "the log-file line names the warning";
  EXPECT_NE(ops.log_lines[0].second.find("id=\"c1\" warning="), std::string::npos)
      << ops.log_lines[0].second;
  EXPECT_TRUE(ops.exec_argv.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    RuntimeWrapper, RuntimeWrapperRootless,
    ::testing::Values(
        RootlessCase{"Create",
                     {"x", "create", "--bundle", "/b", "c1"},
                     "/b/config.json",
                     R"({"process":{"rlimits":[]}})",
                     R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":8388608,)"
                     R"("soft":8388608}]}})"},
        RootlessCase{"SameTypeEntryReplacedByTheClampedValue",
                     {"x", "run", "--bundle", "/b", "c1"},
                     "/b/config.json",
                     R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":16777216,)"
                     R"("soft":2097152}]}})",
                     R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":8388608,)"
                     R"("soft":8388608}]}})"},
        RootlessCase{"Exec",
                     {"x", "exec", "--process", "/p.json", "c1"},
                     "/p.json",
                     R"({"args":["cat"]})",
                     R"({"args":["cat"],"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":8388608,)"
                     R"("soft":8388608}]})"}),
    [](const auto& info) { return info.param.name; });

TEST(RuntimeWrapper, RootlessWithFailRefusesAndRunsNothing) {
  FakeOps ops;
  ops.config = WithUnlimitedMemlock();
  ops.config->rootless = Rootless::kFail;
  ops.initial_userns = false;
  ops.own[RLIMIT_MEMLOCK] = {1 << 20, 8 << 20};
  ops.files["/b/config.json"] = R"({"process":{}})";
  EXPECT_EQ(RunRuntimeWrapper({"x", "create", "--bundle", "/b", "c1"}, ops), 1);
  EXPECT_TRUE(ops.written.empty());
  EXPECT_FALSE(ops.exec_argv.has_value());
  ASSERT_EQ(ops.stderr_lines.size(), 1u);
  EXPECT_NE(ops.stderr_lines[0].find("rootless = \"fail\""), std::string::npos)
      << ops.stderr_lines[0];
}

TEST(RuntimeWrapper, InTheInitialNamespaceAnImpossibleValueIsLeftForTheRuntimeToRefuse) {
  FakeOps ops;
  ops.config = WithUnlimitedMemlock();
  ops.own[RLIMIT_MEMLOCK] = {1 << 20, 8 << 20};
  ops.files["/b/config.json"] = R"({"process":{}})";
  RunRuntimeWrapper({"x", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_EQ(ops.files["/b/config.json"],
            R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":18446744073709551615,)"
            R"("soft":18446744073709551615}]}})");
  EXPECT_TRUE(Warnings(ops).empty());
}

TEST(RuntimeWrapper, LoadWarningsAreShownAndTheRuntimeRuns) {
  FakeOps ops;
  ops.load_warnings = {"rootless (not the initial user namespace): config: open \"/c\": denied"};
  RunRuntimeWrapper({"x", "create", "--bundle", "/b", "c1"}, ops);
  ASSERT_EQ(Warnings(ops).size(), 1u);
  EXPECT_EQ(Warnings(ops)[0], "oci-rlimit-runtime: warning: " + ops.load_warnings[0]);
  EXPECT_TRUE(ops.exec_argv.has_value());
}

}  // namespace
}  // namespace ocirlimit
