// Policy under real runc (docs/policy.md): rules select containers, requests
// are held to the admin's ceilings. Each case asserts what the container's
// own process reads from /proc/self/limits, through the hook and through
// oci-rlimit-runtime.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr Limit kHost{8 << 20, 8 << 20};
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

enum class Path { kHook, kWrapper };
void PrintTo(Path p, std::ostream* os) { *os << (p == Path::kHook ? "hook" : "runtime wrapper"); }

class PolicyTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override { OCI_RLIMIT_REQUIRE("runc", "prlimit"); }

  void UseConfig(std::string toml) {
    for (size_t at; (at = toml.find("LOG")) != std::string::npos;) toml.replace(at, 3, log_path());
    WriteFile(config_path(), toml + "[runtime]\nruntimes = [\"" + *Which("runc") + "\"]\n");
  }
  std::string config_path() const { return dir_ / "config.toml"; }
  std::string log_path() const { return dir_ / "policy.log"; }

  // A fresh bundle whose container prints its limits; `edit` changes its spec.
  CmdResult RunContainer(const std::string& name, const std::function<void(Json&)>& edit,
                         const std::vector<std::string>& prefix = {}) {
    const std::string bundle = dir_ / name;
    Json spec = MakeBundle(bundle, {"cat", "/proc/self/limits"});
    edit(spec);
    std::vector<std::string> argv = prefix;
    if (GetParam() == Path::kHook) {
      spec["hooks"]["createRuntime"] =
          Json::array({HookEntry(OurBinary("oci-rlimit-hook"),
                                 {"oci-rlimit-hook", "--config", config_path(), "createRuntime"})});
      argv.push_back(*Which("runc"));
    } else {
      argv.push_back(OurBinary("oci-rlimit-runtime"));
    }
    WriteSpec(bundle, spec);
    argv.insert(argv.end(),
                {"--root", dir_ / "state", "run", "--bundle", bundle, UniqueId("policy")});
    RunOptions opts;
    opts.env = {"OCI_RLIMIT_CONFIG=" + config_path()};
    return RunCmd(argv, opts);
  }

  std::optional<Limit> Memlock(const std::string& name, const std::function<void(Json&)>& edit,
                               const std::vector<std::string>& prefix = {}) {
    CmdResult r = RunContainer(name, edit, prefix);
    EXPECT_EQ(r.status, 0) << r.err;
    return LimitRow(r.out, kMemlock);
  }

  TempDir dir_;
};

void SetEnv(Json& spec, const std::string& entry) { spec["process"]["env"].push_back(entry); }

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

void Request(Json& spec, const std::string& value) {
  spec["annotations"]["oci-rlimit.io/rlimits"] = value;
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

void Annotate(Json& spec, const std::string& key, const std::string& value) {
  spec["annotations"][key] = value;
}

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

INSTANTIATE_TEST_SUITE_P(Paths, PolicyTest, ::testing::Values(Path::kHook, Path::kWrapper),
                         [](const auto& info) {
                           return info.param == Path::kHook ? "Hook" : "RuntimeWrapper";
                         });

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
