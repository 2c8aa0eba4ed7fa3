// oci-rlimit-nri against real containerd through CRI, as kubelet drives a
// node: containerd 2.x (NRI on by default) and 1.7 (NRI enabled in its
// config), pods on the default runc handler with no RuntimeClass. Every
// assertion is on what the container itself reads from /proc/self/limits.
//
// containerd starts under `prlimit --memlock=1M:8M`: with no CAP_SYS_RESOURCE
// here, raising a soft limit up to the hard one is the raise this sandbox can
// prove (the plugin's rlimits go into the spec; runc applies them).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

// Readable parameter values in gtest's messages.
void PrintTo(const ContainerdRelease& r, std::ostream* os) { *os << TestName(r); }

namespace {

constexpr Limit kDaemon{1 << 20, 8 << 20};      // what containerd starts with
constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M
constexpr Limit kRequested{4 << 20, 8 << 20};   // memlock=4M:8M, under the ceiling
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
constexpr const char* kRequestAnnotation = "oci-rlimit.io/rlimits";

std::vector<ContainerdRelease> NriReleases() { return {Containerd17(), Containerd2()}; }

class NriTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    ASSERT_TRUE(Which(Plugin())) << Plugin() << " has not been built";
  }

  static std::string Plugin() { return OurBinary("oci-rlimit-nri"); }
  std::string ConfigPath() const { return dir_ / "config.toml"; }
  std::string PluginLog() const { return dir_ / ("plugin-" + std::to_string(starts_) + ".log"); }

  void StartContainerd(std::optional<NriSetup> nri = NriSetup{}) {
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.prefix = kDaemonPrefix;
    opts.nri = std::move(nri);
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  // The plugin in external mode on the fixture's NRI socket; returns once
  // the runtime has configured it.
  void StartPlugin() {
    ++starts_;
    plugin_ = std::make_unique<BackgroundProcess>();
    auto err = plugin_->Start({Plugin(), "--config", ConfigPath(), "--socket",
                               containerd_->nri_socket(), "--status-file", dir_ / "nri.status"},
                              {}, PluginLog());
    ASSERT_FALSE(err) << *err;
    auto registered = plugin_->WaitForLog(
        "the plugin", "configured by", BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(registered) << "the plugin did not register: " << *registered << "\n"
                             << containerd_->Log();
  }

  using Ran = Probe;

  Ran RunPrintingPod(const std::string& name, const std::map<std::string, std::string>& pod_ann,
                     const std::vector<DeviceSpec>& devices = {},
                     const std::string& ns = "default") {
    PodSpec spec = containerd_->NewPod(name);
    spec.ns = ns;
    spec.annotations = pod_ann;
    ContainerSpec c = CriContainerd::NewContainer("limits", kInitPrintsLimits);
    c.devices = devices;
    return RunProbe(*containerd_, spec, c);
  }

  std::optional<Limit> ExecMemlock(const std::string& id) {
    return cri::ExecMemlock(*containerd_, id);
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> plugin_;
  int starts_ = 0;
};

TEST_P(NriTest, InitAndExecReadTheConfiguredLimit) {
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=8M\"]\nlog-file = \"" + (dir_ / "oci.log") + "\"\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("plain", {});
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kConfigured) << "init";
  EXPECT_EQ(ExecMemlock(r.id), kConfigured) << "ExecSync";
  std::string log = ReadFile(dir_ / "oci.log");
  // The whole line after its time, as every program writes it (formats/log_line.h).
  EXPECT_NE(log.find("Z id=\"" + r.id + "\" via=\"nri\" set memlock=unreported->8388608:8388608\n"),
            std::string::npos)
      << log;
}

TEST_P(NriTest, AnnotationAndDeviceRulesMatchOnlyTheirPods) {
  WriteFile(ConfigPath(),
            "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=8M\"]\n"
            "match = { annotations = { \"example.com/gpu\" = \"true\" } }\n"
            "[[rule]]\nname = \"rdma\"\nrlimits = [\"memlock=4M:8M\"]\n"
            "match = { devices = [\"/dev/infiniband/*\"] }\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());

  Ran gpu = RunPrintingPod("gpu", {{"example.com/gpu", "true"}});
  EXPECT_EQ(gpu.init, kConfigured) << "annotation rule, pod annotation (no pod_annotations set)";
  Ran other = RunPrintingPod("other", {{"example.com/gpu", "false"}});
  EXPECT_EQ(other.init, kDaemon) << "annotation rule must not match";
  Ran rdma = RunPrintingPod("rdma", {}, {{"/dev/null", "/dev/infiniband/uverbs0", "rwm"}});
  EXPECT_EQ(rdma.init, kRequested) << "device rule";
  Ran fuse = RunPrintingPod("fuse", {}, {{"/dev/null", "/dev/fuse-like", "rwm"}});
  EXPECT_EQ(fuse.init, kDaemon) << "device rule must not match";
  ASSERT_FALSE(rdma.id.empty());
  EXPECT_EQ(ExecMemlock(rdma.id), kRequested) << "ExecSync in the device-rule pod";
}

// The namespace comes from NRI's PodSandbox field: NRI hands the plugin every
// pod annotation, so a pod's own io.kubernetes.cri.sandbox-namespace or
// io.kubernetes.pod.namespace must not count.
TEST_P(NriTest, NamespaceRuleMatchesThePodSandboxNamespaceNotAnnotations) {
  WriteFile(ConfigPath(),
            "[[rule]]\nname = \"gpu-namespaces\"\nrlimits = [\"memlock=8M\"]\n"
            "match = { namespaces = [\"gpu-*\"] }\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());

  Ran gpu = RunPrintingPod("trainer", {}, {}, "gpu-a");
  EXPECT_EQ(gpu.init, kConfigured) << "a pod in namespace gpu-a";
  Ran forged = RunPrintingPod(
      "forger",
      {{"io.kubernetes.cri.sandbox-namespace", "gpu-a"}, {"io.kubernetes.pod.namespace", "gpu-a"}},
      {}, "default");
  EXPECT_EQ(forged.init, kDaemon) << "a pod in default with both runtimes' keys forged";
}

// A spec that already sets RLIMIT_MEMLOCK (2M:8M, from a handler's
// base_runtime_spec; the handler is plain runc, no wrapper): the plugin's
// entry of the same type wins, for init and for exec. (Neither containerd
// fills Container.rlimits in CreateContainer, so the log's "before" is
// "unreported", even though the spec has 2M:8M.)
TEST_P(NriTest, SameTypeSpecEntryIsBeaten) {
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=8M\"]\nlog-file = \"" + (dir_ / "oci.log") + "\"\n");
  CmdResult spec = RunCmd({GetParam().bin_dir + "/ctr", "oci", "spec"});
  ASSERT_EQ(spec.status, 0) << spec.err;
  auto base = nlohmann::json::parse(spec.out);
  base["process"]["rlimits"] = {{{"type", "RLIMIT_MEMLOCK"}, {"soft", 2 << 20}, {"hard", 8 << 20}}};
  const std::string base_path = dir_ / "base-spec.json";
  WriteFile(base_path, base.dump());
  const std::string cri = GetParam().config_version >= 3 ? "plugins.'io.containerd.cri.v1.runtime'"
                                                         : "plugins.'io.containerd.grpc.v1.cri'";
  const std::string table = cri + ".containerd.runtimes.based";
  CriContainerd::Options opts;
  opts.release = GetParam();
  opts.prefix = kDaemonPrefix;
  opts.nri = NriSetup{};
  opts.extra_toml = "[" + table + "]\n  runtime_type = 'io.containerd.runc.v2'\n" +
                    "  base_runtime_spec = '" + base_path + "'\n[" + table + ".options]\n" +
                    "  Root = '" + (dir_ / "runc-based") + "'\n  SystemdCgroup = false\n";
  containerd_ = std::make_unique<CriContainerd>(opts);
  ASSERT_TRUE(containerd_->ok()) << containerd_->error();

  auto pod = containerd_->RunPod(containerd_->NewPod("based", "based"));
  ASSERT_TRUE(pod) << pod.error().Text();
  ContainerSpec c = CriContainerd::NewContainer("limits", kInitPrintsLimits);
  auto before = containerd_->RunContainer(*pod, c);
  ASSERT_TRUE(before) << before.error().Text();
  auto log = containerd_->WaitForLog(*pod, c, kMemlock);
  ASSERT_TRUE(log) << log.error().Text();
  EXPECT_EQ(LimitRow(*log, kMemlock), (Limit{2 << 20, 8 << 20}))
      << "baseline: the base spec's entry, no plugin yet";

  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  ContainerSpec c2 = CriContainerd::NewContainer("limits2", kInitPrintsLimits);
  auto id = containerd_->RunContainer(*pod, c2);
  ASSERT_TRUE(id) << id.error().Text();
  log = containerd_->WaitForLog(*pod, c2, kMemlock);
  ASSERT_TRUE(log) << log.error().Text();
  EXPECT_EQ(LimitRow(*log, kMemlock), kConfigured) << "init";
  EXPECT_EQ(ExecMemlock(*id), kConfigured) << "ExecSync";
  std::string ours = ReadFile(dir_ / "oci.log");
  EXPECT_NE(ours.find("Z id=\"" + *id + "\" via=\"nri\" set memlock=unreported->8388608:8388608\n"),
            std::string::npos)
      << ours;
}

// A limit above containerd's own hard limit (8M here), which no process in
// this sandbox can raise: the plugin still answers the policy (it cannot
// refuse more than the policy says), runc then fails to set it, and the
// plugin's log line carries the one unraisable-limit message, naming the
// runtime it read through the socket's peer (effects/runtime_peer.h).
TEST_P(NriTest, ALimitTheRuntimeCannotRaiseGetsTheOneMessage) {
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=16M\"]\nlog-file = \"" + (dir_ / "oci.log") + "\"\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("over", {});
  EXPECT_TRUE(r.id.empty()) << "runc cannot raise the hard limit here";
  const std::string log = ReadFile(dir_ / "oci.log");
  EXPECT_NE(log.find("set memlock=unreported->16777216:16777216 warning=\"config entry "
                     "memlock=16M: the hard limit in force is 8M, and raising it needs "
                     "CAP_SYS_RESOURCE, which the runtime on the NRI socket (containerd, pid "),
            std::string::npos)
      << log;
}

// A node with both the plugin and the installer's handler, configured
// differently: the wrapper edits the spec after NRI, so a pod of the handler
// reads the wrapper's limit, and the plugin's line says the handler's limits
// are what the container gets (docs/nri.md, "A node with both ...").
TEST_P(NriTest, BesideTheHandlerTheLogSaysTheWrapperSetsTheLimitsLast) {
  ASSERT_TRUE(Which(OurBinary("oci-rlimit-runtime")));
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=4M:8M\"]\nlog-file = \"" + (dir_ / "oci.log") + "\"\n");
  WriteFile(dir_ / "wrapper.toml", "rlimits = [\"memlock=8M\"]\n");
  CriContainerd::Options opts;
  opts.release = GetParam();
  opts.prefix = kDaemonPrefix;
  opts.nri = NriSetup{};
  opts.env = {"OCI_RLIMIT_CONFIG=" + (dir_ / "wrapper.toml")};
  opts.handlers = {RuntimeHandler{"oci-rlimit", OurBinary("oci-rlimit-runtime"), {}, {}, {}}};
  containerd_ = std::make_unique<CriContainerd>(opts);
  ASSERT_TRUE(containerd_->ok()) << containerd_->error();
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  PodSpec spec = containerd_->NewPod("both", "oci-rlimit");
  Ran r = RunProbe(*containerd_, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits));
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kConfigured) << "init: the wrapper's 8M, not the plugin's 4M:8M";
  EXPECT_EQ(ExecMemlock(r.id), kConfigured) << "ExecSync";
  const std::string log = ReadFile(dir_ / "oci.log");
  EXPECT_NE(
      log.find("Z id=\"" + r.id +
               "\" via=\"nri\" set memlock=unreported->4194304:8388608 warning=\"runtime "
               "handler \\\"oci-rlimit\\\": oci-rlimit-runtime sets the limits again when runc "
               "is called, after NRI, from "),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("where they differ, the container gets the handler's limits\"\n"),
            std::string::npos)
      << log;
}

