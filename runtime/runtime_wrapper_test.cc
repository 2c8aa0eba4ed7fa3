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

  std::vector<std::string> written;  // paths
  std::vector<std::string> stderr_lines;
  std::vector<std::pair<std::string, std::string>> log_lines;
  std::optional<std::vector<std::string>> exec_argv;
  std::string exec_path;

  Result<Config> LoadConfig() override { return config; }
  std::map<std::string, std::string, std::less<>> env = {{"PATH", "/usr/sbin:/usr/bin"}};
  std::optional<std::string> Getenv(std::string_view name) override {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  void Setenv(std::string_view name, const std::string& value) override {
    env.insert_or_assign(std::string(name), value);
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

TEST(RuntimeWrapper, SetsTheLoopGuardForTheRuntimeItExecs) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/b/config.json"] = kSpec;
  RunRuntimeWrapper(kCreate, ops);
  ASSERT_TRUE(ops.exec_argv.has_value());
  EXPECT_EQ(ops.env["OCI_RLIMIT_RUNTIME_EXECED"], "/usr/sbin/runc");
}

// A clamp warning under containerd goes to --log, never to the stdio the
// container shares (it would land in kubectl logs).
TEST(RuntimeWrapper, WarningsGoToTheLogNotToTheContainersStdio) {
  for (const std::string format : {"json", "text"}) {
    FakeOps ops;
    Config c;
    c.requests.enabled = true;
    c.requests.ceilings = {{RLIMIT_MEMLOCK, 1024, 1024}};
    ops.config = c;
    ops.files["/b/config.json"] =
        R"({"process":{"args":["sh"]},"annotations":{"oci-rlimit.io/rlimits":"memlock=4096"}})";
    RunRuntimeWrapper({"oci-rlimit-runtime", "--log", "/log.json", "--log-format", format, "create",
                       "--bundle", "/b", "c1"},
                      ops);
    ASSERT_TRUE(ops.exec_argv.has_value()) << format;
    // (The fake's exec "fails" afterwards: that error line is not the point.)
    for (const auto& line : ops.stderr_lines) {
      EXPECT_EQ(line.find("warning"), std::string::npos) << line;
    }
    ASSERT_GE(ops.log_lines.size(), 1u) << format;
    EXPECT_EQ(ops.log_lines[0].first, "/log.json");
    EXPECT_NE(ops.log_lines[0].second.find(format == "json" ? "\"level\":\"warning\""
                                                            : "level=warning msg="),
              std::string::npos)
        << ops.log_lines[0].second;
  }
}

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

}  // namespace
}  // namespace ocirlimit
