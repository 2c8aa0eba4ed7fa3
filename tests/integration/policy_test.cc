// Policy under real runc (docs/policy.md): rules select containers, requests
// are held to the admin's ceilings. Each case asserts what the container's
// own process reads from /proc/self/limits, through every entry point
// (policy_paths.h): the hook at createRuntime and at precreate, and
// oci-rlimit-runtime's run and exec. The trust cases (pods alone, disputed
// pod facts, a bad request) are in policy_trust_test.cc.
#include <gtest/gtest.h>

#include <functional>

#include "harness.h"
#include "policy_paths.h"

namespace ocirlimit::itest {
namespace {

// Raising a soft limit up to the hard one needs no CAP_SYS_RESOURCE.
const std::vector<std::string> kLowSoft = {"prlimit", "--memlock=1048576:8388608"};
constexpr Limit kLowSoftLimit{1 << 20, 8 << 20};

constexpr const char* kGpuRule = R"(log-file = "LOG"
[[rule]]
name = "gpu"
rlimits = ["memlock=1M:4M"]
match = { env = ["NVIDIA_VISIBLE_DEVICES"] }
[[rule]]
name = "rdma"
rlimits = ["memlock=2M:4M"]
match = { devices = ["/dev/infiniband/*"] }
)";

void AddDevice(Json& spec, const std::string& path) {
  // /dev/null's numbers: a real node inside the container, at a path a glob can select.
  spec["linux"]["devices"].push_back(
      {{"path", path}, {"type", "c"}, {"major", 1}, {"minor", 3}, {"fileMode", 0666}});
  spec["linux"]["resources"]["devices"].push_back(
      {{"allow", true}, {"type", "c"}, {"major", 1}, {"minor", 3}, {"access", "rwm"}});
}

TEST_P(PolicyTest, OnlyTheMatchingContainerGetsTheLimit) {
  UseConfig(kGpuRule);
  EXPECT_EQ(Memlock("gpu", [](Json& s) { SetEnv(s, "NVIDIA_VISIBLE_DEVICES=all"); }),
            (Limit{1 << 20, 4 << 20}));
  EXPECT_EQ(Memlock("void", [](Json& s) { SetEnv(s, "NVIDIA_VISIBLE_DEVICES=void"); }), kHost)
      << "void means no GPU";
  EXPECT_EQ(Memlock("plain", [](Json&) {}), kHost);
}

TEST_P(PolicyTest, DeviceGlobSelectsAndTheLaterRuleWins) {
  UseConfig(kGpuRule);
  EXPECT_EQ(Memlock("rdma", [](Json& s) { AddDevice(s, "/dev/infiniband/uverbs0"); }),
            (Limit{2 << 20, 4 << 20}));
  EXPECT_EQ(Memlock("both",
                    [](Json& s) {
                      SetEnv(s, "NVIDIA_VISIBLE_DEVICES=0");
                      AddDevice(s, "/dev/infiniband/uverbs0");
                    }),
            (Limit{2 << 20, 4 << 20}))
      << "rdma comes after gpu in the file";
  EXPECT_EQ(Memlock("other-device", [](Json& s) { AddDevice(s, "/dev/fake0"); }), kHost);
}

constexpr const char* kRequests = R"(log-file = "LOG"
[requests]
enabled = true
ceilings = ["memlock=8M"]
over-ceiling = "OVER"
)";

std::string Requests(const std::string& over) {
  std::string t = kRequests;
  t.replace(t.find("OVER"), 4, over);
  return t;
}

TEST_P(PolicyTest, RequestAboveTheCeilingIsClamped) {
  UseConfig(Requests("clamp"));
  ASSERT_EQ(Memlock(
                "baseline", [](Json&) {}, kLowSoft),
            kLowSoftLimit);
  EXPECT_EQ(Memlock(
                "asks", [](Json& s) { Request(s, "memlock=unlimited"); }, kLowSoft),
            (Limit{8 << 20, 8 << 20}))
      << "unlimited clamped to the 8M ceiling";
  EXPECT_EQ(Memlock(
                "under", [](Json& s) { Request(s, "memlock=2M"); }, kLowSoft),
            (Limit{2 << 20, 2 << 20}));
  std::string log = ReadFile(log_path());
  EXPECT_NE(log.find("memlock=unlimited:unlimited is over the ceiling memlock=8388608:8388608; "
                     "clamped to memlock=8388608:8388608"),
            std::string::npos)
      << log;
}

