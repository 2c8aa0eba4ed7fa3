// The trust cases of policy (docs/policy.md, "Trust model" and "Disputed pod
// facts") under real runc, through every entry point (policy_paths.h): a
// pods rule alone, disputed pod facts that keep caps and get no raise, and a
// bad request that keeps the node's limits. Each case asserts what the
// container's own process reads from /proc/self/limits.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "harness.h"
#include "policy_paths.h"

namespace ocirlimit::itest {
namespace {

// A pod's name is its author's choice: a pods rule alone matches a pod of
// that name in any namespace (validate flags it), beside namespaces only there.
TEST_P(PolicyTest, APodsRuleAloneMatchesAnyNamespaceTheNamespacedOneDoesNot) {
  UseConfig(R"(log-file = "LOG"
[[rule]]
name = "trainer-anywhere"
rlimits = ["memlock=1M:4M"]
match = { pods = ["trainer-*"] }
[[rule]]
name = "trainer-in-ml"
rlimits = ["memlock=2M:4M"]
match = { namespaces = ["ml"], pods = ["trainer-*"] }
)");
  auto pod = [](const std::string& ns, const std::string& name) {
    return [=](Json& s) {
      Annotate(s, "io.kubernetes.cri.sandbox-namespace", ns);
      Annotate(s, "io.kubernetes.cri.sandbox-name", name);
    };
  };
  EXPECT_EQ(Memlock("evil", pod("default", "trainer-evil")), (Limit{1 << 20, 4 << 20}))
      << "pods alone: any namespace";
  EXPECT_EQ(Memlock("ml", pod("ml", "trainer-0")), (Limit{2 << 20, 4 << 20}));
  EXPECT_EQ(Memlock("web", pod("ml", "web-0")), kHost);
}

// Disputed pod facts (docs/policy.md): decided for every candidate pod, the
// lowest per type, so a forged family can only lower its author's limits.
constexpr const char* kCapAndRaise = R"(log-file = "LOG"
rlimits = ["memlock=2M:4M"]
[[rule]]
name = "untrusted"
rlimits = ["memlock=64K"]
match = { namespaces = ["untrusted-*"] }
[[rule]]
name = "gpu"
rlimits = ["memlock=3M:8M"]
match = { namespaces = ["gpu-*"] }
[[rule]]
name = "cap-web"
rlimits = ["memlock=128K"]
match = { namespaces = ["ml"], pods = ["web-*"] }
)";

// containerd's keys say one pod, CRI-O's another.
std::function<void(Json&)> Claims(const std::map<std::string, std::string>& keys) {
  return [=](Json& s) {
    for (const auto& [k, v] : keys) Annotate(s, k, v);
  };
}

constexpr const char* kCdNs = "io.kubernetes.cri.sandbox-namespace";
constexpr const char* kCdName = "io.kubernetes.cri.sandbox-name";
constexpr const char* kCrioNs = "io.kubernetes.pod.namespace";
constexpr const char* kCrioName = "io.kubernetes.pod.name";
constexpr Limit k64K{64 << 10, 64 << 10};
constexpr Limit kDefault{2 << 20, 4 << 20};

TEST_P(PolicyTest, DisputedNamespaceKeepsTheCap) {
  UseConfig(kCapAndRaise);
  EXPECT_EQ(Memlock("crio-forged", Claims({{kCdNs, "untrusted-a"}, {kCrioNs, "x"}})), k64K);
  EXPECT_EQ(Memlock("cd-forged", Claims({{kCrioNs, "untrusted-a"}, {kCdNs, "x"}})), k64K);
  EXPECT_EQ(Memlock("undisputed", Claims({{kCdNs, "x"}})), kDefault);
  std::string log = Unescaped(ReadFile(log_path()));
  EXPECT_NE(log.find("disputed pod facts (the pod's namespace: annotation "
                     "\"io.kubernetes.cri.sandbox-namespace\" = \"untrusted-a\" but "
                     "\"io.kubernetes.pod.namespace\" = \"x\")"),
            std::string::npos)
      << log;
}

TEST_P(PolicyTest, DisputedNamespaceGetsNoRaise) {
  UseConfig(kCapAndRaise);
  EXPECT_EQ(Memlock("crio-forged", Claims({{kCdNs, "default"}, {kCrioNs, "gpu-a"}})), kDefault);
  EXPECT_EQ(Memlock("cd-forged", Claims({{kCrioNs, "default"}, {kCdNs, "gpu-a"}})), kDefault);
  EXPECT_EQ(Memlock("agreeing", Claims({{kCdNs, "gpu-a"}, {kCrioNs, "gpu-a"}})),
            (Limit{3 << 20, 8 << 20}))
      << "both families agree: the raise applies";
}

TEST_P(PolicyTest, DisputedPodNameKeepsTheCap) {
  UseConfig(kCapAndRaise);
  constexpr Limit k128K{128 << 10, 128 << 10};
  EXPECT_EQ(Memlock("crio-forged", Claims({{kCdNs, "ml"}, {kCdName, "web-0"}, {kCrioName, "job"}})),
            k128K);
  EXPECT_EQ(Memlock("cd-forged", Claims({{kCrioNs, "ml"}, {kCrioName, "web-0"}, {kCdName, "job"}})),
            k128K);
  EXPECT_EQ(Memlock("undisputed", Claims({{kCdNs, "ml"}, {kCdName, "job"}})), kDefault);
}

TEST_P(PolicyTest, AnUndecidableDisputeIsRefused) {
  for (const char* on_error : {"fail", "warn"}) {
    UseConfig(std::string("log-file = \"LOG\"\non-error = \"") + on_error + R"("
[[rule]]
name = "gpu"
rlimits = ["memlock=3M:8M"]
match = { namespaces = ["gpu-*"] }
)");
    CmdResult r = RunContainer(std::string("forged-") + on_error,
                               Claims({{kCdNs, "default"}, {kCrioNs, "gpu-a"}}));
    EXPECT_NE(r.status, 0) << on_error << ": " << r.out;
    EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
    EXPECT_NE(Unescaped(r.err).find("and the spec sets no memlock to compare with, so the lower "
                                    "cannot be told: refused"),
              std::string::npos)
        << r.err;
  }
}

// A bad request is the request's error, never the node's: under on-error =
// "warn" the top-level limits stay; under "fail" the container is refused.
TEST_P(PolicyTest, ABadRequestUnderWarnKeepsTheNodesLimits) {
  const std::string policy = R"(log-file = "LOG"
rlimits = ["memlock=64K", "nofile=512"]
[requests]
enabled = true
ceilings = ["memlock=1M"]
)";
  UseConfig("on-error = \"warn\"\n" + policy);
  // Without runc's default nofile entry, which runc re-applies after hooks.
  auto ask = [](Json& s) {
    s["process"].erase("rlimits");
    Request(s, "please");
  };
  CmdResult r = RunContainer("please", ask);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LimitRow(r.out, kMemlock), k64K);
  EXPECT_EQ(LimitRow(r.out, "Max open files"), (Limit{512, 512}));
  std::string log = Unescaped(ReadFile(log_path()));
  EXPECT_NE(log.find("on-error = \"warn\": the request is left out; the container gets the "
                     "node's limits (top-level and rules) without it: annotation "
                     "\"oci-rlimit.io/rlimits\" = \"please\""),
            std::string::npos)
      << log;
  UseConfig("on-error = \"fail\"\n" + policy);
  CmdResult refused = RunContainer("please-fail", ask);
  EXPECT_NE(refused.status, 0);
  EXPECT_EQ(refused.out.find(kMemlock), std::string::npos) << "the container must not have run";
}

}  // namespace
}  // namespace ocirlimit::itest
