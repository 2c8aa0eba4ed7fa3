// Chain mode, the docker `--gpus` path: dockerd runs whatever
// `nvidia-container-runtime-hook` comes first on its PATH as a prestart hook.
// A shim dir holds oci-rlimit-hook under that name; it sets the limits, then
// execs the "NVIDIA hook" (a recording stand-in, record_hook) with the same
// argv, environment and state bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

constexpr const char* kNvidiaName = "nvidia-container-runtime-hook";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kFromDockerdEnv{1 << 20, 4 << 20};
constexpr const char* kMarker = "OCI_RLIMIT_TEST_MARKER=dockerd-env-reaches-the-hook";

std::vector<std::string> NulSplit(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0, end; start < s.size(); start = end + 1) {
    end = s.find('\0', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
  }
  return out;
}

// A copy of record_hook at `path`; its records are path.argv/.env/.stdin.
void PlaceRecorder(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  fs::copy_file(OurBinary("record_hook"), path, fs::copy_options::overwrite_existing);
  for (const char* ext : {".argv", ".env", ".stdin", ".exec"}) fs::remove(path + ext);
}

// One dockerd for the suite, with the shim dir first on its PATH and, as the
// docs recommend, NVIDIA_CONTAINER_RUNTIME_RLIMITS in its environment. Each
// test decides what the shim entry is and rewrites the config (read afresh
// by every hook run).
class DockerGpusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (MissingPrerequisite({"dockerd", "runc"})) return;
    suite_dir_ = std::make_unique<TempDir>();
    fs::create_directories(ShimDir());
    Dockerd::Options opts;
    opts.path_dirs = {ShimDir()};
    opts.env = {"OCI_RLIMIT_CONFIG=" + ConfigPath(),
                "NVIDIA_CONTAINER_RUNTIME_RLIMITS=memlock=1M:4M", kMarker};
    // dockerd registers the "nvidia" GPU driver at start only if the name
    // resolves then; each container looks it up again.
    fs::create_symlink(OurBinary("oci-rlimit-hook"), ShimEntry());
    dockerd_ = std::make_unique<Dockerd>(opts);
  }
  static void TearDownTestSuite() {
    dockerd_.reset();
    suite_dir_.reset();
  }

  void SetUp() override {
    OCI_RLIMIT_REQUIRE("dockerd", "runc");
    ASSERT_TRUE(dockerd_ && dockerd_->ok()) << (dockerd_ ? dockerd_->error() : "no dockerd");
    PlaceRecorder(StandIn());
    UseShimSymlink();
    UseConfig("[hook]\nchain = \"" + StandIn() + "\"\n");
  }

  static std::string ShimDir() { return *suite_dir_ / "shim"; }
  static std::string ShimEntry() { return ShimDir() + "/" + kNvidiaName; }
  static std::string ConfigPath() { return *suite_dir_ / "config.toml"; }
  static std::string StandIn() { return *suite_dir_ / "nvidia/bin/nvidia-container-runtime-hook"; }
  static void UseConfig(const std::string& toml) { WriteFile(ConfigPath(), toml); }

  // The packaged layout: a symlink named like NVIDIA's hook.
  static void UseShimSymlink() {
    fs::remove(ShimEntry());
    fs::create_symlink(OurBinary("oci-rlimit-hook"), ShimEntry());
  }
  // A recording tap in front of our hook, to capture the bytes runc sent.
  static void UseShimTap() {
    fs::remove(ShimEntry());
    PlaceRecorder(ShimEntry());
    WriteFile(ShimEntry() + ".exec", OurBinary("oci-rlimit-hook") + "\n");
  }

  // `docker run --rm --network none --cidfile F [--gpus all] bb cat /proc/self/limits`.
  CmdResult RunCat(bool gpus) {
    fs::remove(cidfile());
    std::vector<std::string> flags = {"--cidfile", cidfile()};
    if (gpus) flags.insert(flags.end(), {"--gpus", "all"});
    return dockerd_->Run(flags, kCatLimits);
  }
  std::string cidfile() const { return dir_ / "cid"; }

  TempDir dir_;
  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<Dockerd> dockerd_;
};

TEST_F(DockerGpusTest, WithoutGpusNoHookRuns) {
  CmdResult r = RunCat(false);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kHost);
  EXPECT_FALSE(fs::exists(StandIn() + ".argv")) << "the NVIDIA stand-in ran without --gpus";
}

