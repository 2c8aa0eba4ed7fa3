// oci-rlimit-hook under real runc and crun: what the container's own
// process reads from /proc/self/limits.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

class HookTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc", GetParam(), "unshare", "prlimit");
    bundle_ = dir_ / "bundle";
    spec_ = MakeBundle(bundle_, {"cat", "/proc/self/limits"});
    runtime_ = GetParam() == "crun" ? CrunCommand(dir_.path()) : "runc";
  }

  void UseConfig(const std::string& toml) { WriteFile(config_path(), toml); }
  std::string config_path() const { return dir_ / "config.toml"; }
  std::string log_path() const { return dir_ / "hook.log"; }

  void AddHook(const std::string& stage) {
    spec_["hooks"][stage] = Json::array({HookEntry(
        OurBinary("oci-rlimit-hook"), {"oci-rlimit-hook", "--config", config_path(), stage})});
  }

  // `prefix` runs the runtime under another command, e.g. prlimit.
  CmdResult RunContainer(const std::vector<std::string>& prefix = {}) {
    WriteSpec(bundle_, spec_);
    std::vector<std::string> argv = prefix;
    for (const auto& a : {runtime_, std::string("--root"), dir_ / "state", std::string("run"),
                          std::string("--bundle"), bundle_, UniqueId("hook")}) {
      argv.push_back(a);
    }
    return RunCmd(argv);
  }

  std::optional<Limit> MemlockSeen(const std::vector<std::string>& prefix = {}) {
    CmdResult r = RunContainer(prefix);
    EXPECT_EQ(r.status, 0) << r.err;
    return LimitRow(r.out, kMemlock);
  }

  TempDir dir_;
  std::string bundle_;
  std::string runtime_;
  Json spec_;
};

TEST_P(HookTest, CreateRuntimeStageLowersMemlock) {
  ASSERT_EQ(MemlockSeen(), (Limit{8 << 20, 8 << 20})) << "host baseline changed";
  UseConfig("rlimits = [\"memlock=1M:4M\"]\n");
  AddHook("createRuntime");
  EXPECT_EQ(MemlockSeen(), (Limit{1 << 20, 4 << 20}));
}

TEST_P(HookTest, PrestartStageLowersMemlock) {
  UseConfig("rlimits = [\"memlock=2M:4M\"]\n");
  AddHook("prestart");
  EXPECT_EQ(MemlockSeen(), (Limit{2 << 20, 4 << 20}));
}

// Raising the soft limit up to the hard one needs no CAP_SYS_RESOURCE, so
// it is the raise this sandbox can prove.
TEST_P(HookTest, RaisesSoftLimitUpToHard) {
  const std::vector<std::string> low = {"prlimit", "--memlock=1048576:8388608"};
  ASSERT_EQ(MemlockSeen(low), (Limit{1 << 20, 8 << 20})) << "without the hook";
  UseConfig("rlimits = [\"memlock=8M\"]\n");
  AddHook("createRuntime");
  EXPECT_EQ(MemlockSeen(low), (Limit{8 << 20, 8 << 20}));
}

TEST_P(HookTest, SetsSeveralLimitsAndLogsOneLine) {
  UseConfig("rlimits = [\"memlock=64K:1M\", \"core=0\"]\nlog-file = \"" + log_path() + "\"\n");
  AddHook("createRuntime");
  CmdResult r = RunContainer();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{64 << 10, 1 << 20}));
  EXPECT_EQ(LimitRow(r.out, "Max core file size"), (Limit{0, 0}));
  std::string log = ReadFile(log_path());
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_NE(log.find("memlock 8388608:8388608->65536:1048576"), std::string::npos) << log;
}

