// The trust model through CRI (docs/policy.md, "Trust model"): a
// `namespaces` rule matches a pod by the namespace containerd itself writes
// into the spec (io.kubernetes.cri.sandbox-namespace), on containerd 1.6, 1.7
// and 2.x. The handler passes every pod annotation on (pod_annotations =
// ["*", "oci-rlimit.io/*"]), so a pod can try to forge that key, or CRI-O's;
// neither may match.
// Every assertion is on what the container's init reads from
// /proc/self/limits.
//
// containerd starts under `prlimit --memlock=1M:8M`: with no
// CAP_SYS_RESOURCE here, raising the soft limit to the hard one is the raise
// this sandbox can prove.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

void PrintTo(const ContainerdRelease& r, std::ostream* os) { *os << TestName(r); }

namespace {

constexpr Limit kDaemon{1 << 20, 8 << 20};      // what containerd starts with
constexpr Limit kConfigured{8 << 20, 8 << 20};  // the gpu-namespaces rule: memlock=8M
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
constexpr const char* kNamespaceRule = R"([[rule]]
name = "gpu-namespaces"
rlimits = ["memlock=8M"]
match = { namespaces = ["gpu-*"] }
)";

constexpr const char* kContainerdKey = "io.kubernetes.cri.sandbox-namespace";
constexpr const char* kCrioKey = "io.kubernetes.pod.namespace";

class CriTrustTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    WriteFile(dir_ / "config.toml", kNamespaceRule);
    CriContainerd::Options opts;
    opts.release = GetParam();
    // containerd matches pod_annotations with Go's filepath.Match, whose `*`
    // stops at a `/`: "*" passes io.kubernetes.pod.namespace but not
    // oci-rlimit.io/rlimits, which needs its own pattern.
    opts.handlers = {
        {"oci-rlimit", OurBinary("oci-rlimit-runtime"), {"*", "oci-rlimit.io/*"}, {}, {}}};
    opts.prefix = kDaemonPrefix;
    opts.env = {"OCI_RLIMIT_CONFIG=" + (dir_ / "config.toml")};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  struct Seen {
    std::string id;
    std::optional<Limit> init;
    std::map<std::string, std::string> annotations;  // the container's config.json
  };

  // A pod `name` in namespace `ns` with pod `annotations`, and in it a
  // container whose init prints its limits.
  Seen RunPod(const std::string& name, const std::string& ns,
              const std::map<std::string, std::string>& annotations) {
    Seen seen;
    PodSpec spec = containerd_->NewPod(name, "oci-rlimit");
    spec.ns = ns;
    spec.annotations = annotations;
    Probe probe =
        RunProbe(*containerd_, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits));
    EXPECT_TRUE(probe.error.empty()) << probe.error;
    if (probe.id.empty()) return seen;
    seen.id = probe.id;
    seen.init = probe.init;
    const std::string bundle =
        containerd_->dir() / ("state/io.containerd.runtime.v2.task/k8s.io/" + probe.id);
    Json spec_json = Json::parse(ReadFile(bundle + "/config.json"), nullptr, false);
    if (spec_json.is_object() && spec_json.contains("annotations")) {
      for (const auto& [k, v] : spec_json["annotations"].items()) {
        if (v.is_string()) seen.annotations[k] = v.get<std::string>();
      }
    }
    return seen;
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
};

TEST_P(CriTrustTest, NamespaceRuleMatchesThePodsNamespaceOnly) {
  Seen gpu = RunPod("trainer", "gpu-a", {});
  EXPECT_EQ(gpu.init, kConfigured) << "a pod in namespace gpu-a";
  EXPECT_EQ(gpu.annotations[kContainerdKey], "gpu-a");
  Seen other = RunPod("web", "default", {});
  EXPECT_EQ(other.init, kDaemon) << "a pod in namespace default";
}

