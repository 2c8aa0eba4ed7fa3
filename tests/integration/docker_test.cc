// oci-rlimit-runtime under a real dockerd (daemon.json "runtimes"), started by
// the suite: what `docker run` and `docker exec` processes read from
// /proc/self/limits.
#include <gtest/gtest.h>

#include <memory>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr const char* kGoodConfig = "rlimits = [\"memlock=1M:4M\"]\n";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
// A same-type `--ulimit` that runc can set here (not above the host's hard limit).
constexpr const char* kUlimit = "memlock=2097152:8388608";
constexpr Limit kUlimitSeen{2 << 20, 8 << 20};
// A request under the admin's ceiling, below the daemon's hard limit (no
// CAP_SYS_RESOURCE here), and unlike both the host's and the default.
constexpr const char* kRequestConfig =
    "rlimits = [\"memlock=1M:4M\"]\n[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n";
constexpr const char* kRequestKey = "oci-rlimit.io/rlimits";
constexpr const char* kRequestValue = "memlock=2M:6M";
constexpr Limit kRequested{2 << 20, 6 << 20};

// One dockerd for the suite. Its environment names a config file that each
// test rewrites: the wrapper reads it afresh on every runtime call.
class DockerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (MissingPrerequisite({"dockerd", "runc"})) return;
    suite_dir_ = std::make_unique<TempDir>();
    WriteFile(ConfigPath(), kGoodConfig);
    WriteFile(AnnotatingWrapper(), AnnotatingScript(), 0755);
    Dockerd::Options opts;
    opts.daemon_json = Json{{"runtimes",
                             {{"oci-rlimit", {{"path", Wrapper()}}},
                              {"oci-rlimit-annotated", {{"path", AnnotatingWrapper()}}}}}}
                           .dump(2);
    opts.env = {"OCI_RLIMIT_CONFIG=" + ConfigPath()};
    dockerd_ = std::make_unique<Dockerd>(opts);
  }
  static void TearDownTestSuite() {
    dockerd_.reset();
    suite_dir_.reset();
  }

  void SetUp() override {
    OCI_RLIMIT_REQUIRE("dockerd", "runc");
    ASSERT_TRUE(dockerd_ && dockerd_->ok()) << (dockerd_ ? dockerd_->error() : "no dockerd");
    WriteFile(ConfigPath(), kGoodConfig);
  }

  static std::string ConfigPath() { return *suite_dir_ / "config.toml"; }
  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }
  // docker 20.10 has no `docker run --annotation` (docker 24 and later put
  // it into config.json, as containerd, CRI-O and podman do). This runtime
  // plays that part: at create it adds the request annotation to the
  // bundle's config.json, then it is oci-rlimit-runtime with the same argv.
  static std::string AnnotatingWrapper() { return *suite_dir_ / "annotating-runtime"; }
  static std::string AnnotatingScript() {
    return "#!/bin/sh\n"
           "prev=; bundle=; create=\n"
           "for a in \"$@\"; do\n"
           "  [ \"$prev\" = --bundle ] && bundle=$a\n"
           "  [ \"$a\" = create ] && create=1\n"
           "  prev=$a\n"
           "done\n"
           "if [ -n \"$create\" ] && [ -n \"$bundle\" ]; then\n"
           "  sed -i '1s|^{|{\"annotations\":{\"" +
           std::string(kRequestKey) + "\":\"" + kRequestValue +
           "\"},|' \"$bundle/config.json\" || exit 1\n"
           "fi\n"
           "exec " +
           Wrapper() + " \"$@\"\n";
  }
  static void AssertWrapperBuilt() {
    ASSERT_TRUE(Which(Wrapper())) << Wrapper() << " has not been built";
  }

  // `docker run -d ... sleep 60`; the name, removed at the end of the test.
  std::string StartDetached(const std::vector<std::string>& flags) {
    std::string name = UniqueId("docker");
    std::vector<std::string> args = {"run", "-d", "--network", "none", "--name", name};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {kBusyboxImage, "sleep", "60"});
    CmdResult r = dockerd_->Docker(args);
    EXPECT_EQ(r.status, 0) << r.err;
    started_.push_back(name);
    return name;
  }

  std::optional<Limit> ExecMemlock(const std::string& name, const std::string& file) {
    return MemlockOf(dockerd_->Docker({"exec", name, "cat", file}));
  }

  void TearDown() override {
    for (const auto& name : started_) dockerd_->Docker({"rm", "-f", name});
    // The suite's daemon outlives the test: leave it a config its runtime calls can use.
    if (suite_dir_) WriteFile(ConfigPath(), kGoodConfig);
  }

  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<Dockerd> dockerd_;
  std::vector<std::string> started_;
};

