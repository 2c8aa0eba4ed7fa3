// The hook's flow against a fake world (hook/ops.h): its on-error,
// chain and precreate decisions, what it applies, writes, logs and execs.
#include "hook/flow.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_process_ops.h"

namespace ocirlimit {
namespace {

// Every prlimit(2) call the fake gets fails with `err` (none when 0).
void FailEverySet(testsupport::FakeProcessOps& process, int err) {
  process.set_errs.clear();
  if (err == 0) return;
  for (int r = 0; r < RLIM_NLIMITS; ++r) process.set_errs[r] = err;
}

constexpr mode_t kExecutable = S_IFREG | 0755;

class FakeHookOps final : public HookOps {
 public:
  Result<Config> config = Config{};
  Result<std::string> stdin_text = std::string();
  std::map<std::string, std::string> files;
  std::map<std::string, FileId> stats;  // for Stat; Self is {1, 1}
  testsupport::FakeProcessOps process;  // every limit at 8M:8M
  bool fail_stdout = false;

  FakeHookOps() {
    for (int r = 0; r < RLIM_NLIMITS; ++r) process.limits[r] = LimitPair{8 << 20, 8 << 20};
  }

  std::optional<std::string> config_flag;
  int stdin_reads = 0;
  std::vector<std::string> stderr_lines;
  std::string stdout_text;
  std::vector<std::pair<std::string, std::string>> log_lines;
  struct ExecCall {
    std::string path;
    std::vector<std::string> argv;
    std::string stdin_bytes;
  };
  std::optional<ExecCall> exec;

  Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) override {
    config_flag = flag;
    if (!config) return config.error();
    return LoadedConfig{*config, {}};
  }
  Result<std::string> ReadStdin(size_t /*max_bytes*/) override {
    ++stdin_reads;
    return stdin_text;
  }
  Result<std::string> ReadFile(const std::string& path, size_t /*max_bytes*/) override {
    auto it = files.find(path);
    if (it == files.end()) return MakeError("open \"" + path + "\"", ENOENT);
    return it->second;
  }
  ProcessOps& Process() override { return process; }
  pid_t OwnPid() override { return 99; }
  Result<FileId> Stat(const std::string& path) override {
    auto it = stats.find(path);
    if (it == stats.end()) return MakeError("stat \"" + path + "\"", ENOENT);
    return it->second;
  }
  Result<FileId> Self() override { return FileId{1, 1, kExecutable}; }
  Status AppendLine(const std::string& path, const std::string& line) override {
    log_lines.emplace_back(path, line);
    return Ok{};
  }
  std::string Now() override { return "2026-12-01T12:00:00Z"; }
  void Stderr(const std::string& line) override { stderr_lines.push_back(line); }
  Status Stdout(const std::string& data) override {
    if (fail_stdout) return MakeError("write", EPIPE);
    stdout_text += data;
    return Ok{};
  }
  Error ExecChain(const std::string& path, const std::vector<std::string>& argv,
                  const std::string& stdin_bytes) override {
    exec = ExecCall{path, argv, stdin_bytes};
    return MakeError("exec " + path, ENOEXEC);  // a real exec would not return
  }

  std::string Stderr() const {
    std::string all;
    for (const auto& l : stderr_lines) all += l + "\n";
    return all;
  }
};

Config Parse(const std::string& toml) {
  auto c = ParseConfig(toml, "/etc/oci-rlimit/config.toml");
  EXPECT_TRUE(c) << c.error().Text();
  return c ? *c : Config{};
}

// The fake's config: `toml`, with on-error set to `on_error`.
void Configure(FakeHookOps& ops, const std::string& toml, OnError on_error) {
  Config cfg = Parse(toml);
  cfg.on_error = on_error;
  ops.config = cfg;
}

constexpr const char* kState =
    R"({"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242,"bundle":"/b"})";
constexpr const char* kSpecPath = "/b/config.json";
const std::string kMemlock = std::to_string(RLIMIT_MEMLOCK);

