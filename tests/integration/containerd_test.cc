// oci-rlimit-runtime as the runc shim's binary (`ctr run --runc-binary`, the
// same knob as a Kubernetes RuntimeClass handler's BinaryName) under a real
// containerd started by the suite.
#include <gtest/gtest.h>

#include <memory>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr const char* kGoodConfig = "rlimits = [\"memlock=1M:4M\"]\n";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
// A request under the admin's ceiling, below the daemon's hard limit (no
// CAP_SYS_RESOURCE here), and unlike both the host's and the default.
constexpr const char* kRequestConfig =
    "rlimits = [\"memlock=1M:4M\"]\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n";
constexpr const char* kRequest = "oci-rlimit.io/rlimits=memlock=2M:6M";
constexpr Limit kRequested{2 << 20, 6 << 20};

// ctr runs the rootfs without an image config, so no PATH: absolute paths.
const std::vector<std::string> kAbsCatLimits = {"/bin/cat", "/proc/self/limits"};

// One containerd for the suite; its environment (which the shim and so the
// runtime inherit) names a config file that each test rewrites.
class ContainerdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (MissingPrerequisite({"containerd", "ctr", "runc", "containerd-shim-runc-v2"})) return;
    suite_dir_ = std::make_unique<TempDir>();
    WriteFile(ConfigPath(), kGoodConfig);
    DaemonOptions opts;
    opts.env = {"OCI_RLIMIT_CONFIG=" + ConfigPath()};
    containerd_ = std::make_unique<Containerd>(opts);
  }
  static void TearDownTestSuite() {
    containerd_.reset();
    suite_dir_.reset();
  }

  void SetUp() override {
    OCI_RLIMIT_REQUIRE("containerd", "ctr", "runc", "containerd-shim-runc-v2");
    ASSERT_TRUE(containerd_ && containerd_->ok())
        << (containerd_ ? containerd_->error() : "no containerd");
    WriteFile(ConfigPath(), kGoodConfig);
  }

  void TearDown() override {
    for (const auto& id : started_) containerd_->Remove(id);
    // The suite's daemon outlives the test: leave it a config its runtime calls can use.
    if (suite_dir_) WriteFile(ConfigPath(), kGoodConfig);
  }

  static std::string ConfigPath() { return *suite_dir_ / "config.toml"; }
  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }
  static void AssertWrapperBuilt() {
    ASSERT_TRUE(Which(Wrapper())) << Wrapper() << " has not been built";
  }

  CmdResult RunOnce(const std::vector<std::string>& flags) {
    return containerd_->Run(UniqueId("ctr"), flags, kAbsCatLimits);
  }

  // `ctr run -d ... /bin/sleep 60`; removed at the end of the test.
  std::string StartDetached(const std::vector<std::string>& flags) {
    std::string id = UniqueId("ctr");
    std::vector<std::string> all = {"-d"};
    all.insert(all.end(), flags.begin(), flags.end());
    started_.push_back(id);
    CmdResult r = containerd_->Run(id, all, {"/bin/sleep", "60"});
    EXPECT_EQ(r.status, 0) << r.err;
    return id;
  }

  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<Containerd> containerd_;
  std::vector<std::string> started_;
};

TEST_F(ContainerdTest, RunWithTheWrapperAsRuncBinarySeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(RunOnce({})), kHost) << "baseline: the shim's own runc";
  EXPECT_EQ(MemlockOf(RunOnce({"--runc-binary", Wrapper()})), kConfigured);
}

// ctr's stored spec carries RLIMIT_NOFILE, so the exec process file has a
// non-empty rlimits list, and runc uses that list instead of the
// container's: without the wrapper's edit, the exec'd process would keep the
// host's memlock.
TEST_F(ContainerdTest, TaskExecSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string baseline = StartDetached({});
  ASSERT_EQ(MemlockOf(containerd_->Exec(baseline, "base", kAbsCatLimits)), kHost)
      << "baseline: the shim's own runc";

  std::string id = StartDetached({"--runc-binary", Wrapper()});
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "init", {"/bin/cat", "/proc/1/limits"})), kConfigured)
      << "the init process";
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "self", kAbsCatLimits)), kConfigured)
      << "the exec'd process";

  // The same container, with nothing configured at exec time: the exec gets
  // the decision recorded at create (docs/runtime-mode.md, one decision per
  // container), not what the config says now.
  WriteFile(ConfigPath(), "rlimits = []\n");
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "unedited", kAbsCatLimits)), kConfigured)
      << "a running container keeps the decision recorded at create, whatever the config says now";
}