// The pod sets containerd's own key; containerd writes its value over the
// pod's (measured on every release here), so the rule sees "default".
TEST_P(CriTrustTest, AForgedContainerdNamespaceAnnotationDoesNotMatch) {
  Seen forged = RunPod("forger", "default", {{kContainerdKey, "gpu-a"}});
  EXPECT_EQ(forged.init, kDaemon) << "pod annotation " << kContainerdKey << "=gpu-a in default";
  RecordProperty("spec_sandbox_namespace", forged.annotations[kContainerdKey]);
  EXPECT_EQ(forged.annotations[kContainerdKey], "default")
      << "containerd's own value is what reaches config.json";
}

// The pod sets CRI-O's key, which containerd passes on beside its own: the
// two disagree (disputed pod facts). The GPU candidate's raise has no default
// and no spec entry to be compared with, so the pod is refused, sandbox and
// all (its pause container carries the same annotations).
TEST_P(CriTrustTest, AForgedCrioNamespaceAnnotationDoesNotMatch) {
  PodSpec spec = containerd_->NewPod("forger", "oci-rlimit");
  spec.ns = "default";
  spec.annotations = {{kCrioKey, "gpu-a"}, {kContainerdKey, "gpu-a"}};
  auto pod = containerd_->RunPod(spec);
  ASSERT_FALSE(pod) << "a pod in default with both runtimes' keys forged must not start";
  EXPECT_NE(Unescaped(pod.error().Text())
                .find("disputed pod facts (the pod's namespace: annotation "
                      "\"io.kubernetes.cri.sandbox-namespace\" = \"default\" but "
                      "\"io.kubernetes.pod.namespace\" = \"gpu-a\")"),
            std::string::npos)
      << pod.error().Text();
}

// The same pods alone, and a bad request, through the wrapper handler.
TEST_P(CriTrustTest, APodsRuleAloneMatchesAnyNamespace) {
  WriteFile(dir_ / "config.toml", R"([[rule]]
name = "trainer-anywhere"
rlimits = ["memlock=8M"]
match = { pods = ["trainer-*"] }
)");
  EXPECT_EQ(RunPod("trainer-evil", "default", {}).init, kConfigured)
      << "a pod's name is its author's choice";
  EXPECT_EQ(RunPod("web", "default", {}).init, kDaemon);
}

// A disputed namespace (containerd's key, and CRI-O's from the pod): the
// top-level default stays, the GPU namespaces' raise does not apply.
TEST_P(CriTrustTest, ADisputedNamespaceGetsNoRaise) {
  WriteFile(dir_ / "config.toml", std::string("rlimits = [\"memlock=2M:8M\"]\n") + kNamespaceRule);
  Seen forged = RunPod("forger", "default", {{kCrioKey, "gpu-a"}});
  EXPECT_EQ(forged.init, (Limit{2 << 20, 8 << 20}));
  EXPECT_EQ(forged.annotations[kCrioKey], "gpu-a") << "passed on by pod_annotations = [\"*\"]";
  EXPECT_EQ(RunPod("trainer", "gpu-a", {}).init, kConfigured);
}

// Disputed pod facts that would escape a cap (docs/policy.md): a pod in
// untrusted-a that adds CRI-O's namespace key, or a web-* pod in ml that adds
// CRI-O's name key, is decided for every candidate and keeps the lowest: the
// cap, not the 6M default.
constexpr const char* kCaps = R"(rlimits = ["memlock=6M"]
log-file = "LOG"
[[rule]]
name = "untrusted"
rlimits = ["memlock=64K"]
match = { namespaces = ["untrusted-*"] }
[[rule]]
name = "cap-web"
rlimits = ["memlock=128K"]
match = { namespaces = ["ml"], pods = ["web-*"] }
)";
constexpr Limit k64K{64 << 10, 64 << 10};
constexpr Limit k128K{128 << 10, 128 << 10};
constexpr Limit k6M{6 << 20, 6 << 20};
constexpr const char* kCrioNameKey = "io.kubernetes.pod.name";

std::string WithLog(std::string toml, const std::string& log) {
  toml.replace(toml.find("LOG"), 3, log);
  return toml;
}