constexpr const char* kRequests =
    "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\nover-ceiling = \"reject\"\n";

TEST_P(NriTest, RequestUnderTheCeilingReachesInitAndExec) {
  WriteFile(ConfigPath(), kRequests);
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("asks", {{kRequestAnnotation, "memlock=4M:8M"}});
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kRequested);
  EXPECT_EQ(ExecMemlock(r.id), kRequested);
}

TEST_P(NriTest, RequestOverTheCeilingFailsCreationWithOciRlimitsMessage) {
  WriteFile(ConfigPath(), kRequests);
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("greedy", {{kRequestAnnotation, "memlock=16M"}});
  ASSERT_TRUE(r.id.empty()) << "over the ceiling must not be created";
  EXPECT_NE(r.error.find("oci-rlimit: container \"limits\" of pod \"default/greedy\""),
            std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("is over the ceiling memlock=8388608:8388608 (over-ceiling = \"reject\")"),
            std::string::npos)
      << r.error;
}

TEST_P(NriTest, MalformedRequestGivesItsOneLineError) {
  WriteFile(ConfigPath(), kRequests);
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("typo", {{kRequestAnnotation, "memlok=8M"}});
  ASSERT_TRUE(r.id.empty());
  EXPECT_NE(r.error.find("annotation \"oci-rlimit.io/rlimits\" = \"memlok=8M\": "),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
}

// While no plugin is connected the runtime creates containers unadjusted
// (docs/matrix.md says so); a restarted plugin adjusts the next pod again.
TEST_P(NriTest, KilledPluginRestartedAdjustsTheNextPod) {
  WriteFile(ConfigPath(), "rlimits = [\"memlock=8M\"]\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  EXPECT_EQ(RunPrintingPod("first", {}).init, kConfigured);
  ASSERT_EQ(kill(plugin_->pid(), SIGKILL), 0);
  plugin_->Stop();
  EXPECT_EQ(RunPrintingPod("unplugged", {}).init, kDaemon)
      << "containerd creates containers unadjusted while no plugin is connected";
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  EXPECT_EQ(RunPrintingPod("again", {}).init, kConfigured);
}

// containerd starts the plugin itself from its plugin dir: no PATH, fds 0-2
// on /dev/null, the socket as fd 3. The entry execs the binary with --config
// (the package's example is a plain symlink, for the default config path).
TEST_P(NriTest, PreRegisteredFromThePluginDir) {
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=8M\"]\nlog-file = \"" + (dir_ / "oci.log") + "\"\n");
  const std::string entry = dir_ / "oci-rlimit-entry";
  WriteFile(entry,
            "#!/bin/sh\nexec " + Plugin() + " --config " + ConfigPath() + " --status-file " +
                (dir_ / "nri.status") + "\n",
            0755);
  NriSetup nri;
  nri.plugins = {{"10-oci-rlimit", entry}};
  ASSERT_NO_FATAL_FAILURE(StartContainerd(nri));
  Ran r = RunPrintingPod("prereg", {});
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kConfigured) << containerd_->Log();
  EXPECT_EQ(ExecMemlock(r.id), kConfigured);
  const std::string log = ReadFile(dir_ / "oci.log");
  EXPECT_NE(log.find("Z id=\"" + r.id + "\" via=\"nri\" set memlock=unreported->8388608:8388608\n"),
            std::string::npos)
      << log;
}

