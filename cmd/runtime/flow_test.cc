// The wrapper's flow against a fake world: what it writes, what it runs,
// and that a failure before the exec means no write and no exec.
#include "runtime/flow.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <map>

#include "core/policy_digest.h"
#include "core/version.h"
#include "runtime/plan.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_decisions.h"

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
  std::string stdout_text;
  std::vector<std::pair<std::string, std::string>> log_lines;
  std::optional<std::vector<std::string>> exec_argv;
  std::string exec_path;
  DecisionStore* decisions = nullptr;
  DecisionStore* Decisions() override { return decisions; }

  std::vector<std::optional<std::string>> config_flags;  // each LoadConfig's --config
  Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) override {
    config_flags.push_back(flag);
    if (!config) return config.error();
    return LoadedConfig{*config, load_warnings};
  }
  bool InInitialUserNamespace() override { return initial_userns; }
  bool sys_resource = false;
  bool HasSysResource() override { return sys_resource; }
  Result<Rlimit> OwnLimit(int resource) override {
    auto it = own.find(resource);
    if (it == own.end()) return Rlimit{resource, kRlimInfinity, kRlimInfinity};
    return Rlimit{resource, it->second.first, it->second.second};
  }
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
  // `RUNTIME ... state ID`: the JSON state per id; a missing id fails as runc does.
  std::map<std::string, std::string> states;
  std::vector<std::vector<std::string>> runs;
  Result<std::string> RunCaptured(const std::vector<std::string>& argv, int /*timeout_ms*/,
                                  size_t /*max_bytes*/) override {
    runs.push_back(argv);
    auto it = states.find(argv.back());
    if (it == states.end()) return MakeError("run \"" + argv[0] + "\": exit status 1");
    return it->second;
  }
  void Stdout(const std::string& text) override { stdout_text += text; }
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

// No config file and no environment entry: one warning in --log per
// container, on create or run, never on exec or the other commands; a config
// file that sets nothing is not "no config".
struct NoConfigCase {
  const char* name;
  std::vector<std::string> argv;
  std::string source;  // Config::source: the file it came from
  size_t want_lines;
};

class RuntimeWrapperNoConfig : public ::testing::TestWithParam<NoConfigCase> {};

