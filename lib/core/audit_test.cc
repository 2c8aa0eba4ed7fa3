// The audit verdict as a table: a policy, a container's facts and what its
// init process has now -> ok, missing, over, refused or unknown, and what a
// heal applies.
#include "core/audit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;

// memlock 8M for everyone, nofile 4096 for GPU containers, requests for
// memlock up to 16M; a request above that is refused (on-error decides).
constexpr const char* kPolicy = R"(rlimits = ["memlock=8M"]
[[rule]]
name = "gpu"
rlimits = ["nofile=4096"]
match.env = ["NVIDIA_VISIBLE_DEVICES"]
[requests]
enabled = true
ceilings = ["memlock=16M"]
over-ceiling = "reject"
)";

const Rlimit kMemlock8{RLIMIT_MEMLOCK, 8 * kM, 8 * kM};
const Rlimit kNofile4096{RLIMIT_NOFILE, 4096, 4096};

Rlimit Memlock(uint64_t soft, uint64_t hard) { return {RLIMIT_MEMLOCK, soft, hard}; }
Rlimit Nofile(uint64_t soft, uint64_t hard) { return {RLIMIT_NOFILE, soft, hard}; }

ContainerFacts Request(const std::string& value, std::vector<std::string> env = {}) {
  ContainerFacts f;
  f.annotations[std::string(kRequestAnnotation)] = value;
  f.env = std::move(env);
  return f;
}

struct Case {
  const char* name;
  const char* extra_config;  // appended before the policy (top-level keys)
  ContainerFacts facts;
  std::vector<Rlimit> have;
  AuditStatus status;
  std::vector<Rlimit> target;
  std::vector<Rlimit> heal;
  const char* why = "";   // a substring of why, or "" for none
  const char* note = "";  // a substring of one note, or ""
  bool judged = true;
};

std::vector<Case> Cases() {
  const ContainerFacts none;
  const ContainerFacts gpu{{}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}, {}};
  ContainerFacts sandbox = Request("memlock=64M");
  sandbox.annotations["io.kubernetes.cri.container-type"] = "sandbox";
  ContainerFacts crio_sandbox;
  crio_sandbox.annotations["io.kubernetes.cri-o.ContainerType"] = "sandbox";
  ContainerFacts workload;
  workload.annotations["io.kubernetes.cri.container-type"] = "container";
  return {
      {"Ok", "", none, {kMemlock8, Nofile(1024, 1024)}, AuditStatus::kOk, {kMemlock8}, {}},
      {"OkWithRule",
       "",
       gpu,
       {Nofile(4096, 4096), kMemlock8},
       AuditStatus::kOk,
       {kMemlock8, kNofile4096},
       {}},
      {"MissingSoft",
       "",
       none,
       {Memlock(64 << 10, 8 * kM)},
       AuditStatus::kMissing,
       {kMemlock8},
       {kMemlock8}},
      {"MissingHard",
       "",
       none,
       {Memlock(8 * kM, 4 * kM)},
       AuditStatus::kMissing,
       {kMemlock8},
       {kMemlock8}},
      {"MissingRuleLimit",
       "",
       gpu,
       {kMemlock8, Nofile(1024, 1024)},
       AuditStatus::kMissing,
       {kMemlock8, kNofile4096},
       {kNofile4096}},
      {"Over",
       "",
       none,
       {Memlock(kRlimInfinity, kRlimInfinity)},
       AuditStatus::kOver,
       {kMemlock8},
       {kMemlock8}},
      {"OverSoftOnly",
       "",
       none,
       {Memlock(8 * kM, kRlimInfinity)},
       AuditStatus::kOver,
       {kMemlock8},
       {kMemlock8}},
      {"MissingOutweighsOver",
       "",
       gpu,
       {Memlock(kRlimInfinity, kRlimInfinity), Nofile(1, 1)},
       AuditStatus::kMissing,
       {kMemlock8, kNofile4096},
       {kMemlock8, kNofile4096}},
      {"RequestGrantedOk",
       "",
       Request("memlock=12M"),
       {Memlock(12 * kM, 12 * kM)},
       AuditStatus::kOk,
       {Memlock(12 * kM, 12 * kM)},
       {}},
      {"RequestGrantedMissing",
       "",
       Request("memlock=12M"),
       {kMemlock8},
       AuditStatus::kMissing,
       {Memlock(12 * kM, 12 * kM)},
       {Memlock(12 * kM, 12 * kM)}},
      // A refused request runs with what it got: the heal is the node's limits.
      {"RefusedOverCeiling",
       "",
       Request("memlock=64M"),
       {Memlock(64 * kM, 64 * kM)},
       AuditStatus::kRefused,
       {kMemlock8},
       {kMemlock8},
       "memlock"},
      {"RefusedMalformed",
       "",
       Request("memlock=lots"),
       {Memlock(64 << 10, 64 << 10)},
       AuditStatus::kRefused,
       {kMemlock8},
       {kMemlock8},
       "lots"},
      // Healed before: still refused (it should not run), nothing to apply.
      {"RefusedAlreadyAtNodeLimits",
       "",
       Request("memlock=64M"),
       {kMemlock8},
       AuditStatus::kRefused,
       {kMemlock8},
       {},
       "memlock"},
      // Its other facts still count: the GPU rule matches without the request.
      {"RefusedKeepsRules",
       "",
       Request("memlock=64M", {"NVIDIA_VISIBLE_DEVICES=0"}),
       {Memlock(64 * kM, 64 * kM), Nofile(1024, 1024)},
       AuditStatus::kRefused,
       {kMemlock8, kNofile4096},
       {kMemlock8, kNofile4096},
       "memlock"},
      // on-error = "warn" lets it run: judged against the node's limits.
      {"WarnExcusedOk",
       "on-error = \"warn\"\n",
       Request("memlock=64M"),
       {kMemlock8},
       AuditStatus::kOk,
       {kMemlock8},
       {},
       "",
       "left out"},
      {"WarnExcusedOver",
       "on-error = \"warn\"\n",
       Request("memlock=64M"),
       {Memlock(64 * kM, 64 * kM)},
       AuditStatus::kOver,
       {kMemlock8},
       {kMemlock8},
       "",
       "left out"},
      // A pod sandbox (pause) is not judged: on an NRI-only node nothing ever
      // adjusted it, and it runs no workload. Its request counts for nothing.
      {"SandboxNotJudged",
       "",
       sandbox,
       {kMemlock8},
       AuditStatus::kOk,
       {},
       {},
       "not judged",
       "",
       false},
      // Lower than the top-level limits, as NRI leaves it: not missing, no heal.
      {"SandboxBelowTopLevelNotMissing",
       "",
       sandbox,
       {Memlock(64 << 10, 64 << 10)},
       AuditStatus::kOk,
       {},
       {},
       "pod sandbox (pause)",
       "",
       false},
      {"CrioSandboxAboveTopLevelNotOver",
       "",
       crio_sandbox,
       {Memlock(kRlimInfinity, kRlimInfinity)},
       AuditStatus::kOk,
       {},
       {},
       "not judged",
       "",
       false},
      // The same state in a pod's workload container is missing.
      {"WorkloadBelowTopLevelMissing",
       "",
       workload,
       {Memlock(64 << 10, 64 << 10)},
       AuditStatus::kMissing,
       {kMemlock8},
       {kMemlock8}},
      {"UnknownUnread",
       "",
       none,
       {Nofile(1024, 1024)},
       AuditStatus::kUnknown,
       {},
       {},
       "memlock limit was not read"},
  };
}

