// Rootful podman (4.3.1 here), with all state in a temp dir: oci-rlimit-runtime
// as `--runtime`, and oci-rlimit-hook from a hooks.d dir at the precreate
// stage (spec edit) and the createRuntime stage (prlimit) under runc and crun.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr const char* kGoodConfig = "rlimits = [\"memlock=1M:4M\"]\n";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
constexpr const char* kUlimit = "memlock=2097152:8388608";
constexpr Limit kUlimitSeen{2 << 20, 8 << 20};

// One podman state dir (and imported image) for the suite. Podman hands the
// runtime only containers.conf's conmon_env_vars, so that is where
// OCI_RLIMIT_CONFIG goes for the wrapper; the hooks get --config.
class PodmanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (MissingPrerequisite({"podman", "conmon", "runc"})) return;
    suite_dir_ = std::make_unique<TempDir>();
    WriteFile(ConfigPath(), kGoodConfig);
    podman_ = std::make_unique<Podman>(Podman::Options{{"OCI_RLIMIT_CONFIG=" + ConfigPath()}});
  }
  static void TearDownTestSuite() {
    podman_.reset();
    suite_dir_.reset();
  }

  void SetUp() override {
    OCI_RLIMIT_REQUIRE("podman", "conmon", "runc");
    ASSERT_TRUE(podman_ && podman_->ok()) << (podman_ ? podman_->error() : "no podman");
    WriteFile(ConfigPath(), kGoodConfig);
  }

  void TearDown() override {
    for (const auto& name : started_) podman_->Cmd({"rm", "--force", "--time", "0", name});
    // The suite's daemon outlives the test: leave it a config its runtime calls can use.
    if (suite_dir_) WriteFile(ConfigPath(), kGoodConfig);
  }

  static std::string ConfigPath() { return *suite_dir_ / "config.toml"; }
  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }
  static void AssertWrapperBuilt() {
    ASSERT_TRUE(Which(Wrapper())) << Wrapper() << " has not been built";
  }

  // A hooks.d dir holding one oci-hooks 1.0.0 file for oci-rlimit-hook.
  std::string HooksDir(const std::string& stage) {
    std::string hooks = dir_ / ("hooks-" + stage);
    std::filesystem::create_directories(hooks);
    Json file = {{"version", "1.0.0"},
                 {"hook",
                  {{"path", OurBinary("oci-rlimit-hook")},
                   {"args", {"oci-rlimit-hook", "--config", ConfigPath(), stage}}}},
                 {"when", {{"always", true}}},
                 {"stages", {stage}}};
    WriteFile(hooks + "/oci-rlimit.json", file.dump(2));
    return hooks;
  }

  // `podman run -d ... sleep 60`; removed at the end of the test.
  std::string StartDetached(const std::vector<std::string>& global,
                            const std::vector<std::string>& flags) {
    std::string name = UniqueId("podman");
    std::vector<std::string> args = global;
    args.insert(args.end(), {"run", "-d", "--network", "none", "--ulimit", "nofile=20000:20000",
                             "--ulimit", "nproc=32768:32768", "--name", name});
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {std::string("localhost/") + kBusyboxImage, "sleep", "60"});
    started_.push_back(name);
    CmdResult r = podman_->Cmd(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return name;
  }

  std::optional<Limit> ExecMemlock(const std::vector<std::string>& global, const std::string& name,
                                   const std::string& file) {
    std::vector<std::string> args = global;
    args.insert(args.end(), {"exec", name, "cat", file});
    return MemlockOf(podman_->Cmd(args));
  }

  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<Podman> podman_;
  TempDir dir_;
  std::vector<std::string> started_;
};

const std::vector<std::string> kRunc = {"--runtime", "runc"};

TEST_F(PodmanTest, WrapperRuntimeSetsTheConfiguredLimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(podman_->Run(kRunc, {}, kCatLimits)), kHost) << "baseline: plain runc";
  EXPECT_EQ(MemlockOf(podman_->Run({"--runtime", Wrapper()}, {}, kCatLimits)), kConfigured);
}