TEST_P(PolicyTest, RequestAboveTheCeilingIsRejected) {
  UseConfig(Requests("reject"));
  CmdResult r = RunContainer(
      "asks", [](Json& s) { Request(s, "memlock=unlimited"); }, kLowSoft);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string err = r.err;
  err = Unescaped(err);
  EXPECT_NE(err.find("annotation \"oci-rlimit.io/rlimits\" = \"memlock=unlimited\": "
                     "memlock=unlimited:unlimited is over the ceiling memlock=8388608:8388608 "
                     "(over-ceiling = \"reject\")"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Memlock(
                "at", [](Json& s) { Request(s, "memlock=8M"); }, kLowSoft),
            (Limit{8 << 20, 8 << 20}))
      << "at the ceiling is allowed";
}

TEST_P(PolicyTest, RequestsAreIgnoredUnlessEnabled) {
  UseConfig("log-file = \"LOG\"\n[requests]\nceilings = [\"memlock=8M\"]\n");
  EXPECT_EQ(Memlock(
                "asks", [](Json& s) { Request(s, "memlock=8M"); }, kLowSoft),
            kLowSoftLimit);
}

// The cookbook's recipes (docs/policy.md): devices and the namespace the
// runtime writes, nothing a container can set for itself.
constexpr const char* kNodeRecipes = R"(log-file = "LOG"
[[rule]]
name = "gpu"
rlimits = ["memlock=1M:4M"]
match = { devices = ["/dev/nvidia*"] }
[[rule]]
name = "rdma"
rlimits = ["memlock=2M:4M"]
match = { devices = ["/dev/infiniband/*"] }
[[rule]]
name = "gpu-namespaces"
rlimits = ["memlock=3M:4M"]
match = { namespaces = ["gpu-*"] }
)";

TEST_P(PolicyTest, TheEnvAnEnvRuleWouldMatchGetsNothingFromTheNodeRecipes) {
  UseConfig(kNodeRecipes);
  EXPECT_EQ(Memlock("env-only", [](Json& s) { SetEnv(s, "NVIDIA_VISIBLE_DEVICES=all"); }), kHost)
      << "NVIDIA_VISIBLE_DEVICES=all is the container author's claim, no GPU";
  EXPECT_EQ(Memlock("gpu-device", [](Json& s) { AddDevice(s, "/dev/nvidia0"); }),
            (Limit{1 << 20, 4 << 20}));
  // As containerd's CRI plugin writes it for a pod in namespace gpu-a.
  EXPECT_EQ(Memlock("gpu-namespace",
                    [](Json& s) {
                      Annotate(s, "io.kubernetes.cri.sandbox-namespace", "gpu-a");
                      Annotate(s, "io.kubernetes.cri.sandbox-name", "trainer");
                    }),
            (Limit{3 << 20, 4 << 20}));
  EXPECT_EQ(Memlock("other-namespace",
                    [](Json& s) {
                      SetEnv(s, "NVIDIA_VISIBLE_DEVICES=all");
                      Annotate(s, "io.kubernetes.cri.sandbox-namespace", "default");
                    }),
            kHost);
  // containerd's own key, plus CRI-O's key from a pod annotation it passed
  // on: disputed. The GPU candidate's raise has no default and no spec entry
  // to be compared with, so the container is refused.
  CmdResult forged = RunContainer("forged-namespace", [](Json& s) {
    Annotate(s, "io.kubernetes.cri.sandbox-namespace", "default");
    Annotate(s, "io.kubernetes.pod.namespace", "gpu-a");
  });
  EXPECT_NE(forged.status, 0) << forged.out;
  EXPECT_EQ(forged.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(Unescaped(forged.err)
                .find("disputed pod facts (the pod's namespace: annotation "
                      "\"io.kubernetes.cri.sandbox-namespace\" = \"default\""),
            std::string::npos)
      << forged.err;
}

// What the process sees for a duplicated name is what the env rules count:
// runc 1.1 and crun 1.8 both pass only the last entry (docs/policy.md, "Env").
TEST_P(PolicyTest, ADuplicatedEnvNameCountsTheEntryTheProcessSees) {
  UseConfig(kGpuRule);
  // cat is the process the runtime starts, so its environ is what the runtime passed.
  CmdResult r = RunContainer("dup", [&](Json& s) {
    s["process"]["args"] = Json::array({"cat", "/proc/self/limits", "/proc/self/environ"});
    SetEnv(s, "NVIDIA_VISIBLE_DEVICES=void");
    SetEnv(s, "NVIDIA_VISIBLE_DEVICES=0");
  });
  for (char& c : r.out) c = c == '\0' ? '\n' : c;
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{1 << 20, 4 << 20}));
  EXPECT_NE(r.out.find("\nNVIDIA_VISIBLE_DEVICES=0\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NVIDIA_VISIBLE_DEVICES=void"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Paths, PolicyTest,
                         ::testing::Values(Path::kHook, Path::kPrecreate, Path::kWrapper,
                                           Path::kWrapperExec),
                         [](const auto& info) { return PathTestName(info.param); });

// The measurement behind EnvValue, with each runtime alone: a spec env of
// X=void then X=0 reaches the process as X=0 only.
class EnvDuplicates : public ::testing::TestWithParam<std::string> {};

TEST_P(EnvDuplicates, TheProcessGetsOnlyTheLastEntry) {
  OCI_RLIMIT_REQUIRE(GetParam());
  TempDir dir;
  const std::string bundle = dir / "b";
  Json spec = MakeBundle(bundle, {"cat", "/proc/self/environ"});
  spec["process"]["env"] = Json::array({"PATH=/bin", "X=void", "X=0"});
  WriteSpec(bundle, spec);
  const std::string runtime = GetParam() == "crun" ? CrunCommand(dir.path()) : *Which("runc");
  CmdResult r =
      RunCmd({runtime, "--root", dir / "state", "run", "--bundle", bundle, UniqueId("envdup")});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string env = r.out;
  for (char& c : env) c = c == '\0' ? '\n' : c;
  EXPECT_NE(env.find("\nX=0\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("X=void"), std::string::npos) << env;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, EnvDuplicates, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ocirlimit::itest