class AuditTable : public testing::TestWithParam<Case> {};

TEST_P(AuditTable, Verdict) {
  const Case& c = GetParam();
  auto cfg = ParseConfig(std::string(c.extra_config) + kPolicy, "test.toml");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  AuditVerdict v = AuditContainer(*cfg, c.facts, EntryPoint::kAudit, c.have);
  EXPECT_STREQ(AuditStatusName(v.status), AuditStatusName(c.status));
  EXPECT_EQ(v.target, c.target);
  EXPECT_EQ(v.heal, c.heal);
  EXPECT_EQ(NeedsAttention(v), c.status != AuditStatus::kOk);
  EXPECT_EQ(v.judged, c.judged);
  if (*c.why == '\0') {
    EXPECT_EQ(v.why, "");
  } else {
    EXPECT_NE(v.why.find(c.why), std::string::npos) << v.why;
  }
  if (*c.note != '\0') {
    bool found = false;
    for (const auto& n : v.notes) found = found || n.find(c.note) != std::string::npos;
    EXPECT_TRUE(found) << c.note << " in " << testing::PrintToString(v.notes);
  }
  if (v.status != AuditStatus::kUnknown) {
    ASSERT_EQ(v.limits.size(), v.target.size());
    for (size_t i = 0; i < v.limits.size(); ++i) EXPECT_EQ(v.limits[i].want, v.target[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Audit, AuditTable, testing::ValuesIn(Cases()), CaseName{});

TEST(AuditTest, NoPolicyIsOkAndLeavesItAlone) {
  auto cfg = ParseConfig("", "empty.toml");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  AuditVerdict v = AuditContainer(*cfg, {}, EntryPoint::kAudit, {});
  EXPECT_EQ(v.status, AuditStatus::kOk);
  EXPECT_TRUE(v.target.empty());
  EXPECT_TRUE(v.heal.empty());
}

TEST(AuditTest, PerLimitStatuses) {
  AuditVerdict v =
      CompareLimits({kMemlock8, kNofile4096}, {Nofile(8192, 8192), Memlock(1, 8 * kM)});
  ASSERT_EQ(v.limits.size(), 2u);
  EXPECT_EQ(v.limits[0].status, AuditStatus::kMissing);
  EXPECT_EQ(v.limits[0].have, (LimitPair{1, 8 * kM}));
  EXPECT_EQ(v.limits[1].status, AuditStatus::kOver);
  EXPECT_EQ(v.limits[1].have, (LimitPair{8192, 8192}));
  EXPECT_EQ(v.status, AuditStatus::kMissing);
}

TEST(AuditTest, StatusNames) {
  EXPECT_STREQ(AuditStatusName(AuditStatus::kOk), "ok");
  EXPECT_STREQ(AuditStatusName(AuditStatus::kMissing), "missing");
  EXPECT_STREQ(AuditStatusName(AuditStatus::kOver), "over");
  EXPECT_STREQ(AuditStatusName(AuditStatus::kRefused), "refused");
  EXPECT_STREQ(AuditStatusName(AuditStatus::kUnknown), "unknown");
  EXPECT_EQ(UnknownVerdict("gone").why, "gone");
}

}  // namespace
}  // namespace ocirlimit