TEST_F(PodmanTest, WrapperRuntimeOverridesASameTypeUlimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(podman_->Run(kRunc, {"--ulimit", kUlimit}, kCatLimits)), kUlimitSeen)
      << "baseline: plain runc";
  EXPECT_EQ(MemlockOf(podman_->Run({"--runtime", Wrapper()}, {"--ulimit", kUlimit}, kCatLimits)),
            kConfigured);
}

// Podman's exec process carries the container's rlimits list (nofile and
// nproc here), so runc uses that list and the exec'd process would keep the
// host's memlock without the wrapper's edit of the --process file.
TEST_F(PodmanTest, ExecUnderTheWrapperRuntimeSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string baseline = StartDetached(kRunc, {});
  ASSERT_EQ(ExecMemlock(kRunc, baseline, "/proc/self/limits"), kHost) << "baseline: plain runc";
  const std::vector<std::string> wrapper = {"--runtime", Wrapper()};
  std::string name = StartDetached(wrapper, {});
  EXPECT_EQ(ExecMemlock(wrapper, name, "/proc/1/limits"), kConfigured) << "the init process";
  EXPECT_EQ(ExecMemlock(wrapper, name, "/proc/self/limits"), kConfigured) << "the exec'd process";

  // The same container, with nothing configured at exec time: the exec gets
  // the decision recorded at create (docs/runtime-mode.md, one decision per
  // container), not what the config says now.
  WriteFile(ConfigPath(), "rlimits = []\n");
  EXPECT_EQ(ExecMemlock(wrapper, name, "/proc/self/limits"), kConfigured)
      << "a running container keeps the decision recorded at create, whatever the config says now";
}

// Podman 4.3.1 does run precreate hooks (found by running it): the hook gets
// the proposed spec on stdin and podman uses the spec it writes back. Being a
// spec edit, it also beats a same-type --ulimit, even under runc.
TEST_F(PodmanTest, PrecreateHookEditsTheSpec) {
  std::vector<std::string> global = kRunc;
  global.insert(global.end(), {"--hooks-dir", HooksDir("precreate")});
  ASSERT_EQ(MemlockOf(podman_->Run(kRunc, {}, kCatLimits)), kHost) << "baseline: no hook";
  EXPECT_EQ(MemlockOf(podman_->Run(global, {}, kCatLimits)), kConfigured);
  EXPECT_EQ(MemlockOf(podman_->Run(global, {"--ulimit", kUlimit}, kCatLimits)), kConfigured)
      << "with a same-type --ulimit";
}

// Exec sessions, hook paths (docs/matrix.md): a createRuntime hook sets the
// init process's limits only, so `podman exec` does not see them. Nor does it
// see a precreate edit: podman 4.3.1 builds exec processes from the spec it
// generated, not from the one the precreate hook returned (found by this test).
TEST_F(PodmanTest, ExecSessionsAfterACreateRuntimeHookAndAfterPrecreate) {
  std::vector<std::string> create_runtime = kRunc;
  create_runtime.insert(create_runtime.end(), {"--hooks-dir", HooksDir("createRuntime")});
  std::string hooked = StartDetached(create_runtime, {});
  EXPECT_EQ(ExecMemlock(kRunc, hooked, "/proc/1/limits"), kConfigured) << "createRuntime: init";
  EXPECT_EQ(ExecMemlock(kRunc, hooked, "/proc/self/limits"), kHost) << "createRuntime: exec";

  std::vector<std::string> precreate = kRunc;
  precreate.insert(precreate.end(), {"--hooks-dir", HooksDir("precreate")});
  std::string edited = StartDetached(precreate, {});
  EXPECT_EQ(ExecMemlock(kRunc, edited, "/proc/1/limits"), kConfigured) << "precreate: init";
  EXPECT_EQ(ExecMemlock(kRunc, edited, "/proc/self/limits"), kHost) << "precreate: exec";
}

TEST_F(PodmanTest, WrapperRuntimeWithABrokenConfigFailsTheRunWithOurMessage) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), "rlimits = [\"memlok=1\"]\n");
  CmdResult r = podman_->Run({"--runtime", Wrapper()}, {}, kCatLimits);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(r.err.find("oci-rlimit-runtime: config \"" + ConfigPath() +
                       "\": rlimits: rlimit \"memlok=1\": unknown name \"memlok\""),
            std::string::npos)
      << r.err;
}