std::string Spec(const std::string& annotation) {
  std::string s = R"({"ociVersion":"1.0.2","process":{"args":["sh"]})";
  if (!annotation.empty()) {
    s += R"(,"annotations":{"oci-rlimit.io/rlimits":")" + annotation + "\"}";
  }
  return s + "}";
}

// ---------------------------------------------------------------------------
// createRuntime/prestart: each failure kind under on-error = fail and warn.

constexpr const char* kRequests =
    "rlimits = [\"memlock=1M:4M\"]\n"
    "log-file = \"/var/log/oci-rlimit.log\"\n"
    "[requests]\nenabled = true\nceilings = [\"memlock=6M\"]\n";
constexpr const char* kRejecting =
    "rlimits = [\"memlock=1M:4M\"]\n"
    "log-file = \"/var/log/oci-rlimit.log\"\n"
    "[requests]\nenabled = true\nceilings = [\"memlock=6M\"]\nover-ceiling = \"reject\"\n";
constexpr const char* kTopLevel =
    "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"/var/log/oci-rlimit.log\"\n";
// A raise for GPU namespaces and no default: a disputed namespace cannot be
// decided (docs/policy.md, "Disputed pod facts").
constexpr const char* kGpuNamespaces =
    "log-file = \"/var/log/oci-rlimit.log\"\n[[rule]]\nrlimits = [\"memlock=8M\"]\n"
    "match = { namespaces = [\"gpu-*\"] }\n";
const std::string kDisputedSpec =
    R"({"ociVersion":"1.0.2","process":{"args":["sh"]},"annotations":{)"
    R"("io.kubernetes.cri.sandbox-namespace":"default","io.kubernetes.pod.namespace":"gpu-a"}})";

struct ApplyCase {
  const char* name;
  const char* config;                // TOML without on-error
  std::optional<std::string> state;  // nullopt: reading stdin fails
  std::optional<std::string> spec;   // the bundle's config.json; nullopt: missing
  int set_errno;                     // prlimit(2) fails with it
  int rc_fail;                       // exit status under on-error = "fail"
  int rc_warn;                       // ... and under "warn"
  const char* applied;               // what reached prlimit, "" for nothing
  const char* says;                  // in stderr (and in the log line when one is written)
  bool logs;                         // a log line is written
  // What reached prlimit under "warn", when not `applied`: a bad request is
  // the request's error, so the node's limits stay.
  const char* applied_warn = nullptr;
};

const ApplyCase kApplyCases[] = {
    {"Applied", kTopLevel, kState, Spec(""), 0, 0, 0, "4242 8 1048576:4194304", "", true},
    {"GrantedRequest", kRequests, kState, Spec("memlock=2M:5M"), 0, 0, 0, "4242 8 2097152:5242880",
     "", true},
    {"StdinUnreadable", kTopLevel, std::nullopt, Spec(""), 0, 1, 0, "", "read state from stdin",
     false},
    {"BadState", kTopLevel, std::string("{\"id\":"), Spec(""), 0, 1, 0, "", "state: not valid JSON",
     false},
    {"TooLateState", kTopLevel,
     std::string(R"({"ociVersion":"1.0.2","id":"c1","status":"running","pid":4242,"bundle":"/b"})"),
     Spec(""), 0, 1, 0, "", "is too late", false},
    {"UnreadableSpecWithRequests", kRequests, kState, std::nullopt, 0, 1, 0, "",
     "rules and requests need the bundle's spec", true},
    {"MalformedSpecWithRequests", kRequests, kState, std::string("{\"process\":"), 0, 1, 0, "",
     "rules and requests need the bundle's spec", true},
    {"MalformedRequest", kRequests, kState, Spec("memlock=lots"), 0, 1, 0, "", "lots", true,
     "4242 8 1048576:4194304"},
    {"OverCeilingRejected", kRejecting, kState, Spec("memlock=8M"), 0, 1, 0, "", "memlock", true,
     "4242 8 1048576:4194304"},
    {"OverCeilingClamped", kRequests, kState, Spec("memlock=8M"), 0, 0, 0, "4242 8 6291456:6291456",
     "clamped to memlock=6291456:6291456", true},
    {"ApplyFails", kTopLevel, kState, Spec(""), EPERM, 1, 0, "", "pid 4242: memlock to", true},
    // Refused whatever on-error says: starting it untouched could drop a cap.
    {"UndecidableDisputeRefused", kGpuNamespaces, kState, kDisputedSpec, 0, 1, 1, "",
     "disputed pod facts (the pod's namespace", true},
    // Conflict checks only warn: an unreadable or odd spec never stops the apply.
    {"ConflictCheckSpecMissing", kTopLevel, kState, std::nullopt, 0, 0, 0, "4242 8 1048576:4194304",
     "cannot check the bundle for conflicts", true},
    {"ConflictCheckSpecMalformed", kTopLevel, kState, std::string("{\"process\":"), 0, 0, 0,
     "4242 8 1048576:4194304", "cannot check the bundle for conflicts", true},
    {"NothingConfigured", "", std::nullopt, std::nullopt, 0, 0, 0, "", "", false},
};