TEST_F(DockerTest, RunWithTheWrapperRuntimeSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(dockerd_->Run({}, kCatLimits)), kHost) << "baseline: docker's own runc";
  EXPECT_EQ(MemlockOf(dockerd_->Run({"--runtime", "oci-rlimit"}, kCatLimits)), kConfigured);
}

TEST_F(DockerTest, ExecIntoAWrapperContainerSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string name = StartDetached({"--runtime", "oci-rlimit"});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kConfigured) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kConfigured) << "the exec'd process";

  // The same container, with nothing configured at exec time: the exec'd
  // process does not inherit the init process's limit by itself.
  WriteFile(ConfigPath(), "rlimits = []\n");
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kHost) << "an exec the wrapper did not edit";
}

// With --ulimit, docker's stored spec (and so the exec process file) carries
// its own memlock entry: the exec'd process gets it unless the wrapper edits
// the --process file.
TEST_F(DockerTest, ExecWithASameTypeUlimitSeesTheConfiguredLimit) {
  AssertWrapperBuilt();
  std::string baseline = StartDetached({"--ulimit", kUlimit});
  ASSERT_EQ(ExecMemlock(baseline, "/proc/self/limits"), kUlimitSeen) << "baseline: docker's runc";
  std::string name = StartDetached({"--runtime", "oci-rlimit", "--ulimit", kUlimit});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kConfigured) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kConfigured) << "the exec'd process";
}

// Exec gets what init got: a granted request (the container's annotation)
// reaches a `docker exec` session. docker builds the exec process from its
// stored spec, which carries no annotations; the wrapper decides from the
// container's own config.json, found through `RUNTIME state`.
TEST_F(DockerTest, GrantedRequestReachesADockerExecSession) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), kRequestConfig);
  std::string name = StartDetached({"--runtime", "oci-rlimit-annotated"});
  EXPECT_EQ(ExecMemlock(name, "/proc/1/limits"), kRequested) << "the init process";
  EXPECT_EQ(ExecMemlock(name, "/proc/self/limits"), kRequested)
      << "the exec'd process: the request, not the top-level default";
}

TEST_F(DockerTest, ConfigOverridesASameTypeUlimit) {
  AssertWrapperBuilt();
  ASSERT_EQ(MemlockOf(dockerd_->Run({"--ulimit", kUlimit}, kCatLimits)), kUlimitSeen)
      << "baseline: docker's own runc";
  EXPECT_EQ(MemlockOf(dockerd_->Run({"--runtime", "oci-rlimit", "--ulimit", kUlimit}, kCatLimits)),
            kConfigured);
}

TEST_F(DockerTest, BrokenConfigFailsTheRunWithOurMessage) {
  AssertWrapperBuilt();
  WriteFile(ConfigPath(), "rlimits = [\"memlok=1\"]\n");
  CmdResult r = dockerd_->Run({"--runtime", "oci-rlimit"}, kCatLimits);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = r.err;
  shown = Unescaped(shown);
  EXPECT_NE(shown.find("oci-rlimit-runtime: "), std::string::npos) << r.err;
  EXPECT_NE(shown.find("unknown name \"memlok\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ocirlimit::itest