// A malformed request under on-error = "warn" is the request's error: the
// precreate hook merges the top-level limits without it.
TEST_F(PodmanTest, PrecreateHookWithWarnAndAMalformedRequestKeepsTheTopLevelLimits) {
  WriteFile(ConfigPath(),
            "on-error = \"warn\"\nrlimits = [\"memlock=1M:4M\"]\n"
            "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  std::vector<std::string> global = kRunc;
  global.insert(global.end(), {"--hooks-dir", HooksDir("precreate")});
  CmdResult r =
      podman_->Run(global, {"--annotation", "oci-rlimit.io/rlimits=memlock=lots"}, kCatLimits);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{1 << 20, 4 << 20})) << "the top-level limit";
}

// Podman 4.3.1 does not show a failing precreate hook's stderr: only the
// hook's argv and exit status reach the user.
TEST_F(PodmanTest, PrecreateHookWithABrokenConfigFailsTheRun) {
  WriteFile(ConfigPath(), "rlimits = [\"memlok=1\"]\n");
  std::vector<std::string> global = kRunc;
  global.insert(global.end(), {"--hooks-dir", HooksDir("precreate")});
  CmdResult r = podman_->Run(global, {}, kCatLimits);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(r.err.find("setting up OCI Hooks: executing [oci-rlimit-hook --config " + ConfigPath() +
                       " precreate]: exit status 1"),
            std::string::npos)
      << r.err;
}

class PodmanCreateRuntimeHookTest : public PodmanTest,
                                    public ::testing::WithParamInterface<std::string> {
 protected:
  std::vector<std::string> Runtime() {
    if (GetParam() == "crun") return {"--runtime", CrunCommand(dir_.path())};
    return kRunc;
  }
};

TEST_P(PodmanCreateRuntimeHookTest, SetsTheConfiguredLimit) {
  OCI_RLIMIT_REQUIRE(GetParam(), "unshare");
  std::vector<std::string> global = Runtime();
  ASSERT_EQ(MemlockOf(podman_->Run(global, {}, kCatLimits)), kHost) << "baseline: no hook";
  global.insert(global.end(), {"--hooks-dir", HooksDir("createRuntime")});
  EXPECT_EQ(MemlockOf(podman_->Run(global, {}, kCatLimits)), kConfigured);
}

// The notes' runc/crun difference, through podman: runc re-applies the
// spec's same-type entry after the hooks, crun applies it before them. The
// config keeps the --ulimit's hard limit, so runc can re-apply it.
TEST_P(PodmanCreateRuntimeHookTest, SameTypeUlimit) {
  OCI_RLIMIT_REQUIRE(GetParam(), "unshare");
  WriteFile(ConfigPath(), "rlimits = [\"memlock=1M:8M\"]\n");
  std::vector<std::string> global = Runtime();
  global.insert(global.end(), {"--hooks-dir", HooksDir("createRuntime")});
  auto seen = MemlockOf(podman_->Run(global, {"--ulimit", kUlimit}, kCatLimits));
  if (GetParam() == "runc") {
    EXPECT_EQ(seen, kUlimitSeen) << "runc: the spec's value wins";
  } else {
    EXPECT_EQ(seen, (Limit{1 << 20, 8 << 20})) << "crun: the hook's value wins";
  }
}

// When the hook lowers the hard limit below the --ulimit's, runc cannot
// re-apply the spec's entry (no CAP_SYS_RESOURCE) and the container does not
// start at all; crun keeps the hook's value. Runtime mode and the precreate
// hook edit the spec instead, and have neither problem.
TEST_P(PodmanCreateRuntimeHookTest, SameTypeUlimitWithAHigherHardLimit) {
  OCI_RLIMIT_REQUIRE(GetParam(), "unshare");
  std::vector<std::string> global = Runtime();
  global.insert(global.end(), {"--hooks-dir", HooksDir("createRuntime")});
  CmdResult r = podman_->Run(global, {"--ulimit", kUlimit}, kCatLimits);
  if (GetParam() == "runc") {
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
    EXPECT_NE(r.err.find("error setting rlimit type 8: operation not permitted"), std::string::npos)
        << r.err;
  } else {
    EXPECT_EQ(MemlockOf(r), kConfigured) << "crun: the hook's value wins";
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PodmanCreateRuntimeHookTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ocirlimit::itest