// runc applies the spec's process.rlimits after the hooks; crun before.
TEST_P(HookTest, SameTypeSpecEntry) {
  spec_["process"]["rlimits"].push_back(
      {{"type", "RLIMIT_MEMLOCK"}, {"hard", 8 << 20}, {"soft", 2 << 20}});
  UseConfig("rlimits = [\"memlock=1M:8M\"]\nlog-file = \"" + log_path() + "\"\n");
  AddHook("createRuntime");
  auto seen = MemlockSeen();
  if (GetParam() == "runc") {
    EXPECT_EQ(seen, (Limit{2 << 20, 8 << 20})) << "runc: the spec's value wins";
  } else {
    EXPECT_EQ(seen, (Limit{1 << 20, 8 << 20})) << "crun: the hook's value wins";
  }
  std::string log = ReadFile(log_path());
  EXPECT_NE(log.find("warning=\"spec process.rlimits sets RLIMIT_MEMLOCK to 2097152:8388608; runc "
                     "re-applies it after hooks"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("oci-rlimit-runtime"), std::string::npos) << log;
}

// runc puts a failing hook's stderr into its own error (escaped, logfmt
// style); crun discards it unless the run.oci.hooks.stderr annotation names
// a file.
TEST_P(HookTest, MalformedConfigFailsTheStartWithTheHookMessage) {
  UseConfig("rlimits = [\"memlok=1M\"]\n");
  AddHook("createRuntime");
  const std::string hook_stderr = dir_ / "hook-stderr";
  spec_["annotations"]["run.oci.hooks.stderr"] = hook_stderr;
  CmdResult r = RunContainer();
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = GetParam() == "runc" ? r.err : ReadFile(hook_stderr);
  if (GetParam() == "runc") {
    shown = Unescaped(shown);
  }
  EXPECT_NE(shown.find("oci-rlimit-hook: config \"" + config_path() +
                       "\": rlimits: rlimit \"memlok=1M\": unknown name \"memlok\""),
            std::string::npos)
      << "runtime stderr: " << r.err << "\nhook stderr: " << shown;
}

// memlock=unlimited above the 8M hard limit in force, rootful, without
// CAP_SYS_RESOURCE: the start fails with the one unraisable message, which
// does not blame a rootless runtime.
TEST_P(HookTest, AnUnraisableLimitFailsTheStartWithTheOneMessage) {
  UseConfig("rlimits = [\"memlock=unlimited\"]\n");
  AddHook("createRuntime");
  const std::string hook_stderr = dir_ / "hook-stderr";
  spec_["annotations"]["run.oci.hooks.stderr"] = hook_stderr;
  CmdResult r = RunContainer({"prlimit", "--memlock=8388608:8388608"});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = GetParam() == "runc" ? Unescaped(r.err) : ReadFile(hook_stderr);
  EXPECT_NE(shown.find("config entry memlock=unlimited: the hard limit in force is 8M, and "
                       "raising it needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have; "
                       "memlock=8M would work"),
            std::string::npos)
      << "runtime stderr: " << r.err << "\nhook stderr: " << shown;
  EXPECT_EQ(shown.find("rootless"), std::string::npos) << shown;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HookTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

// The real hook binary at the precreate stage, as podman runs it: a proposed
// spec on stdin, the spec to use on stdout. Under on-error = "warn" a
// malformed request is the request's error: the top-level limits are merged
// without it, with one warning on stderr and in the log; under "fail" nothing
// is written and the status is 1.
TEST(HookPrecreateBinary, WarnWithAMalformedRequestMergesTheTopLevelLimits) {
  OCI_RLIMIT_REQUIRE("runc");
  TempDir dir;
  Json spec = MakeBundle(dir / "bundle", {"cat", "/proc/self/limits"});
  spec["annotations"]["oci-rlimit.io/rlimits"] = "memlock=lots";
  // Indented and newline-terminated, as no re-dump of ours would write it.
  const std::string input = spec.dump(3) + "\n";
  const std::string requests = "rlimits = [\"memlock=1M:4M\"]\nlog-file = \"" + (dir / "hook.log") +
                               "\"\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n";
  const std::string hook = OurBinary("oci-rlimit-hook");
  ASSERT_TRUE(Which(hook)) << hook << " has not been built";

  WriteFile(dir / "warn.toml", "on-error = \"warn\"\n" + requests);
  RunOptions opts;
  opts.stdin_data = input;
  opts.timeout_s = 20;
  CmdResult warned = RunCmd({hook, "--config", dir / "warn.toml", "precreate"}, opts);
  ASSERT_EQ(warned.status, 0) << warned.err;
  EXPECT_NE(warned.out.find(R"({"type":"RLIMIT_MEMLOCK","hard":4194304,"soft":1048576})"),
            std::string::npos)
      << warned.out;
  EXPECT_EQ(
      warned.err.rfind("oci-rlimit-hook: warning: on-error = \"warn\": the request is left out", 0),
      0u)
      << warned.err;
  EXPECT_NE(warned.err.find("memlock=lots"), std::string::npos) << warned.err;
  EXPECT_EQ(std::count(warned.err.begin(), warned.err.end(), '\n'), 1) << warned.err;
  const std::string log = ReadFile(dir / "hook.log");
  EXPECT_NE(log.find("id=\"precreate\""), std::string::npos) << log;
  EXPECT_NE(log.find("memlock=lots"), std::string::npos) << log;

  WriteFile(dir / "fail.toml", "on-error = \"fail\"\n" + requests);
  CmdResult failed = RunCmd({hook, "--config", dir / "fail.toml", "precreate"}, opts);
  EXPECT_EQ(failed.status, 1) << failed.err;
  EXPECT_EQ(failed.out, "") << "nothing written under on-error = \"fail\"";
  EXPECT_NE(failed.err.find("memlock=lots"), std::string::npos) << failed.err;
}

}  // namespace
}  // namespace ocirlimit::itest