TEST_P(CriTrustTest, ADisputedNamespaceKeepsTheCap) {
  const std::string log = dir_ / "oci.log";
  WriteFile(dir_ / "config.toml", WithLog(kCaps, log));
  Seen forged = RunPod("escaper", "untrusted-a", {{kCrioKey, "x"}});
  EXPECT_EQ(forged.init, k64K) << "a pod in untrusted-a claiming namespace x";
  EXPECT_EQ(forged.annotations[kCrioKey], "x") << "passed on by pod_annotations = [\"*\"]";
  EXPECT_EQ(forged.annotations[kContainerdKey], "untrusted-a");
  EXPECT_NE(Unescaped(ReadFile(log))
                .find("disputed pod facts (the pod's namespace: annotation "
                      "\"io.kubernetes.cri.sandbox-namespace\" = "
                      "\"untrusted-a\" but \"io.kubernetes.pod.namespace\" = "
                      "\"x\")"),
            std::string::npos)
      << ReadFile(log);
  EXPECT_EQ(RunPod("web", "x", {}).init, k6M) << "the namespace it claims gets the default";
}

TEST_P(CriTrustTest, ADisputedPodNameKeepsTheCap) {
  WriteFile(dir_ / "config.toml", WithLog(kCaps, dir_ / "oci.log"));
  Seen forged = RunPod("web-0", "ml", {{kCrioNameKey, "job"}});
  EXPECT_EQ(forged.init, k128K) << "pod web-0 in ml claiming the name job";
  EXPECT_EQ(forged.annotations[kCrioNameKey], "job");
  EXPECT_EQ(RunPod("job", "ml", {}).init, k6M) << "the name it claims gets the default";
}

// A bad request through the wrapper handler: under on-error = "warn" the
// container keeps the top-level limits, for init and for an exec.
TEST_P(CriTrustTest, ABadRequestUnderWarnKeepsTheNodesLimits) {
  const std::string log = dir_ / "oci.log";
  WriteFile(dir_ / "config.toml",
            "rlimits = [\"memlock=64K\", \"nofile=512\"]\non-error = \"warn\"\nlog-file = \"" +
                log + "\"\n[requests]\nenabled = true\nceilings = [\"memlock=1M\"]\n");
  Seen p = RunPod("asks", "default", {{"oci-rlimit.io/rlimits", "please"}});
  ASSERT_FALSE(p.id.empty());
  EXPECT_EQ(p.annotations["oci-rlimit.io/rlimits"], "please") << "passed on by pod_annotations";
  EXPECT_EQ(p.init, k64K);
  auto exec = containerd_->cri().ExecSync(p.id, kCatLimits);
  ASSERT_TRUE(exec) << exec.error().Text();
  EXPECT_EQ(LimitRow(exec->out, kMemlock), k64K) << "an exec through the wrapper";
  EXPECT_EQ(LimitRow(exec->out, "Max open files"), (Limit{512, 512}));
  EXPECT_NE(Unescaped(ReadFile(log)).find("on-error = \"warn\": the request is left out"),
            std::string::npos)
      << ReadFile(log);
}

INSTANTIATE_TEST_SUITE_P(Releases, CriTrustTest, ::testing::ValuesIn(AllContainerdReleases()),
                         [](const auto& info) { return TestName(info.param); });

// The NRI plugin on containerd 1.7 and 2.x, pods on the default handler.
// NRI's pod namespace and name are the PodSandbox's fields, never disputed:
// forged annotations keep the caps; a pods rule alone and a bad request under
// on-error = "warn" apply.
class CriNriTrustTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    ASSERT_TRUE(Which(OurBinary("oci-rlimit-nri"))) << "oci-rlimit-nri has not been built";
  }

  void Start(const std::string& config) {
    WriteFile(dir_ / "config.toml", config);
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.prefix = kDaemonPrefix;
    opts.nri = NriSetup{};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
    const std::string log = dir_ / "plugin.log";
    plugin_ = std::make_unique<BackgroundProcess>();
    auto err = plugin_->Start({OurBinary("oci-rlimit-nri"), "--config", dir_ / "config.toml",
                               "--socket", containerd_->nri_socket()},
                              {}, log);
    ASSERT_FALSE(err) << *err;
    auto registered = plugin_->WaitForLog(
        "the plugin", "configured by", BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(registered) << "the plugin did not register: " << *registered << "\n"
                             << containerd_->Log();
  }

  Probe Run(const std::string& name, const std::string& ns,
            const std::map<std::string, std::string>& annotations = {}) {
    PodSpec spec = containerd_->NewPod(name);
    spec.ns = ns;
    spec.annotations = annotations;
    return RunProbe(*containerd_, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits));
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> plugin_;
};