// Each case under both on-error values.
struct ApplyRun {
  std::string name;
  ApplyCase c;
  OnError on_error;
};

std::vector<ApplyRun> ApplyRuns() {
  std::vector<ApplyRun> runs;
  for (const auto& c : kApplyCases) {
    runs.push_back({std::string(c.name) + "_Fail", c, OnError::kFail});
    runs.push_back({std::string(c.name) + "_Warn", c, OnError::kWarn});
  }
  return runs;
}

class HookApply : public ::testing::TestWithParam<ApplyRun> {};

TEST_P(HookApply, ExitStatusEffectsAndMessage) {
  const ApplyCase& c = GetParam().c;
  const OnError on_error = GetParam().on_error;
  FakeHookOps ops;
  Configure(ops, c.config, on_error);
  if (c.state) {
    ops.stdin_text = *c.state;
  } else {
    ops.stdin_text = MakeError("read stdin", EIO);
  }
  if (c.spec) ops.files[kSpecPath] = *c.spec;
  FailEverySet(ops.process, c.set_errno);

  const int rc = RunHook({"oci-rlimit-hook", "createRuntime"}, ops);

  EXPECT_EQ(rc, on_error == OnError::kWarn ? c.rc_warn : c.rc_fail) << ops.Stderr();
  std::string applied;
  for (const auto& s : ops.process.sets) applied += (applied.empty() ? "" : ",") + s;
  EXPECT_EQ(applied,
            on_error == OnError::kWarn && c.applied_warn != nullptr ? c.applied_warn : c.applied);
  EXPECT_NE(ops.Stderr().find(c.says), std::string::npos) << ops.Stderr();
  if (std::string_view(c.says).empty()) {
    EXPECT_EQ(ops.Stderr(), "");
  }
  for (const auto& line : ops.stderr_lines) {
    EXPECT_EQ(line.rfind("oci-rlimit-hook: ", 0), 0u) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << "one line each: " << line;
  }
  ASSERT_EQ(ops.log_lines.size(), c.logs ? 1u : 0u);
  if (c.logs) {
    EXPECT_EQ(ops.log_lines[0].first, "/var/log/oci-rlimit.log");
    EXPECT_NE(ops.log_lines[0].second.find("id=\"c1\""), std::string::npos)
        << ops.log_lines[0].second;
    EXPECT_NE(ops.log_lines[0].second.find(c.says), std::string::npos) << ops.log_lines[0].second;
  }
  // A failure under "warn" is said once, as the on-error warning; under "fail", never so.
  const bool excused = on_error == OnError::kWarn && c.rc_fail != 0 && c.rc_warn == 0;
  EXPECT_EQ(ops.Stderr().find("warning: on-error = \"warn\"") != std::string::npos, excused)
      << ops.Stderr();
  if (excused) {
    EXPECT_EQ(ops.stderr_lines.size(), 1u) << ops.Stderr();
  }
  EXPECT_FALSE(ops.exec) << "no chain configured";
  EXPECT_EQ(ops.stdout_text, "") << "an apply hook writes nothing to stdout";
}

INSTANTIATE_TEST_SUITE_P(Cases, HookApply, ::testing::ValuesIn(ApplyRuns()), CaseName{});