TEST_P(RuntimeWrapperNoConfig, SaysSoOnceInTheLog) {
  const NoConfigCase& c = GetParam();
  FakeOps ops;
  ops.config->source = c.source;
  ops.files["/b/config.json"] = kSpec;
  std::vector<std::string> argv = {"oci-rlimit-runtime", "--log", "/l.json", "--log-format",
                                   "json"};
  argv.insert(argv.end(), c.argv.begin(), c.argv.end());
  RunRuntimeWrapper(argv, ops);
  EXPECT_TRUE(ops.written.empty());
  EXPECT_TRUE(ops.exec_argv.has_value());
  // The fake exec returns, so its failure is a line too: count only ours.
  const std::string want =
      "oci-rlimit-runtime: warning: no config (/etc/oci-rlimit/config.toml, its config.d/, "
      "$OCI_RLIMIT_RLIMITS): \\\"c1\\\" keeps the runtime's limits";
  size_t said = 0;
  for (const auto& [path, line] : ops.log_lines) {
    if (line.find("no config") == std::string::npos) continue;
    ++said;
    EXPECT_EQ(path, "/l.json");
    EXPECT_NE(line.find(want), std::string::npos) << line;
  }
  EXPECT_EQ(said, c.want_lines);
  for (const auto& line : ops.stderr_lines) {
    EXPECT_EQ(line.find("no config"), std::string::npos) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(
    RuntimeWrapper, RuntimeWrapperNoConfig,
    ::testing::Values(NoConfigCase{"create", {"create", "--bundle", "/b", "c1"}, "", 1},
                      NoConfigCase{"run", {"run", "--bundle", "/b", "c1"}, "", 1},
                      NoConfigCase{"exec", {"exec", "--process", "/p.json", "c1"}, "", 0},
                      NoConfigCase{"start", {"start", "c1"}, "", 0},
                      NoConfigCase{"a_file_that_sets_nothing",
                                   {"create", "--bundle", "/b", "c1"},
                                   "/etc/oci-rlimit/config.toml",
                                   0}),
    [](const auto& info) { return std::string(info.param.name); });

// A spec that already holds exactly what would be merged is not rewritten:
// a new inode with the same bytes is still a change to whoever watches it.
TEST(RuntimeWrapper, CreateWhoseMergeChangesNoByteWritesNothing) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/b/config.json"] = kMerged;
  RunRuntimeWrapper({"oci-rlimit-runtime", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_TRUE(ops.written.empty());
  EXPECT_EQ(ops.files["/b/config.json"], kMerged);
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

// A request value cannot forge a field of the text --log: its quotes are
// escaped, so the line has one level= and one msg=.
TEST(RuntimeWrapper, ATextLogLineCannotBeForgedByAValue) {
  const std::string line = WarningTextLogLine(
      "T", "oci-rlimit-runtime: warning: request \"x\" level=error msg=\"forged\\\" \xe2\x80\xa8");
  EXPECT_EQ(line,
            "time=\"T\" level=warning msg=\"oci-rlimit-runtime: warning: request \\\"x\\\" "
            "level=error msg=\\\"forged\\\\\\\" \\u2028\"");
}

TEST(RuntimeWrapper, NoLogLineWithoutJsonLogFormat) {
  FakeOps ops;
  ops.config = MakeError("config \"/c.toml\": bad");
  RunRuntimeWrapper({"x", "--log", "/log", "create", "c1"}, ops);
  EXPECT_EQ(ops.stderr_lines.size(), 1u);
  EXPECT_TRUE(ops.log_lines.empty());
  EXPECT_FALSE(ops.exec_argv.has_value());
}

// Without rules or requests, only the process file is read and written: no
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

// --- One admission step: on-error, exec gets what init got ---

Config WithRequests(OnError on_error) {
  Config c;
  c.requests.enabled = true;
  c.requests.ceilings = {{RLIMIT_MEMLOCK, 8 << 20, 8 << 20}};
  c.on_error = on_error;
  c.log_file = "/oci-rlimit.log";
  return c;
}

constexpr const char* kAsks6M =
    R"({"annotations":{"oci-rlimit.io/rlimits":"memlock=6M"},"process":{"args":["sh"]}})";
constexpr const char* kAsksBadly =
    R"({"annotations":{"oci-rlimit.io/rlimits":"memlock=lots"},"process":{"args":["sh"]}})";

std::string LogText(const FakeOps& ops) {
  std::string out;
  for (const auto& [path, line] : ops.log_lines) out += path + ": " + line + "\n";
  return out;
}

// A bad request is the request's error, never the node's: under "warn" the
// top-level limits still reach the spec, on create and on exec.
TEST(RuntimeWrapperOnError, WarnKeepsTheNodesLimitsOnABadRequest) {
  for (bool exec : {false, true}) {
    FakeOps ops;
    Config c = WithRequests(OnError::kWarn);
    c.rlimits = {{RLIMIT_MEMLOCK, 64 << 10, 64 << 10}};
    ops.config = c;
    const std::string spec = exec ? "/run/c1/config.json" : "/b/config.json";
    ops.states["c1"] = R"({"id":"c1","pid":42,"status":"running","bundle":"/run/c1"})";
    ops.files[spec] = kAsksBadly;
    ops.files["/p.json"] = R"({"args":["cat"]})";
    RunRuntimeWrapper(exec ? kExecRunc : kCreate, ops);
    ASSERT_TRUE(ops.exec_argv.has_value()) << "the runtime runs";
    const std::string& edited = ops.files[exec ? "/p.json" : spec];
    EXPECT_NE(edited.find(R"({"type":"RLIMIT_MEMLOCK","hard":65536,"soft":65536})"),
              std::string::npos)
        << edited;
    EXPECT_NE(LogText(ops).find("set memlock=65536:65536 warning=\"on-error = \\\"warn\\\": "
                                "the request is left out"),
              std::string::npos)
        << LogText(ops);
  }
}

// A pod dispute Admit cannot decide refuses the container under "warn" too.
TEST(RuntimeWrapperOnError, AnUndecidableDisputeIsRefusedUnderWarn) {
  FakeOps ops;
  Config c = WithRequests(OnError::kWarn);
  Rule gpu;
  gpu.name = "gpu";
  gpu.rlimits = {{RLIMIT_MEMLOCK, 8 << 20, 8 << 20}};
  gpu.match.namespaces = {"gpu-*"};
  c.rules.push_back(gpu);
  ops.config = c;
  const std::string spec = R"({"annotations":{"io.kubernetes.cri.sandbox-namespace":"default",)"
                           R"("io.kubernetes.pod.namespace":"gpu-a"},"process":{"args":["sh"]}})";
  ops.files["/b/config.json"] = spec;
  EXPECT_EQ(RunRuntimeWrapper(kCreate, ops), 1);
  EXPECT_FALSE(ops.exec_argv.has_value()) << "the runtime must not run";
  EXPECT_EQ(ops.files["/b/config.json"], spec);
  ASSERT_EQ(ops.stderr_lines.size(), 1u);
  EXPECT_NE(ops.stderr_lines[0].find("disputed pod facts"), std::string::npos)
      << ops.stderr_lines[0];
}

TEST(RuntimeWrapperOnError, WarnForwardsTheUnmodifiedSpecWithAWarning) {
  FakeOps ops;
  ops.config = WithRequests(OnError::kWarn);
  ops.files["/b/config.json"] = kAsksBadly;
  EXPECT_EQ(RunRuntimeWrapper(kCreate, ops), 1) << "the fake exec returns; a real one would not";
  ASSERT_TRUE(ops.exec_argv.has_value()) << "the runtime runs";
  EXPECT_TRUE(ops.written.empty());
  EXPECT_EQ(ops.files["/b/config.json"], kAsksBadly);
  // The warning goes to the runtime's --log (never the container's stdio);
  // the fake exec's failure is the one stderr line.
  ASSERT_EQ(ops.stderr_lines.size(), 1u) << ops.stderr_lines[0];
  EXPECT_NE(LogText(ops).find("/log.json: {\"level\":\"warning\""), std::string::npos)
      << LogText(ops);
  EXPECT_NE(LogText(ops).find("warning: on-error = \\\"warn\\\""), std::string::npos)
      << LogText(ops);
  EXPECT_NE(LogText(ops).find("/oci-rlimit.log: 2024-01-02T03:04:05Z id=\"c1\" via=\"create\" "
                              "unchanged warning="),
            std::string::npos)
      << LogText(ops);
}

TEST(RuntimeWrapperOnError, FailRefusesTheContainer) {
  FakeOps ops;
  ops.config = WithRequests(OnError::kFail);
  ops.files["/b/config.json"] = kAsksBadly;
  EXPECT_EQ(RunRuntimeWrapper(kCreate, ops), 1);
  EXPECT_FALSE(ops.exec_argv.has_value());
  EXPECT_TRUE(ops.written.empty());
  ASSERT_EQ(ops.stderr_lines.size(), 1u);
  EXPECT_NE(ops.stderr_lines[0].find("create: annotation \"oci-rlimit.io/rlimits\" = "
                                     "\"memlock=lots\""),
            std::string::npos)
      << ops.stderr_lines[0];
}

TEST(RuntimeWrapperOnError, WarnCoversAnUnwritableSpecToo) {
  FakeOps ops;
  ops.config = WithRequests(OnError::kWarn);
  ops.files["/b/config.json"] = kAsks6M;
  ops.fail_writes = true;
  RunRuntimeWrapper(kCreate, ops);
  EXPECT_TRUE(ops.exec_argv.has_value());
  EXPECT_EQ(ops.files["/b/config.json"], kAsks6M);
}

TEST(RuntimeWrapperOnError, AConfigErrorIsFatalEvenWithWarn) {
  FakeOps ops;
  ops.config = MakeError("config \"/c.toml\": on-error: must be \"fail\" or \"warn\"");
  RunRuntimeWrapper(kCreate, ops);
  EXPECT_FALSE(ops.exec_argv.has_value());
}

TEST(RuntimeWrapperExec, GetsTheGrantedRequestOfTheContainersSpec) {
  FakeOps ops;
  ops.config = WithRequests(OnError::kFail);
  ops.states["c1"] = R"({"id":"c1","pid":42,"status":"running","bundle":"/run/c1"})";
  ops.files["/run/c1/config.json"] = kAsks6M;
  ops.files["/p.json"] = R"({"args":["cat"]})";
  RunRuntimeWrapper(kExecRunc, ops);
  ASSERT_EQ(ops.runs.size(), 1u);
  EXPECT_EQ(ops.runs[0],
            (std::vector<std::string>{"/usr/sbin/runc", "--root", "/r", "state", "c1"}));
  EXPECT_EQ(
      ops.files["/p.json"],
      R"({"args":["cat"],"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":6291456,"soft":6291456}]})");
  // The fake exec returns, so its failure is the one line on stderr.
  EXPECT_EQ(ops.stderr_lines.size(), 1u);
  ASSERT_TRUE(ops.exec_argv.has_value());
  EXPECT_NE(LogText(ops).find("id=\"c1\" via=\"exec\" set memlock=6291456:6291456"),
            std::string::npos)
      << LogText(ops);
}

// `docker exec -e NVIDIA_VISIBLE_DEVICES=all` puts the name in the --process
// file only: the exec is decided from the container's own spec, so an env
// rule the container did not match at create does not match its exec either
// (docs/policy.md, the trust table).
TEST(RuntimeWrapperExec, AnExecsOwnEnvDoesNotReachEnvRules) {
  FakeOps ops;
  Config c = WithRequests(OnError::kFail);
  Rule env_rule;
  env_rule.name = "gpu";
  env_rule.rlimits = {{RLIMIT_MEMLOCK, 2 << 20, 2 << 20}};
  env_rule.match.env = {"NVIDIA_VISIBLE_DEVICES"};
  c.rules.push_back(env_rule);
  ops.config = c;
  ops.states["c1"] = R"({"id":"c1","pid":42,"status":"running","bundle":"/run/c1"})";
  ops.files["/run/c1/config.json"] = R"({"process":{"args":["sh"],"env":["PATH=/bin"]}})";
  const std::string process = R"({"args":["cat"],"env":["NVIDIA_VISIBLE_DEVICES=all"]})";
  ops.files["/p.json"] = process;
  RunRuntimeWrapper(kExecRunc, ops);
  ASSERT_TRUE(ops.exec_argv.has_value());
  EXPECT_EQ(ops.files["/p.json"], process) << "nothing merged";
}

TEST(RuntimeWrapperExec, WithoutTheSpecFallsBackToTheProcessFileWithAWarning) {
  FakeOps ops;
  Config c = WithRequests(OnError::kFail);
  Rule env_rule;
  env_rule.name = "gpu";
  env_rule.rlimits = {{RLIMIT_MEMLOCK, 2 << 20, 2 << 20}};
  env_rule.match.env = {"NVIDIA_VISIBLE_DEVICES"};
  c.rules.push_back(env_rule);
  ops.config = c;
  // No state for c1: `runc state` fails.
  ops.files["/p.json"] = R"({"args":["cat"],"env":["NVIDIA_VISIBLE_DEVICES=0"]})";
  RunRuntimeWrapper(kExecRunc, ops);
  // The fake exec's failure is the one stderr line; the warning is in --log.
  ASSERT_EQ(ops.stderr_lines.size(), 1u) << ops.stderr_lines[0];
  EXPECT_NE(LogText(ops).find("/log.json: {\"level\":\"warning\""), std::string::npos)
      << LogText(ops);
  EXPECT_NE(LogText(ops).find("warning: exec \\\"c1\\\": cannot read the container's spec"),
            std::string::npos)
      << LogText(ops);
  EXPECT_NE(ops.files["/p.json"].find(R"({"type":"RLIMIT_MEMLOCK","hard":2097152,"soft":2097152})"),
            std::string::npos)
      << "env rules still match on the process file: " << ops.files["/p.json"];
  EXPECT_TRUE(ops.exec_argv.has_value());
}

// CRI-O's streaming exec passes no --log: `--root R exec --process FILE ID`.
// Its stdio is the exec session's; the spec-read warning joins the log-file
// line about the exec instead.
TEST(RuntimeWrapperExec, WithoutLogAnExecPrintsNoWarning) {
  FakeOps ops;
  Config c = WithRequests(OnError::kFail);
  Rule env_rule;
  env_rule.name = "gpu";
  env_rule.rlimits = {{RLIMIT_MEMLOCK, 2 << 20, 2 << 20}};
  env_rule.match.env = {"NVIDIA_VISIBLE_DEVICES"};
  c.rules.push_back(env_rule);
  c.log_file = "/decisions.log";
  ops.config = c;
  ops.files["/p.json"] = R"({"args":["true"],"env":["NVIDIA_VISIBLE_DEVICES=0"]})";
  RunRuntimeWrapper(
      {"oci-rlimit-runtime", "--root", "/run/runc", "exec", "--process", "/p.json", "c1"}, ops);
  for (const auto& line : ops.stderr_lines) {
    EXPECT_EQ(line.find("warning"), std::string::npos) << line;
  }
  ASSERT_EQ(ops.log_lines.size(), 1u);
  EXPECT_EQ(ops.log_lines[0].first, "/decisions.log");
  EXPECT_NE(ops.log_lines[0].second.find("via=\"exec\" set memlock=2097152:2097152 "
                                         "warning=\"exec \\\"c1\\\": cannot read the "
                                         "container's spec"),
            std::string::npos)
      << ops.log_lines[0].second;
  EXPECT_TRUE(ops.exec_argv.has_value());
}

TEST(RuntimeWrapperExec, NoStateLookupWithoutRulesOrRequests) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/p.json"] = R"({"args":["cat"]})";
  RunRuntimeWrapper(kExecRunc, ops);
  EXPECT_TRUE(ops.runs.empty());
  EXPECT_EQ(ops.written, std::vector<std::string>{"/p.json"});
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
  if (GetParam().argv[1] == "exec") {
    // An exec's stderr is the exec session's (`kubectl exec ... true` under
    // CRI-O, which passes no --log): the warning is in the log-file line only.
    EXPECT_EQ(Warnings(ops), std::vector<std::string>{});
  } else {
    ASSERT_EQ(Warnings(ops).size(), 1u);
  }
  EXPECT_NE(ops.log_lines.at(0).second.find(
                "warning=\"rootless (not the initial user namespace): hard limits cannot be "
                "raised, so memlock unlimited:unlimited -> 8388608:8388608"),
            std::string::npos)
      << ops.log_lines.at(0).second;
  if (GetParam().argv[1] != "exec") {
    EXPECT_NE(Warnings(ops)[0].find("oci-rlimit-runtime: warning: rootless (not the initial user "
                                    "namespace): hard limits cannot be raised, so memlock "
                                    "unlimited:unlimited -> 8388608:8388608"),
              std::string::npos)
        << Warnings(ops)[0];
  }
  ASSERT_EQ(ops.log_lines.size(), 1u) << "the log-file line names the warning";
  // The one log-line format (formats/log_line.h): id, where, what was set, the warning.
  EXPECT_TRUE(ops.log_lines[0].second.starts_with("2024-01-02T03:04:05Z id=\"c1\" via=\""))
      << ops.log_lines[0].second;
  EXPECT_NE(ops.log_lines[0].second.find(" set memlock=8388608:8388608 warning=\"rootless (not"),
            std::string::npos)
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

// With CAP_SYS_RESOURCE the runtime can raise it: the value is written as is.
TEST(RuntimeWrapper, WithTheCapabilityAHardRaiseIsLeftToTheRuntime) {
  FakeOps ops;
  ops.config = WithUnlimitedMemlock();
  ops.sys_resource = true;
  ops.own[RLIMIT_MEMLOCK] = {1 << 20, 8 << 20};
  ops.files["/b/config.json"] = R"({"process":{}})";
  RunRuntimeWrapper({"x", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_EQ(ops.files["/b/config.json"],
            R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":18446744073709551615,)"
            R"("soft":18446744073709551615}]}})");
  EXPECT_TRUE(Warnings(ops).empty());
}

constexpr const char* kUnraisable =
    ": config entry memlock=unlimited: the hard limit in force is 8M, and "
    "raising it needs CAP_SYS_RESOURCE, which oci-rlimit-runtime does not have; memlock=8M would "
    "work (or run the container engine with CAP_SYS_RESOURCE)";

// Without it (a rootful engine, this machine) the runtime could not either:
// create and exec fail with the one message, before the runtime runs, so
// runc's bare `error setting rlimit type 8` never is all the user sees.
TEST(RuntimeWrapper, WithoutTheCapabilityAHardRaiseFailsBeforeTheRuntimeRuns) {
  for (const bool exec : {false, true}) {
    FakeOps ops;
    ops.config = WithUnlimitedMemlock();
    ops.own[RLIMIT_MEMLOCK] = {8 << 20, 8 << 20};
    ops.files["/b/config.json"] = R"({"process":{}})";
    ops.files["/p.json"] = R"({"args":["cat"],"rlimits":[]})";
    const std::vector<std::string> argv =
        exec ? kExecRunc : std::vector<std::string>{"x", "create", "--bundle", "/b", "c1"};
    EXPECT_EQ(RunRuntimeWrapper(argv, ops), 1) << exec;
    EXPECT_TRUE(ops.written.empty()) << exec;
    EXPECT_FALSE(ops.exec_argv.has_value()) << exec;
    ASSERT_EQ(ops.stderr_lines.size(), 1u) << exec;
    EXPECT_EQ(ops.stderr_lines[0],
              std::string("oci-rlimit-runtime: ") + (exec ? "exec" : "create") + kUnraisable);
  }
}

// A warning from loading the config (an unreadable file, a drop-in gone)
// goes where the wrapper's other warnings go: stderr by hand, the --log
// file under an engine, and on an exec (whose stdio is the exec session's)
// the config's log-file line, never the session's stderr.
struct LoadWarningCase {
  std::string name;
  std::vector<std::string> argv;
  bool on_stderr;
  std::string log;  // the file whose line carries it, or ""
  std::string in_line;
};
void PrintTo(const LoadWarningCase& c, std::ostream* os) { *os << c.name; }

class RuntimeWrapperLoadWarnings : public ::testing::TestWithParam<LoadWarningCase> {};

TEST_P(RuntimeWrapperLoadWarnings, GoWhereWarningsGoAndTheRuntimeRuns) {
  const LoadWarningCase& c = GetParam();
  FakeOps ops;
  ops.load_warnings = {"config drop-in \"/c.d/20-gone.toml\" is gone"};
  Config cfg;
  cfg.rlimits = {{RLIMIT_MEMLOCK, 1 << 20, 1 << 20}};
  cfg.log_file = "/decisions.log";
  ops.config = cfg;
  ops.files["/b/config.json"] = R"({"process":{}})";
  ops.files["/p.json"] = R"({"args":["sh"]})";
  RunRuntimeWrapper(c.argv, ops);
  if (c.on_stderr) {
    ASSERT_EQ(Warnings(ops).size(), 1u);
    EXPECT_EQ(Warnings(ops)[0], "oci-rlimit-runtime: warning: " + ops.load_warnings[0]);
  } else {
    EXPECT_EQ(Warnings(ops), std::vector<std::string>{});
  }
  int found = 0;
  for (const auto& [path, line] : ops.log_lines) {
    if (line.find("20-gone.toml") == std::string::npos) continue;
    ++found;
    EXPECT_EQ(path, c.log);
    EXPECT_NE(line.find(c.in_line), std::string::npos) << line;
  }
  EXPECT_EQ(found, c.log.empty() ? 0 : 1);
  EXPECT_TRUE(ops.exec_argv.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Wrapper, RuntimeWrapperLoadWarnings,
    ::testing::Values(
        LoadWarningCase{"CreateByHand", {"x", "create", "--bundle", "/b", "c1"}, true, "", ""},
        LoadWarningCase{
            "CreateWithLog",
            {"x", "--log", "/l.json", "--log-format", "json", "create", "--bundle", "/b", "c1"},
            false,
            "/l.json",
            R"("level":"warning")"},
        LoadWarningCase{"ExecWithoutLog",
                        {"x", "exec", "--process", "/p.json", "c1"},
                        false,
                        "/decisions.log",
                        R"(via="exec" set memlock=1048576:1048576 warning="config drop-in)"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// --oci-rlimit-help and --version, with and without a runtime on PATH.
struct SelfCase {
  const char* name;
  std::vector<std::string> argv;
  bool runtime_present;
  int rc;                        // when no exec happens
  bool execs;                    // runs the runtime with the same argv
  std::vector<std::string> out;  // each is in stdout, in this order
  const char* err;               // in stderr ("" = stderr empty)
};

class RuntimeWrapperSelf : public ::testing::TestWithParam<SelfCase> {};

TEST_P(RuntimeWrapperSelf, DescribesItself) {
  const SelfCase& c = GetParam();
  FakeOps ops;
  ops.config = WithMemlock();
  if (!c.runtime_present) ops.executables.clear();
  const int rc = RunRuntimeWrapper(c.argv, ops);
  if (c.out.empty()) {
    EXPECT_EQ(ops.stdout_text, "");
  }
  size_t at = 0;
  for (const auto& piece : c.out) {
    size_t found = ops.stdout_text.find(piece, at);
    ASSERT_NE(found, std::string::npos) << "\"" << piece << "\" not in\n" << ops.stdout_text;
    at = found + piece.size();
  }
  std::string err;
  for (const auto& l : ops.stderr_lines) err += l + "\n";
  if (*c.err == '\0') {
    EXPECT_EQ(err, "");
  } else {
    EXPECT_NE(err.find(c.err), std::string::npos) << err;
  }
  EXPECT_TRUE(ops.written.empty());
  if (c.execs) {
    ASSERT_TRUE(ops.exec_argv.has_value());
    std::vector<std::string> want = c.argv;
    want[0] = "/usr/sbin/runc";
    EXPECT_EQ(*ops.exec_argv, want);
  } else {
    EXPECT_FALSE(ops.exec_argv.has_value());
    EXPECT_EQ(rc, c.rc);
  }
}

const std::string kVersionLine =
    std::string("oci-rlimit-runtime version ") + kVersion + " (oci-rlimit)\n";

INSTANTIATE_TEST_SUITE_P(
    Table, RuntimeWrapperSelf,
    ::testing::Values(
        SelfCase{
            "help_without_runtime",
            {"oci-rlimit-runtime", "--oci-rlimit-help"},
            false,
            0,
            false,
            {"usage: oci-rlimit-runtime", "$OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml",
             "Here: config /etc/oci-rlimit/config.toml: 1 default limit(s), 0 rule(s)\n",
             "runtime: none: [runtime] runtimes", kVersionLine},
            ""},
        SelfCase{"help_with_runtime",
                 {"oci-rlimit-runtime", "--oci-rlimit-help"},
                 true,
                 0,
                 false,
                 {"usage: oci-rlimit-runtime", "runtime: /usr/sbin/runc\n", kVersionLine},
                 ""},
        SelfCase{"version_then_the_runtimes",
                 {"oci-rlimit-runtime", "--version"},
                 true,
                 0,
                 true,
                 {kVersionLine},
                 "exec \"/usr/sbin/runc\""},
        SelfCase{"version_without_runtime_fails",
                 {"oci-rlimit-runtime", "-v"},
                 false,
                 1,
                 false,
                 {kVersionLine},
                 "oci-rlimit-runtime: no runtime to ask for its version: [runtime] runtimes"},
        SelfCase{"help_is_passed_to_the_runtime",
                 {"oci-rlimit-runtime", "--help"},
                 true,
                 0,
                 true,
                 {},
                 "exec \"/usr/sbin/runc\""}),
    [](const auto& info) { return std::string(info.param.name); });

// --config is the wrapper's own: read before runc's argv (docker's
// runtimeArgs), handed to the config loader, and never passed to runc.
TEST(RuntimeWrapperConfigFlag, IsLoadedAndLeftOutOfTheRuntimesArgv) {
  for (const std::vector<std::string>& own : {std::vector<std::string>{"--config", "/etc/x.toml"},
                                              std::vector<std::string>{"--config=/etc/x.toml"}}) {
    FakeOps ops;
    ops.config = WithMemlock();
    ops.files["/b/config.json"] = kSpec;
    const std::vector<std::string> runc = {"--root", "/r", "create", "--bundle", "/b", "c1"};
    std::vector<std::string> argv = {"oci-rlimit-runtime"};
    argv.insert(argv.end(), own.begin(), own.end());
    argv.insert(argv.end(), runc.begin(), runc.end());
    RunRuntimeWrapper(argv, ops);
    EXPECT_EQ(ops.config_flags, std::vector<std::optional<std::string>>{"/etc/x.toml"}) << own[0];
    EXPECT_EQ(ops.files["/b/config.json"], kMerged) << own[0];
    std::vector<std::string> want = {"/usr/sbin/runc"};
    want.insert(want.end(), runc.begin(), runc.end());
    ASSERT_TRUE(ops.exec_argv) << own[0];
    EXPECT_EQ(*ops.exec_argv, want) << own[0];
  }
}

TEST(RuntimeWrapperConfigFlag, WithoutItTheLoaderFallsBackToTheEnvironment) {
  FakeOps ops;
  ops.config = WithMemlock();
  RunRuntimeWrapper({"oci-rlimit-runtime", "state", "c1"}, ops);
  EXPECT_EQ(ops.config_flags, std::vector<std::optional<std::string>>{std::nullopt});
}

TEST(RuntimeWrapperConfigFlag, AfterTheRuntimesFlagsItFailsBeforeAnything) {
  FakeOps ops;
  ops.config = WithMemlock();
  ops.files["/b/config.json"] = kSpec;
  EXPECT_EQ(RunRuntimeWrapper({"oci-rlimit-runtime", "--root", "/r", "--config", "/x", "create",
                               "--bundle", "/b", "c1"},
                              ops),
            1);
  EXPECT_FALSE(ops.exec_argv);
  EXPECT_TRUE(ops.written.empty());
  ASSERT_EQ(ops.stderr_lines.size(), 1U);
  EXPECT_NE(ops.stderr_lines[0].find("the wrapper's own flags go before the runtime's"),
            std::string::npos)
      << ops.stderr_lines[0];
}

TEST(RuntimeWrapperConfigFlag, HelpNamesTheConfigItReads) {
  FakeOps ops;
  ops.env["OCI_RLIMIT_CONFIG"] = "/env.toml";
  RunRuntimeWrapper({"oci-rlimit-runtime", "--config", "/flag.toml", "--oci-rlimit-help"}, ops);
  EXPECT_NE(ops.stdout_text.find("Here: config /flag.toml:"), std::string::npos) << ops.stdout_text;
  FakeOps env_only;
  env_only.env["OCI_RLIMIT_CONFIG"] = "/env.toml";
  RunRuntimeWrapper({"oci-rlimit-runtime", "--oci-rlimit-help"}, env_only);
  EXPECT_NE(env_only.stdout_text.find("Here: config /env.toml:"), std::string::npos)
      << env_only.stdout_text;
}

// The `--nvidia` handler's chain with NVIDIA's runtime removed (issue 44):
// the lifecycle commands that edit no spec reach the base runtime whose state
// holds the container; create and run still fail.
constexpr const char* kNvidiaRuntime = "/usr/local/nvidia/toolkit/nvidia-container-runtime";

struct StrandCase {
  std::string name;
  std::vector<std::string> argv;  // after the program's name
  std::string want_exec;          // "" when nothing may run
};

class StrandedChain : public ::testing::TestWithParam<StrandCase> {};

TEST_P(StrandedChain, LifecycleCommandsReachTheBaseRuntime) {
  const StrandCase& c = GetParam();
  FakeOps ops;
  ops.config = WithMemlock({kNvidiaRuntime});
  ops.files["/run/crun/c1/status"] = "{}";
  ops.files["/r/c2/state.json"] = "{}";
  ops.files["/b/config.json"] = kSpec;
  std::vector<std::string> argv = {"oci-rlimit-runtime"};
  argv.insert(argv.end(), c.argv.begin(), c.argv.end());
  const int rc = RunRuntimeWrapper(argv, ops);
  if (c.want_exec.empty()) {
    EXPECT_EQ(rc, 1);
    EXPECT_FALSE(ops.exec_argv.has_value()) << ops.exec_path;
    EXPECT_TRUE(ops.written.empty());
    ASSERT_FALSE(ops.stderr_lines.empty());
    EXPECT_NE(ops.stderr_lines.back().find("none is an executable"), std::string::npos);
    return;
  }
  EXPECT_EQ(ops.exec_path, c.want_exec);
  argv[0] = c.want_exec;
  ASSERT_TRUE(ops.exec_argv.has_value());
  EXPECT_EQ(*ops.exec_argv, argv) << "the argv goes on untouched";
  ASSERT_FALSE(ops.stderr_lines.empty());  // the warning, then the fake exec's error
  EXPECT_NE(ops.stderr_lines[0].find("goes to the base runtime " + c.want_exec), std::string::npos)
      << ops.stderr_lines[0];
}

INSTANTIATE_TEST_SUITE_P(
    Runtime, StrandedChain,
    ::testing::Values(
        StrandCase{"ForceDeleteInCrunsRoot",
                   {"--root", "/run/crun", "delete", "--force", "c1"},
                   "/usr/bin/crun"},
        StrandCase{"KillAllByDefaultRoot", {"kill", "--all", "c1", "KILL"}, "/usr/bin/crun"},
        StrandCase{"StateInRuncsState", {"--root", "/r", "state", "c2"}, "/usr/sbin/runc"},
        StrandCase{
            "PsWithFormat", {"--root", "/r", "ps", "--format", "json", "c2"}, "/usr/sbin/runc"},
        StrandCase{"EventsWithInterval", {"events", "--interval", "5s", "c1"}, "/usr/bin/crun"},
        StrandCase{"PauseUnknownIdTakesTheFirst", {"pause", "c9"}, "/usr/sbin/runc"},
        StrandCase{"Resume", {"--root", "/r", "resume", "c2"}, "/usr/sbin/runc"},
        StrandCase{"DeleteWithoutForce", {"--root", "/run/crun", "delete", "c1"}, "/usr/bin/crun"},
        StrandCase{"CreateStillFails", {"create", "--bundle", "/b", "c3"}, ""},
        StrandCase{"RunStillFails", {"run", "--bundle", "/b", "c3"}, ""},
        StrandCase{"ExecStillFails", {"exec", "--process", "/p.json", "c1"}, ""},
        StrandCase{"CheckpointIsNotALifecycleCommand", {"checkpoint", "c1"}, ""}),
    CaseName{});

// With NVIDIA's runtime still there, every command goes to it.
TEST(RuntimeWrapper, TheChainedRuntimeKeepsLifecycleCommandsWhileItExists) {
  FakeOps ops;
  ops.config = WithMemlock({kNvidiaRuntime});
  ops.executables[kNvidiaRuntime] = 12;
  ops.files["/run/crun/c1/status"] = "{}";
  RunRuntimeWrapper({"oci-rlimit-runtime", "--root", "/run/crun", "delete", "--force", "c1"}, ops);
  EXPECT_EQ(ops.exec_path, kNvidiaRuntime);
  for (const auto& line : ops.stderr_lines) {
    EXPECT_EQ(line.find("base runtime"), std::string::npos) << line;
  }
}

// One decision per container (docs/runtime-mode.md): the NRI plugin decided
// at CreateContainer, before this create, with the pod's facts; the wrapper
// applies that record, not its own config, and says so.
constexpr const char* kMemlock6M =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_MEMLOCK",)"
    R"("hard":8388608,"soft":6291456}]}})";

DecisionRecord ByNri(const std::string& id, std::vector<Rlimit> limits) {
  return {.id = id, .by = "nri", .policy = "p", .time = "T", .limits = std::move(limits)};
}

TEST(RuntimeWrapperDecision, CreateDefersToThePluginsRecord) {
  FakeOps ops;
  Config c = WithMemlock();
  c.log_file = "/decisions.log";
  ops.config = c;
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = ByNri("c1", {{RLIMIT_MEMLOCK, 6 << 20, 8 << 20}});
  ops.decisions = &decisions;
  ops.files["/b/config.json"] = kMemlock6M;
  RunRuntimeWrapper({"oci-rlimit-runtime", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_EQ(ops.files["/b/config.json"], kMemlock6M) << "the plugin's limits, not the config's";
  EXPECT_TRUE(ops.written.empty());
  EXPECT_TRUE(decisions.written.empty()) << "the plugin's record stays the decision";
  ASSERT_EQ(ops.log_lines.size(), 1u) << LogText(ops);
  EXPECT_NE(ops.log_lines[0].second.find(
                R"(via="create" set memlock=6291456:8388608 warning="deferred to the decision )"
                R"(oci-rlimit-nri at CreateContainer recorded: memlock=6291456:8388608")"),
            std::string::npos)
      << LogText(ops);
  EXPECT_TRUE(ops.exec_argv.has_value());
}

TEST(RuntimeWrapperDecision, CreateDefersToNothingDecided) {
  FakeOps ops;
  ops.config = WithMemlock();
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = ByNri("c1", {});
  ops.decisions = &decisions;
  ops.files["/b/config.json"] = kSpec;
  RunRuntimeWrapper({"oci-rlimit-runtime", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_EQ(ops.files["/b/config.json"], kSpec);
}

TEST(RuntimeWrapperDecision, CreateWithoutARecordDecidesAndRecords) {
  FakeOps ops;
  ops.config = WithMemlock();
  testsupport::FakeDecisions decisions;
  // The wrapper's own record of an earlier container of this id (`run --rm`).
  decisions.records["c1"] = ByNri("c1", {{RLIMIT_MEMLOCK, 6 << 20, 8 << 20}});
  decisions.records["c1"].by = "wrapper";
  ops.decisions = &decisions;
  ops.files["/b/config.json"] = kSpec;
  RunRuntimeWrapper({"oci-rlimit-runtime", "create", "--bundle", "/b", "c1"}, ops);
  EXPECT_EQ(ops.files["/b/config.json"], kMerged);
  ASSERT_EQ(decisions.written, std::vector<std::string>{"c1"});
  EXPECT_EQ(decisions.records["c1"].by, kDecidedByWrapper);
  EXPECT_EQ(DecidedLimits(decisions.records["c1"].limits), "memlock=1048576:4194304");
  EXPECT_EQ(decisions.records["c1"].policy, PolicyDigest(WithMemlock()));
}

TEST(RuntimeWrapperDecision, AnExecAppliesTheRecordWithoutAskingTheRuntime) {
  FakeOps ops;
  ops.config = WithMemlock();
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = ByNri("c1", {{RLIMIT_MEMLOCK, 6 << 20, 8 << 20}});
  ops.decisions = &decisions;
  ops.files["/p.json"] = R"({"args":["cat"]})";
  RunRuntimeWrapper(kExecRunc, ops);
  EXPECT_EQ(
      ops.files["/p.json"],
      R"({"args":["cat"],"rlimits":[{"type":"RLIMIT_MEMLOCK","hard":8388608,"soft":6291456}]})");
  EXPECT_TRUE(ops.runs.empty()) << "no `runc state`: the record is the decision";
  EXPECT_TRUE(ops.exec_argv.has_value());
}

TEST(RuntimeWrapperDecision, ARecordNotBelievedIsWarnedAndTheConfigDecides) {
  FakeOps ops;
  ops.config = WithMemlock();
  testsupport::FakeDecisions decisions;
  decisions.read_error = MakeError("decision record: is owned by uid 1000, not root");
  ops.decisions = &decisions;
  ops.files["/b/config.json"] = kSpec;
  RunRuntimeWrapper({"oci-rlimit-runtime", "--log", "/log.json", "--log-format", "json", "create",
                     "--bundle", "/b", "c1"},
                    ops);
  EXPECT_EQ(ops.files["/b/config.json"], kMerged);
  EXPECT_NE(LogText(ops).find("not root: deciding from the config"), std::string::npos)
      << LogText(ops);
}

TEST(RuntimeWrapperDecision, DeleteForgetsTheRecord) {
  FakeOps ops;
  ops.config = WithMemlock();
  testsupport::FakeDecisions decisions;
  decisions.records["c1"] = ByNri("c1", {});
  ops.decisions = &decisions;
  RunRuntimeWrapper({"oci-rlimit-runtime", "--root", "/r", "delete", "--force", "c1"}, ops);
  EXPECT_EQ(decisions.removed, std::vector<std::string>{"c1"});
  EXPECT_TRUE(ops.exec_argv.has_value());
}

}  // namespace
}  // namespace ocirlimit