// Exec gets what init got: a granted request (the container's annotation)
// reaches a `ctr task exec` session. ctr builds the exec process from its
// stored spec; the wrapper decides from the container's own config.json,
// found through `RUNTIME state`.
TEST_F(ContainerdTest, GrantedRequestReachesATaskExecSession) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), kRequestConfig);
  std::string id = StartDetached({"--runc-binary", Wrapper(), "--annotation", kRequest});
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "init", {"/bin/cat", "/proc/1/limits"})), kRequested)
      << "the init process";
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "self", kAbsCatLimits)), kRequested)
      << "the exec'd process: the request, not the top-level default";
}

// The wrapper in front of crun: config [runtime] runtimes names the
// harness's crun command. crun applies only the exec process file's list.
TEST_F(ContainerdTest, WrapperOverCrunRunAndTaskExec) {
  AssertWrapperBuilt();
  OCI_RLIMIT_REQUIRE("crun", "unshare");
  // In the suite's dir: TearDown's kill and delete go through it too.
  const std::string crun = CrunCommand(suite_dir_->path());
  const std::string runtimes = "[runtime]\nruntimes = [\"" + crun + "\"]\n";
  WriteFile(ConfigPath(), std::string(kGoodConfig) + runtimes);
  const std::vector<std::string> wrapper = {"--runc-binary", Wrapper()};
  EXPECT_EQ(MemlockOf(RunOnce(wrapper)), kConfigured);

  std::string id = StartDetached(wrapper);
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "init", {"/bin/cat", "/proc/1/limits"})), kConfigured)
      << "the init process";
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "self", kAbsCatLimits)), kConfigured)
      << "the exec'd process";
  WriteFile(ConfigPath(), "rlimits = []\n" + runtimes);
  EXPECT_EQ(MemlockOf(containerd_->Exec(id, "unedited", kAbsCatLimits)), kConfigured)
      << "a running container keeps the decision recorded at create, whatever the config says now";
}

TEST_F(ContainerdTest, BrokenConfigFailsTheRunWithOurMessage) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), "rlimits = [\"memlok=1\"]\n");
  CmdResult r = RunOnce({"--runc-binary", Wrapper()});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = r.err;
  shown = Unescaped(shown);
  EXPECT_NE(shown.find("oci-rlimit-runtime: "), std::string::npos) << r.err;
  EXPECT_NE(shown.find("unknown name \"memlok\""), std::string::npos) << r.err;
}

// Raising a soft limit up to the hard one needs no CAP_SYS_RESOURCE, so it
// is the raise this sandbox can prove: containerd (and so the shim and the
// runtime) starts with memlock 1M:8M.
TEST(ContainerdRaiseTest, WrapperRaisesTheSoftLimitUpToTheHardOne) {
  OCI_RLIMIT_REQUIRE("containerd", "ctr", "runc", "containerd-shim-runc-v2", "prlimit");
  ASSERT_TRUE(Which(OurBinary("oci-rlimit-runtime"))) << "oci-rlimit-runtime has not been built";
  TempDir dir;
  WriteFile(dir / "config.toml", "rlimits = [\"memlock=8M\"]\n");
  DaemonOptions opts;
  opts.env = {"OCI_RLIMIT_CONFIG=" + (dir / "config.toml")};
  opts.prefix = {"prlimit", "--memlock=1048576:8388608"};
  Containerd containerd(opts);
  ASSERT_TRUE(containerd.ok()) << containerd.error();
  ASSERT_EQ(MemlockOf(containerd.Run(UniqueId("ctr"), {}, kAbsCatLimits)),
            (Limit{1 << 20, 8 << 20}))
      << "baseline: the shim's own runc";
  EXPECT_EQ(
      MemlockOf(containerd.Run(UniqueId("ctr"), {"--runc-binary", OurBinary("oci-rlimit-runtime")},
                               kAbsCatLimits)),
      (Limit{8 << 20, 8 << 20}));
}

}  // namespace
}  // namespace ocirlimit::itest