// A config we cannot read has no on-error to follow: fail closed in every mode.
TEST(HookConfig, UnreadableConfigFailsInEveryMode) {
  for (const char* stage : {"createRuntime", "prestart", "precreate"}) {
    FakeHookOps ops;
    ops.config = MakeError("/etc/oci-rlimit/config.toml: on-error: \"maybe\" is not ...");
    ops.stdin_text = std::string(kState);
    EXPECT_EQ(RunHook({"oci-rlimit-hook", stage}, ops), 1) << stage;
    EXPECT_EQ(ops.stdin_reads, 0) << stage;
    EXPECT_EQ(ops.stdout_text, "") << stage;
    ASSERT_EQ(ops.stderr_lines.size(), 1u) << stage;
    EXPECT_NE(ops.stderr_lines[0].find("maybe"), std::string::npos);
  }
}

TEST(HookConfig, ConfigFlagReachesTheLoader) {
  FakeHookOps ops;
  EXPECT_EQ(RunHook({"oci-rlimit-hook", "--config", "/x.toml", "prestart"}, ops), 0);
  EXPECT_EQ(ops.config_flag, std::optional<std::string>("/x.toml"));
}

TEST(HookArgs, UsageErrorIsTwoAndHelpGoesToStdout) {
  FakeHookOps ops;
  EXPECT_EQ(RunHook({"oci-rlimit-hook", "poststop"}, ops), 2);
  EXPECT_EQ(ops.stdout_text, "");
  ASSERT_EQ(ops.stderr_lines.size(), 1u);
  FakeHookOps help;
  EXPECT_EQ(RunHook({"oci-rlimit-hook", "--help"}, help), 0);
  EXPECT_NE(help.stdout_text.find("usage: oci-rlimit-hook"), std::string::npos);
  EXPECT_FALSE(help.config_flag) << "help loads no config";
}

// ---------------------------------------------------------------------------
// A rootless engine (not the initial user namespace): a hard limit above the
// target's (8M:8M in the fake) is cut to it with a warning; rootless = "fail"
// makes that cut an error, which on-error then decides on.

struct RootlessCase {
  const char* name;
  const char* stage;
  const char* rootless;
  OnError on_error;
  int rc;
  const char* result;  // what reached prlimit (apply) or a piece of stdout (precreate)
  const char* says;
};

const RootlessCase kRootlessCases[] = {
    {"ApplyDegradesToTheTargetsHardLimit", "prestart", "degrade", OnError::kFail, 0,
     "4242 8 8388608:8388608", "warning: rootless"},
    {"ApplyRootlessFailRefusesUnderFail", "prestart", "fail", OnError::kFail, 1, "",
     "container \"c1\""},
    {"ApplyRootlessFailIsExcusedUnderWarn", "prestart", "fail", OnError::kWarn, 0, "",
     "warning: on-error = \"warn\""},
    {"PrecreateDegradesToOurHardLimit", "precreate", "degrade", OnError::kFail, 0,
     R"({"type":"RLIMIT_MEMLOCK","hard":8388608,"soft":8388608})", "warning: rootless"},
    {"PrecreateRootlessFailUnderWarnEchoesStdin", "precreate", "fail", OnError::kWarn, 0, "ECHO",
     "warning: on-error = \"warn\""},
    {"PrecreateRootlessFailUnderFailWritesNothing", "precreate", "fail", OnError::kFail, 1, "",
     "memlock"},
};

class HookRootless : public ::testing::TestWithParam<RootlessCase> {};