TEST_F(DockerGpusTest, GpusSetsTheLimitThenRunsTheNvidiaHook) {
  CmdResult r = RunCat(true);
  ASSERT_EQ(r.status, 0) << r.err << dockerd_->Log();
  EXPECT_EQ(LimitRow(r.out, kMemlock), kFromDockerdEnv)
      << "NVIDIA_CONTAINER_RUNTIME_RLIMITS on dockerd should reach the hook";

  EXPECT_EQ(NulSplit(ReadFile(StandIn() + ".argv")),
            (std::vector<std::string>{kNvidiaName, "prestart"}));
  std::vector<std::string> env = NulSplit(ReadFile(StandIn() + ".env"));
  EXPECT_NE(std::find(env.begin(), env.end(), kMarker), env.end()) << "dockerd's env lost";
  EXPECT_NE(std::find(env.begin(), env.end(), "PATH=" + ShimDir() + ":" + std::getenv("PATH")),
            env.end());

  // The state the stand-in got is runc's prestart state for this container.
  Json state = Json::parse(ReadFile(StandIn() + ".stdin"));
  std::string cid = ReadFile(cidfile());
  EXPECT_EQ(state.value("id", ""), cid);
  EXPECT_EQ(state.value("status", ""), "creating");
  EXPECT_GT(state.value("pid", 0), 0);
  EXPECT_NE(state.value("bundle", "").find(cid), std::string::npos) << state.dump();
}

TEST_F(DockerGpusTest, TheNvidiaHookGetsTheStateByteForByte) {
  UseShimTap();
  CmdResult r = RunCat(true);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), kFromDockerdEnv);
  std::string sent = ReadFile(ShimEntry() + ".stdin");
  ASSERT_NE(sent.find(ReadFile(cidfile())), std::string::npos) << "tap saw no state: " << sent;
  EXPECT_EQ(ReadFile(StandIn() + ".stdin"), sent);
  EXPECT_EQ(ReadFile(StandIn() + ".argv"), ReadFile(ShimEntry() + ".argv"));
  EXPECT_EQ(ReadFile(StandIn() + ".env"), ReadFile(ShimEntry() + ".env"));
}

// Our failure (a hard limit above the host's; no CAP_SYS_RESOURCE here) under
// on-error = "warn" still runs the NVIDIA hook; under "fail" nothing runs.
TEST_F(DockerGpusTest, OnErrorWarnStillChainsAndFailStopsBoth) {
  const std::string chain = "[hook]\nchain = \"" + StandIn() + "\"\n";
  UseConfig("rlimits = [\"nofile=40000:40000\"]\non-error = \"warn\"\n" + chain);
  CmdResult warned = RunCat(true);
  ASSERT_EQ(warned.status, 0) << warned.err;
  EXPECT_TRUE(fs::exists(StandIn() + ".argv")) << "warn must still chain";

  PlaceRecorder(StandIn());
  UseConfig("rlimits = [\"nofile=40000:40000\"]\non-error = \"fail\"\n" + chain);
  CmdResult failed = RunCat(true);
  EXPECT_NE(failed.status, 0);
  EXPECT_EQ(LimitRow(failed.out, kMemlock), std::nullopt) << "the container must not have run";
  EXPECT_FALSE(fs::exists(StandIn() + ".argv"));
}

// Exec sessions (docs/matrix.md): the --gpus hook runs once, for the init
// process; `docker exec` builds a new process from docker's stored spec and
// never sees the hook's limit. Only runtime mode reaches exec sessions.
TEST_F(DockerGpusTest, ExecSessionsDoNotSeeTheHooksLimit) {
  CmdResult started = dockerd_->Docker(
      {"run", "-d", "--network", "none", "--gpus", "all", kBusyboxImage, "sleep", "60"});
  ASSERT_EQ(started.status, 0) << started.err;
  std::string id = started.out.substr(0, started.out.find('\n'));
  CmdResult init = dockerd_->Docker({"exec", id, "cat", "/proc/1/limits"});
  CmdResult self = dockerd_->Docker({"exec", id, "cat", "/proc/self/limits"});
  dockerd_->Docker({"rm", "--force", id});
  ASSERT_EQ(init.status, 0) << init.err;
  EXPECT_EQ(LimitRow(init.out, kMemlock), kFromDockerdEnv) << "the init process got the limit";
  ASSERT_EQ(self.status, 0) << self.err;
  EXPECT_EQ(LimitRow(self.out, kMemlock), kHost) << "an exec session does not";
}

