// The trust model through CRI (docs/policy.md, "Trust model"): a
// `namespaces` rule matches a pod by the namespace containerd itself writes
// into the spec (io.kubernetes.cri.sandbox-namespace), on containerd 1.6, 1.7
// and 2.x. The handler passes every pod annotation on (pod_annotations =
// ["*"]), so a pod can try to forge that key, or CRI-O's; neither may match.
// Every assertion is on what the container's init reads from
// /proc/self/limits.
//
// containerd starts under `prlimit --memlock=1M:8M`: with no
// CAP_SYS_RESOURCE here, raising the soft limit to the hard one is the raise
// this sandbox can prove.
#include <gtest/gtest.h>

#include <map>
#include <memory>

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
    opts.handlers = {{"oci-rlimit", OurBinary("oci-rlimit-runtime"), {"*"}, {}, {}}};
    opts.prefix = kDaemonPrefix;
    opts.env = {"OCI_RLIMIT_CONFIG=" + (dir_ / "config.toml")};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  struct Seen {
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
// two disagree, so neither counts.
TEST_P(CriTrustTest, AForgedCrioNamespaceAnnotationDoesNotMatch) {
  Seen forged = RunPod("forger", "default", {{kCrioKey, "gpu-a"}, {kContainerdKey, "gpu-a"}});
  EXPECT_EQ(forged.init, kDaemon) << "pod annotations of both runtimes' keys in default";
  EXPECT_EQ(forged.annotations[kCrioKey], "gpu-a") << "passed on by pod_annotations = [\"*\"]";
}

INSTANTIATE_TEST_SUITE_P(Releases, CriTrustTest, ::testing::ValuesIn(AllContainerdReleases()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
