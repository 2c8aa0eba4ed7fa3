// oci-rlimit through CRI, as kubelet drives a node, on containerd 1.6, 1.7
// and 2.x: a RuntimeClass handler whose BinaryName is oci-rlimit-runtime,
// requests through pod annotations, and a GPU handler with NVIDIA's runtime
// behind the wrapper. Every assertion is on what the container itself reads
// from /proc/self/limits.
//
// containerd (and so the shim and every runtime call) starts under
// `prlimit --memlock=1M:8M`: with no CAP_SYS_RESOURCE here, raising a soft
// limit up to the hard one is the raise this sandbox can prove.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <memory>
#include <sstream>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

// Readable parameter values in gtest's messages.
void PrintTo(const ContainerdRelease& r, std::ostream* os) { *os << TestName(r); }

namespace {

constexpr Limit kDaemon{1 << 20, 8 << 20};      // what containerd starts with
constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M: soft raised to the hard limit
constexpr Limit kRequested{2 << 20, 8 << 20};   // the pod's request, under the ceiling
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};

// The container's init process reads its own limits with shell builtins (no
// child process), prints them to its log, then stays up for exec.
constexpr const char* kRequestAnnotation = "oci-rlimit.io/rlimits";
// Requests on, memlock up to 8M:8M, anything more fails the container.
constexpr const char* kRejectConfig =
    "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\nover-ceiling = \"reject\"\n";

class CriTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    ASSERT_TRUE(Which(Wrapper())) << Wrapper() << " has not been built";
  }

  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }
  std::string ConfigPath() const { return dir_ / "config.toml"; }

  // Starts containerd with `handlers`, the wrapper reading ConfigPath().
  void StartContainerd(const std::vector<RuntimeHandler>& handlers) {
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.handlers = handlers;
    opts.prefix = kDaemonPrefix;
    opts.env = {"OCI_RLIMIT_CONFIG=" + ConfigPath()};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  // A pod with `handler`, and in it a container whose init prints its limits.
  // Returns the container id; the init's limits land in `init`.
  std::string RunPrintingPod(const std::string& handler,
                             const std::map<std::string, std::string>& annotations,
                             std::optional<Limit>* init) {
    PodSpec spec = containerd_->NewPod("pod-" + handler, handler);
    spec.annotations = annotations;
    return cri::RunPrintingPod(*containerd_, spec, init);
  }

  // What `cat /proc/self/limits` reads when run by ExecSync in `id`.
  std::optional<Limit> ExecMemlock(const std::string& id) {
    return cri::ExecMemlock(*containerd_, id);
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
};

// A RuntimeClass handler `oci-rlimit` whose BinaryName is the wrapper: the
// pod's init and an ExecSync process read the configured limit; the default
// runc handler on the same node does not (the baseline).
TEST_P(CriTest, WrapperHandlerGivesInitAndExecTheConfiguredLimit) {
  WriteFile(ConfigPath(), "rlimits = [\"memlock=8M\"]\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd({{"oci-rlimit", Wrapper(), {}, {}, {}}}));

  std::optional<Limit> init;
  std::string plain = RunPrintingPod("runc", {}, &init);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(init, kDaemon) << "baseline: runc without the wrapper, init";
  EXPECT_EQ(ExecMemlock(plain), kDaemon) << "baseline: runc without the wrapper, exec";

  init.reset();
  std::string wrapped = RunPrintingPod("oci-rlimit", {}, &init);
  ASSERT_FALSE(wrapped.empty());
  EXPECT_EQ(init, kConfigured) << "init of a pod with runtimeClassName oci-rlimit";
  EXPECT_EQ(ExecMemlock(wrapped), kConfigured) << "ExecSync in that pod";
}

// The same handler with crun behind the wrapper (`[runtime] runtimes`; the
// harness's crun command hides this sandbox's hybrid cgroup2 mount from it).
// containerd 1.6 only: 1.7.24 and 2.x write runtime-spec ociVersion 1.2.x,
// which Debian 12's crun 1.8.1 refuses ("unknown version specified") with or
// without the wrapper.
class CriCrunTest : public CriTest {};

TEST_P(CriCrunTest, WrapperOverCrunGivesInitAndExecTheConfiguredLimit) {
  OCI_RLIMIT_REQUIRE("crun", "unshare");
  const std::string crun = CrunCommand(dir_.path());
  WriteFile(ConfigPath(), "rlimits = [\"memlock=8M\"]\n[runtime]\nruntimes = [\"" + crun + "\"]\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd({{"oci-rlimit", Wrapper(), {}, {}, {}}}));

  std::optional<Limit> init;
  std::string id = RunPrintingPod("oci-rlimit", {}, &init);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(init, kConfigured) << "init under crun";
  EXPECT_EQ(ExecMemlock(id), kConfigured) << "ExecSync under crun";
}

// A pod annotation oci-rlimit.io/rlimits under the ceiling, passed by the
// handler's pod_annotations, reaches the workload's init and its exec.
TEST_P(CriTest, PodAnnotationRequestUnderTheCeilingReachesInitAndExec) {
  WriteFile(ConfigPath(), kRejectConfig);
  ASSERT_NO_FATAL_FAILURE(
      StartContainerd({{"oci-rlimit", Wrapper(), {"oci-rlimit.io/*"}, {}, {}}}));

  std::optional<Limit> init;
  std::string id = RunPrintingPod("oci-rlimit", {{kRequestAnnotation, "memlock=2M:8M"}}, &init);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(init, kRequested) << "init of the annotated pod's container";
  EXPECT_EQ(ExecMemlock(id), kRequested) << "ExecSync in that container";
}

// The NRI sample ulimit-adjuster's pod annotation for the container by name
// ("limits"), passed by the handler's pod_annotations, under the ceiling:
// asked 2M:64M, clamped to 2M:8M for init and exec (docs/policy.md,
// "Request sources").
TEST_P(CriTest, TheNriSamplesPodAnnotationIsClampedThroughTheWrapper) {
  WriteFile(ConfigPath(),
            "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n"
            "sources = [\"ulimit-adjuster\"]\n");
  ASSERT_NO_FATAL_FAILURE(
      StartContainerd({{"oci-rlimit", Wrapper(), {"ulimits.noderesource.dev/*"}, {}, {}}}));

  std::optional<Limit> init;
  std::string id = RunPrintingPod("oci-rlimit",
                                  {{"ulimits.noderesource.dev/container.limits",
                                    "- type: memlock\n  soft: 2097152\n  hard: 67108864\n"}},
                                  &init);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(init, kRequested) << "init";
  EXPECT_EQ(ExecMemlock(id), kRequested) << "ExecSync";
}

// Runs a container in `pod` that must fail with oci-rlimit's reject message
// in the CRI error.
void ExpectRejected(CriContainerd& containerd, const Pod& pod, const ContainerSpec& c) {
  auto id = containerd.RunContainer(pod, c);
  ASSERT_FALSE(id) << "a request over the ceiling must not start";
  std::string shown = id.error().Text();
  shown = Unescaped(shown);
  EXPECT_NE(shown.find("oci-rlimit-runtime: "), std::string::npos) << shown;
  EXPECT_NE(shown.find("is over the ceiling"), std::string::npos) << shown;
  EXPECT_NE(shown.find("over-ceiling = \"reject\""), std::string::npos) << shown;
  EXPECT_EQ(containerd.ContainerLog(pod, c).find(kMemlock), std::string::npos)
      << "the container must not have run";
}

// Over the ceiling with over-ceiling = "reject": the pod sandbox (the pause
// container, which gets the pod's annotations too) still starts, and the
// workload container fails with oci-rlimit's message in the CRI error.
// containerd runs `runtime create` in StartContainer, so that is the call
// that fails.
TEST_P(CriTest, PodAnnotationRequestOverTheCeilingFailsTheContainerNotTheSandbox) {
  WriteFile(ConfigPath(), kRejectConfig);
  ASSERT_NO_FATAL_FAILURE(
      StartContainerd({{"oci-rlimit", Wrapper(), {"oci-rlimit.io/*"}, {}, {}}}));

  PodSpec spec = containerd_->NewPod("pod-over", "oci-rlimit");
  spec.annotations = {{kRequestAnnotation, "memlock=16M"}};
  auto pod = containerd_->RunPod(spec);
  ASSERT_TRUE(pod) << "the sandbox must start: " << pod.error().Text();
  ExpectRejected(*containerd_, *pod, CriContainerd::NewContainer("limits", kInitPrintsLimits));
}

// The same request as a container annotation (handler container_annotations):
// only the workload container carries it.
TEST_P(CriTest, ContainerAnnotationRequestOverTheCeilingFailsTheContainer) {
  WriteFile(ConfigPath(), kRejectConfig);
  ASSERT_NO_FATAL_FAILURE(
      StartContainerd({{"oci-rlimit", Wrapper(), {}, {"oci-rlimit.io/*"}, {}}}));

  auto pod = containerd_->RunPod(containerd_->NewPod("pod-over", "oci-rlimit"));
  ASSERT_TRUE(pod) << pod.error().Text();
  ContainerSpec c = CriContainerd::NewContainer("limits", kInitPrintsLimits);
  c.annotations = {{kRequestAnnotation, "memlock=16M"}};
  ExpectRejected(*containerd_, *pod, c);
}

// The subcommand of one runtime argv (after runc's global flags).
std::string Subcommand(const std::string& argv_line) {
  std::istringstream ss(argv_line);
  for (std::string word; ss >> word;) {
    if (word == "--root" || word == "--log" || word == "--log-format" || word == "--criu") {
      ss >> word;
      continue;
    }
    if (word.starts_with("-")) continue;
    return word;
  }
  return "";
}

// A GPU handler: the wrapper in front of NVIDIA's runtime (a stand-in that
// logs its argv and execs runc), chosen by `[runtime] runtimes`. Every call
// the shim makes reaches NVIDIA's runtime, and init and exec get the limit.
TEST_P(CriTest, GpuHandlerPassesEveryCallToNvidiaRuntimeAndGivesTheLimit) {
  const std::string calls = dir_ / "nvidia-calls.log";
  const std::string nvidia = dir_ / "nvidia-container-runtime";
  auto runc = Which("runc");
  ASSERT_TRUE(runc);
  WriteFile(nvidia,
            "#!/bin/sh\n"
            "# Stand-in for NVIDIA's runtime: log the argv, run runc.\n"
            "echo \"$*\" >> '" +
                calls +
                "'\n"
                "exec " +
                *runc + " \"$@\"\n",
            0755);
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=8M\"]\n[runtime]\nruntimes = [\"" + nvidia + "\"]\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd({{"nvidia-oci-rlimit", Wrapper(), {}, {}, {}}}));

  std::optional<Limit> init;
  std::string id = RunPrintingPod("nvidia-oci-rlimit", {}, &init);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(init, kConfigured) << "init";
  EXPECT_EQ(ExecMemlock(id), kConfigured) << "ExecSync";

  containerd_->RemoveAll();
  std::set<std::string> seen;
  std::istringstream ss(ReadFile(calls));
  for (std::string line; std::getline(ss, line);) seen.insert(Subcommand(line));
  for (const char* sub : {"create", "start", "exec", "kill", "delete"}) {
    EXPECT_TRUE(seen.count(sub)) << sub << " did not reach nvidia-container-runtime; calls:\n"
                                 << ReadFile(calls);
  }
}

// The fixture itself, for the suites built on it (the NRI plugin's): CRI
// Version names the release that was started, and with NriSetup containerd
// serves NRI on nri_socket() under the TempDir.
class CriHarnessTest : public CriTest {};

TEST_P(CriHarnessTest, VersionNamesTheReleaseAndNriSocketIsServed) {
  CriContainerd::Options opts;
  opts.release = GetParam();
  opts.nri = NriSetup{};
  CriContainerd containerd(opts);
  ASSERT_TRUE(containerd.ok()) << containerd.error();
  auto v = containerd.cri().Version();
  ASSERT_TRUE(v) << v.error().Text();
  EXPECT_EQ(v->runtime_name(), "containerd");
  EXPECT_TRUE(v->runtime_version().starts_with(GetParam().name + "."))
      << v->runtime_version() << " from " << GetParam().bin_dir;
  EXPECT_EQ(v->runtime_version(), containerd.version());
  EXPECT_EQ(v->runtime_api_version(), "v1");
  struct stat st {};
  ASSERT_EQ(stat(containerd.nri_socket().c_str(), &st), 0) << containerd.nri_socket();
  EXPECT_TRUE(S_ISSOCK(st.st_mode)) << containerd.nri_socket();
}

INSTANTIATE_TEST_SUITE_P(Releases, CriTest, ::testing::ValuesIn(AllContainerdReleases()),
                         [](const auto& info) { return TestName(info.param); });
INSTANTIATE_TEST_SUITE_P(Releases, CriHarnessTest, ::testing::Values(Containerd17(), Containerd2()),
                         [](const auto& info) { return TestName(info.param); });
INSTANTIATE_TEST_SUITE_P(Releases, CriCrunTest, ::testing::Values(Containerd16()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