TEST_F(DockerGpusTest, MissingChainTargetFailsTheStart) {
  const std::string missing = dir_ / "no/such/hook";
  UseConfig("[hook]\nchain = \"" + missing + "\"\n");
  CmdResult r = RunCat(true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(Unescaped(r.err).find("oci-rlimit-hook: hook.chain: \"" + missing +
                                  "\": No such file or directory"),
            std::string::npos)
      << r.err;
}

TEST_F(DockerGpusTest, ChainToItselfThroughTheShimIsRefused) {
  UseConfig("[hook]\nchain = \"" + ShimEntry() + "\"\n");
  CmdResult r = RunCat(true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(Unescaped(r.err).find("hook.chain: \"" + ShimEntry() + "\" is oci-rlimit-hook itself"),
            std::string::npos)
      << r.err;
}

// The same chain rules without docker: our hook run directly, as a runtime
// would, with a state on stdin.
class HookChainTest : public ::testing::Test {
 protected:
  void SetUp() override { PlaceRecorder(StandIn()); }
  std::string StandIn() const { return dir_ / "nvidia/nvidia-container-runtime-hook"; }
  std::string Config(const std::string& toml) const {
    WriteFile(dir_ / "config.toml", toml);
    return dir_ / "config.toml";
  }
  CmdResult RunHook(const std::string& program, const std::string& config,
                    const std::string& state) {
    RunOptions opts;
    opts.stdin_data = state;
    opts.env = {"OCI_RLIMIT_CONFIG=" + config,
                "OCI_RLIMIT_RLIMITS=", "NVIDIA_CONTAINER_RUNTIME_RLIMITS="};
    return RunCmd({program, "prestart"}, opts);
  }
  TempDir dir_;
};

TEST_F(HookChainTest, NothingConfiguredStillChainsWithIdenticalBytes) {
  // Odd spacing and a trailing newline: the bytes, not a re-serialisation.
  const std::string state =
      "{ \"ociVersion\":\"1.0.2\", \"id\":\"x\",\"status\":\"creating\","
      "\"pid\":1,\"bundle\":\"/nonexistent\" }\n\n";
  CmdResult r = RunHook(OurBinary("oci-rlimit-hook"),
                        Config("[hook]\nchain = \"" + StandIn() + "\"\n"), state);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(StandIn() + ".stdin"), state);
  EXPECT_EQ(NulSplit(ReadFile(StandIn() + ".argv")),
            (std::vector<std::string>{OurBinary("oci-rlimit-hook"), "prestart"}));
}

TEST_F(HookChainTest, TheChainedHooksStatusIsOurs) {
  WriteFile(dir_ / "exit3", "#!/bin/sh\nexit 3\n", 0755);
  WriteFile(StandIn() + ".exec", (dir_ / "exit3") + "\n");
  CmdResult r = RunHook(OurBinary("oci-rlimit-hook"),
                        Config("[hook]\nchain = \"" + StandIn() + "\"\n"), "{}");
  EXPECT_EQ(r.status, 3) << r.err;
}

TEST_F(HookChainTest, SelfChainThroughASymlinkIsRefusedBeforeAnything) {
  const std::string link = dir_ / "elsewhere/hook";
  fs::create_directories(dir_ / "elsewhere");
  fs::create_symlink(OurBinary("oci-rlimit-hook"), link);
  CmdResult r =
      RunHook(OurBinary("oci-rlimit-hook"), Config("[hook]\nchain = \"" + link + "\"\n"), "{}");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "oci-rlimit-hook: hook.chain: \"" + link +
                       "\" is oci-rlimit-hook itself (same file as /proc/self/exe); point it at "
                       "the real nvidia-container-runtime-hook or another hook\n");
}

TEST_F(HookChainTest, MissingTargetIsAClearError) {
  const std::string missing = dir_ / "missing";
  CmdResult r =
      RunHook(OurBinary("oci-rlimit-hook"),
              Config("rlimits = [\"memlock=1M\"]\non-error = \"warn\"\n[hook]\nchain = \"" +
                     missing + "\"\n"),
              "{}");
  EXPECT_EQ(r.status, 1) << "a missing chain target fails even under on-error = \"warn\"";
  EXPECT_EQ(r.err, "oci-rlimit-hook: hook.chain: \"" + missing + "\": No such file or directory\n");
}

// Under NVIDIA's name with no chain configured it chains to NVIDIA's own
// install path, rather than silently dropping the GPU set-up.
TEST_F(HookChainTest, UnderTheNvidiaNameItDefaultsToNvidiasHook) {
  if (fs::exists("/usr/bin/nvidia-container-runtime-hook")) GTEST_SKIP() << "NVIDIA hook installed";
  const std::string shim = dir_ / "shim/nvidia-container-runtime-hook";
  fs::create_directories(dir_ / "shim");
  fs::create_symlink(OurBinary("oci-rlimit-hook"), shim);
  CmdResult r = RunHook(shim, Config(""), "{}");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("\"/usr/bin/nvidia-container-runtime-hook\": No such file or directory"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ocirlimit::itest