TEST_P(HookRootless, FitsOrFails) {
  const RootlessCase& c = GetParam();
  FakeHookOps ops;
  Config cfg =
      Parse(std::string("rlimits = [\"memlock=16M\"]\nrootless = \"") + c.rootless + "\"\n");
  cfg.on_error = c.on_error;
  ops.config = cfg;
  ops.process.initial_userns = false;
  const bool precreate = std::string_view(c.stage) == "precreate";
  // The fit reads the limits before any pidfd: of the hook itself (precreate)
  // or of the container; the fake checks every read names that pid.
  ops.process.opened_pid = precreate ? 99 : 4242;
  const std::string spec = " " + Spec("") + "\n";
  ops.stdin_text = precreate ? spec : std::string(kState);
  ops.files[kSpecPath] = Spec("");

  EXPECT_EQ(RunHook({"oci-rlimit-hook", c.stage}, ops), c.rc) << ops.Stderr();
  EXPECT_NE(ops.Stderr().find(c.says), std::string::npos) << ops.Stderr();
  std::string applied;
  for (const auto& set : ops.process.sets) applied += set;
  if (!precreate) {
    EXPECT_EQ(applied, c.result);
  } else if (std::string_view(c.result) == "ECHO") {
    EXPECT_EQ(ops.stdout_text, spec) << "stdin back, byte for byte";
  } else if (std::string_view(c.result).empty()) {
    EXPECT_EQ(ops.stdout_text, "");
  } else {
    EXPECT_NE(ops.stdout_text.find(c.result), std::string::npos) << ops.stdout_text;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HookRootless, ::testing::ValuesIn(kRootlessCases), CaseName{});

// ---------------------------------------------------------------------------
// Chain mode.

constexpr const char* kChained = "/usr/local/bin/next-hook";

struct ChainCase {
  const char* name;
  const char* argv0;
  std::string config;
  std::optional<FileId> target;  // what stat(2) of the target says; nullopt: missing
  int set_errno;
  OnError on_error;
  int rc;
  const char* exec_path;  // nullptr: no exec
  bool applied;
  int stdin_reads;  // 0: refused before stdin was read
  const char* says;
};

std::string ChainConfig(const std::string& path) {
  return std::string(kTopLevel) + "[hook]\nchain = \"" + path + "\"\n";
}

const ChainCase kChainCases[] = {
    {"TargetFoundAppliesThenExecs", "oci-rlimit-hook", ChainConfig(kChained),
     FileId{1, 50, kExecutable}, 0, OnError::kFail, 1, kChained, true, 1, "exec"},
    {"NvidiaNameChainsWithoutConfig", "/usr/local/bin/nvidia-container-runtime-hook", kTopLevel,
     FileId{1, 51, kExecutable}, 0, OnError::kFail, 1, "/usr/bin/nvidia-container-runtime-hook",
     true, 1, "exec"},
    {"NothingConfiguredStillChains", "oci-rlimit-hook",
     "[hook]\nchain = \"" + std::string(kChained) + "\"\n", FileId{1, 50, kExecutable}, 0,
     OnError::kFail, 1, kChained, false, 1, "exec"},
    {"TargetMissingFailsBeforeApply", "oci-rlimit-hook", ChainConfig(kChained), std::nullopt, 0,
     OnError::kWarn, 1, nullptr, false, 0, kChained},
    {"TargetNotExecutableFails", "oci-rlimit-hook", ChainConfig(kChained),
     FileId{1, 50, S_IFREG | 0644}, 0, OnError::kWarn, 1, nullptr, false, 0, kChained},
    {"LoopToItselfFailsBeforeApply", "oci-rlimit-hook", ChainConfig(kChained),
     FileId{1, 1, kExecutable}, 0, OnError::kWarn, 1, nullptr, false, 0, kChained},
    {"ApplyFailureWarnStillChains", "oci-rlimit-hook", ChainConfig(kChained),
     FileId{1, 50, kExecutable}, EPERM, OnError::kWarn, 1, kChained, false, 1, "container \"c1\""},
    {"ApplyFailureFailDoesNotChain", "oci-rlimit-hook", ChainConfig(kChained),
     FileId{1, 50, kExecutable}, EPERM, OnError::kFail, 1, nullptr, false, 1, "container \"c1\""},
};

class HookChain : public ::testing::TestWithParam<ChainCase> {};

TEST_P(HookChain, Decision) {
  const ChainCase& c = GetParam();
  FakeHookOps ops;
  Configure(ops, c.config, c.on_error);
  ops.stdin_text = std::string(kState) + "\n";
  ops.files[kSpecPath] = Spec("");
  FailEverySet(ops.process, c.set_errno);
  const std::string target = std::string_view(c.argv0).ends_with("nvidia-container-runtime-hook")
                                 ? "/usr/bin/nvidia-container-runtime-hook"
                                 : kChained;
  if (c.target) ops.stats[target] = *c.target;
  const std::vector<std::string> argv = {c.argv0, "prestart"};

  EXPECT_EQ(RunHook(argv, ops), c.rc) << ops.Stderr();
  EXPECT_EQ(ops.stdin_reads, c.stdin_reads) << "stdin is read once, after the target check";
  EXPECT_EQ(!ops.process.sets.empty(), c.applied);
  if (c.exec_path == nullptr) {
    EXPECT_FALSE(ops.exec);
  } else {
    ASSERT_TRUE(ops.exec);
    EXPECT_EQ(ops.exec->path, c.exec_path);
    EXPECT_EQ(ops.exec->argv, argv) << "the same argv";
    EXPECT_EQ(ops.exec->stdin_bytes, std::string(kState) + "\n") << "the same state bytes";
  }
  EXPECT_NE(ops.Stderr().find(c.says), std::string::npos) << ops.Stderr();
}

INSTANTIATE_TEST_SUITE_P(Cases, HookChain, ::testing::ValuesIn(kChainCases), CaseName{});

TEST(HookChain, PrecreateNeverChains) {
  FakeHookOps ops;
  ops.config = Parse(ChainConfig(kChained));
  ops.stats[kChained] = FileId{1, 50, kExecutable};
  ops.stdin_text = Spec("");
  EXPECT_EQ(RunHook({"oci-rlimit-hook", "precreate"}, ops), 0) << ops.Stderr();
  EXPECT_FALSE(ops.exec);
}

// ---------------------------------------------------------------------------
// precreate: spec in on stdin, spec out on stdout.

// Odd spacing and key order, so that a re-dump can never pass for stdin itself.
const std::string kOddSpec =
    "{ \"process\" : {\"args\":[\"sh\"] },\n  \"ociVersion\":\"1.0.2\",\n"
    "  \"annotations\": {\"oci-rlimit.io/rlimits\": \"memlock=lots\"} }\n";
const std::string kOddSpecNoAnnotation =
    "{ \"process\" : {\"args\":[\"sh\"] },\n  \"ociVersion\":\"1.0.2\" }\n";
const std::string kBadRlimits =
    "{ \"ociVersion\":\"1.0.2\", \"process\": {\"args\":[\"sh\"], \"rlimits\": \"many\"} }";

struct PrecreateCase {
  const char* name;
  const char* config;  // TOML without on-error
  std::string input;
  OnError on_error;
  int rc;
  bool echoes_input;    // stdout is stdin, byte for byte
  const char* out_has;  // else: stdout contains this ("" when stdout must be empty)
  const char* says;     // in stderr and in the log line
};

const PrecreateCase kPrecreateCases[] = {
    {"MergesTopLevel", kTopLevel, kOddSpecNoAnnotation, OnError::kFail, 0, false,
     R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576})", ""},
    {"MergesGrantedRequest", kRequests, Spec("memlock=2M:5M"), OnError::kFail, 0, false,
     R"({"type":"RLIMIT_MEMLOCK","hard":5242880,"soft":2097152})", ""},
    // A bad request is the request's error: under "warn" the node's limits stay.
    {"MalformedRequestWarnMergesTopLevel", kRequests, kOddSpec, OnError::kWarn, 0, false,
     R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576})", "lots"},
    {"MalformedRequestFailWritesNothing", kRequests, kOddSpec, OnError::kFail, 1, false, "",
     "lots"},
    {"RejectedRequestWarnMergesTopLevel", kRejecting,
     "{\"ociVersion\":\"1.0.2\",  \"annotations\":{\"oci-rlimit.io/rlimits\":\"memlock=8M\"}}",
     OnError::kWarn, 0, false, R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576})",
     "memlock=8M"},
    {"RejectedRequestFailWritesNothing", kRejecting,
     "{\"ociVersion\":\"1.0.2\",  \"annotations\":{\"oci-rlimit.io/rlimits\":\"memlock=8M\"}}",
     OnError::kFail, 1, false, "", "memlock"},
    {"UndecidableDisputeRefusedUnderWarn", kGpuNamespaces, kDisputedSpec, OnError::kWarn, 1, false,
     "", "disputed pod facts (the pod's namespace"},
    {"FailingMergeWarnEchoesStdin", kTopLevel, kBadRlimits, OnError::kWarn, 0, true, "", "rlimits"},
    {"FailingMergeFailWritesNothing", kTopLevel, kBadRlimits, OnError::kFail, 1, false, "",
     "rlimits"},
    {"NotJsonWarnEchoesStdin", kTopLevel, "{\"process\": ", OnError::kWarn, 0, true, "",
     "precreate spec"},
    {"NotJsonFailWritesNothing", kTopLevel, "{\"process\": ", OnError::kFail, 1, false, "",
     "precreate spec"},
    // runc's Go decoder folds "rlimit\u017f" (long s) to "rlimits": the same
    // refusal as the wrapper's, not an edit runc would read past.
    {"KeyCaseFoldFailWritesNothing", kTopLevel,
     "{\"process\":{\"args\":[\"sh\"],\"rlimit\xc5\xbf\":[]}}", OnError::kFail, 1, false, "",
     "in process differs only by case from"},
    {"DuplicateKeyFailWritesNothing", kTopLevel,
     "{\"process\":{\"args\":[\"sh\"]},\"process\":{\"args\":[\"sh\"]}}", OnError::kFail, 1, false,
     "", "appears twice"},
};