// Request sources (docs/policy.md, "Request sources"). kubelet puts pod
// annotations on the sandbox only: the NRI sample's annotation names the
// container ("limits") and rides on the pod sandbox config.
TEST_P(NriTest, SourcesTheNriSamplesAnnotationIsClampedForInitAndExec) {
  WriteFile(ConfigPath(),
            "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n"
            "sources = [\"ulimit-adjuster\"]\n");
  ASSERT_NO_FATAL_FAILURE(StartContainerd());
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Ran r = RunPrintingPod("sample", {{"ulimits.noderesource.dev/container.limits",
                                     "- type: RLIMIT_MEMLOCK\n  soft: 4194304\n"
                                     "  hard: 68719476736\n"}});
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kRequested) << "hard clamped to the 8M ceiling";
  EXPECT_EQ(ExecMemlock(r.id), kRequested) << "ExecSync";
}

// A same-type entry from the handler's base spec (8M:8M) over the ceiling
// (4M:8M): containerd sends NRI no Container.rlimits, so the plugin cannot
// see it, but the node's own memlock (2M:8M) replaces it. Either way no pod
// gets past the ceiling; were the entry reported, it would be clamped.
TEST_P(NriTest, SourcesABaseSpecEntryOverTheCeilingDoesNotGetPast) {
  WriteFile(ConfigPath(),
            "rlimits = [\"memlock=2M:8M\"]\n[requests]\nenabled = true\n"
            "ceilings = [\"memlock=4M:8M\"]\nsources = [\"spec\"]\n");
  CmdResult spec = RunCmd({GetParam().bin_dir + "/ctr", "oci", "spec"});
  ASSERT_EQ(spec.status, 0) << spec.err;
  auto base = nlohmann::json::parse(spec.out);
  base["process"]["rlimits"] = {{{"type", "RLIMIT_MEMLOCK"}, {"soft", 8 << 20}, {"hard", 8 << 20}}};
  const std::string base_path = dir_ / "base-spec.json";
  WriteFile(base_path, base.dump());
  const std::string cri = GetParam().config_version >= 3 ? "plugins.'io.containerd.cri.v1.runtime'"
                                                         : "plugins.'io.containerd.grpc.v1.cri'";
  const std::string table = cri + ".containerd.runtimes.based";
  CriContainerd::Options opts;
  opts.release = GetParam();
  opts.prefix = kDaemonPrefix;
  opts.nri = NriSetup{};
  opts.extra_toml = "[" + table + "]\n  runtime_type = 'io.containerd.runc.v2'\n" +
                    "  base_runtime_spec = '" + base_path + "'\n[" + table + ".options]\n" +
                    "  Root = '" + (dir_ / "runc-based") + "'\n  SystemdCgroup = false\n";
  containerd_ = std::make_unique<CriContainerd>(opts);
  ASSERT_TRUE(containerd_->ok()) << containerd_->error();
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  auto pod = containerd_->RunPod(containerd_->NewPod("based", "based"));
  ASSERT_TRUE(pod) << pod.error().Text();
  ContainerSpec c = CriContainerd::NewContainer("limits", kInitPrintsLimits);
  auto id = containerd_->RunContainer(*pod, c);
  ASSERT_TRUE(id) << id.error().Text();
  auto log = containerd_->WaitForLog(*pod, c, kMemlock);
  ASSERT_TRUE(log) << log.error().Text();
  const std::optional<Limit> init = LimitRow(*log, kMemlock);
  const std::optional<Limit> exec = ExecMemlock(*id);
  for (const auto& got : {init, exec}) {
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(*got == (Limit{2 << 20, 8 << 20}) || *got == (Limit{4 << 20, 8 << 20}))
        << "soft " << got->soft << " must be the node's 2M (unreported) or the 4M ceiling";
  }
}

INSTANTIATE_TEST_SUITE_P(Releases, NriTest, ::testing::ValuesIn(NriReleases()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