TEST_P(CriNriTrustTest, NriAPodsRuleAloneMatchesAnyNamespace) {
  ASSERT_NO_FATAL_FAILURE(Start(R"([[rule]]
name = "trainer-anywhere"
rlimits = ["memlock=8M"]
match = { pods = ["trainer-*"] }
[[rule]]
name = "trainer-in-ml"
rlimits = ["memlock=4M:8M"]
match = { namespaces = ["ml"], pods = ["trainer-*"] }
)"));
  EXPECT_EQ(Run("trainer-evil", "default").init, kConfigured)
      << "pods alone: a pod of that name in any namespace";
  EXPECT_EQ(Run("trainer-0", "ml").init, (Limit{4 << 20, 8 << 20})) << "the later rule wins";
  EXPECT_EQ(Run("web", "ml").init, kDaemon);
}

TEST_P(CriNriTrustTest, NriABadRequestUnderWarnKeepsTheNodesLimits) {
  const std::string log = dir_ / "oci.log";
  ASSERT_NO_FATAL_FAILURE(
      Start("rlimits = [\"memlock=64K\", \"nofile=512\"]\n"
            "on-error = \"warn\"\nlog-file = \"" +
            log + "\"\n[requests]\nenabled = true\nceilings = [\"memlock=1M\"]\n"));
  Probe p = Run("asks", "default", {{"oci-rlimit.io/rlimits", "please"}});
  ASSERT_FALSE(p.id.empty()) << p.error;
  EXPECT_EQ(p.init, (Limit{64 << 10, 64 << 10}));
  auto exec = containerd_->cri().ExecSync(p.id, kCatLimits);
  ASSERT_TRUE(exec) << exec.error().Text();
  EXPECT_EQ(LimitRow(exec->out, "Max open files"), (Limit{512, 512}));
  EXPECT_NE(Unescaped(ReadFile(log)).find("on-error = \"warn\": the request is left out"),
            std::string::npos)
      << ReadFile(log);
}

// The same forgeries as CriTrustTest's caps: NRI reads the PodSandbox's
// namespace and name, so the forged annotations change nothing and the cap holds.
TEST_P(CriNriTrustTest, NriAForgedNamespaceAnnotationKeepsTheCap) {
  const std::string log = dir_ / "oci.log";
  ASSERT_NO_FATAL_FAILURE(Start(WithLog(kCaps, log)));
  EXPECT_EQ(Run("escaper", "untrusted-a", {{kCrioKey, "x"}}).init, k64K);
  EXPECT_EQ(Run("escaper-2", "untrusted-a", {{kCrioKey, "x"}, {kContainerdKey, "x"}}).init, k64K)
      << "both families forged";
  EXPECT_EQ(Run("web", "x").init, k6M);
  EXPECT_EQ(ReadFile(log).find("disputed"), std::string::npos) << ReadFile(log);
}

TEST_P(CriNriTrustTest, NriAForgedPodNameAnnotationKeepsTheCap) {
  ASSERT_NO_FATAL_FAILURE(Start(WithLog(kCaps, dir_ / "oci.log")));
  EXPECT_EQ(Run("web-0", "ml", {{kCrioNameKey, "job"}}).init, k128K);
  EXPECT_EQ(
      Run("web-1", "ml", {{kCrioNameKey, "job"}, {"io.kubernetes.cri.sandbox-name", "job"}}).init,
      k128K)
      << "both families forged";
  EXPECT_EQ(Run("job", "ml").init, k6M);
}

INSTANTIATE_TEST_SUITE_P(Releases, CriNriTrustTest,
                         ::testing::Values(Containerd17(), Containerd2()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