class HookPrecreate : public ::testing::TestWithParam<PrecreateCase> {};

TEST_P(HookPrecreate, SpecOutAndMessage) {
  const PrecreateCase& c = GetParam();
  FakeHookOps ops;
  Configure(ops, c.config, c.on_error);
  ops.stdin_text = c.input;

  EXPECT_EQ(RunHook({"oci-rlimit-hook", "precreate"}, ops), c.rc) << ops.Stderr();
  if (c.echoes_input) {
    EXPECT_EQ(ops.stdout_text, c.input) << "stdin back, byte for byte";
  } else if (std::string_view(c.out_has).empty()) {
    EXPECT_EQ(ops.stdout_text, "") << "nothing written";
  } else {
    EXPECT_NE(ops.stdout_text.find(c.out_has), std::string::npos) << ops.stdout_text;
  }
  EXPECT_TRUE(ops.process.sets.empty()) << "precreate edits the spec, it sets nothing";
  if (std::string_view(c.says).empty()) {
    EXPECT_EQ(ops.Stderr(), "");
    ASSERT_EQ(ops.log_lines.size(), 1u) << "one line per spec edit, as the wrapper writes";
    EXPECT_NE(ops.log_lines[0].second.find(" id=\"precreate\" via=\"precreate\" set memlock="),
              std::string::npos)
        << ops.log_lines[0].second;
  } else {
    EXPECT_NE(ops.Stderr().find(c.says), std::string::npos) << ops.Stderr();
    ASSERT_EQ(ops.log_lines.size(), 1u);
    EXPECT_NE(ops.log_lines[0].second.find("id=\"precreate\""), std::string::npos)
        << ops.log_lines[0].second;
    EXPECT_NE(ops.log_lines[0].second.find(c.says), std::string::npos) << ops.log_lines[0].second;
  }
  if (c.echoes_input) {
    EXPECT_NE(ops.Stderr().find("warning"), std::string::npos) << ops.Stderr();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HookPrecreate, ::testing::ValuesIn(kPrecreateCases), CaseName{});

TEST(HookPrecreate, StdoutFailureIsAFailureUnderFail) {
  FakeHookOps ops;
  ops.config = Parse(kTopLevel);
  ops.stdin_text = Spec("");
  ops.fail_stdout = true;
  EXPECT_EQ(RunHook({"oci-rlimit-hook", "precreate"}, ops), 1);
  EXPECT_NE(ops.Stderr().find("write spec to stdout"), std::string::npos) << ops.Stderr();
}

}  // namespace
}  // namespace ocirlimit
