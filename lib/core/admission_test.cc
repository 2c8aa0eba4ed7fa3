// Admit, as a table: every entry point x on-error x a rules/requests
// scenario, with the verdict each combination must give.
#include "core/admission.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "formats/text.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {

// The table's enum parameters print as their names, not as hex dumps. Static:
// found by argument-dependent lookup from gtest's printer, local to this file.
static void PrintTo(OnError e, std::ostream* os) { *os << (e == OnError::kWarn ? "warn" : "fail"); }
static void PrintTo(EntryPoint e, std::ostream* os) { *os << EntryPointName(e); }

namespace {

constexpr uint64_t kM = uint64_t{1} << 20;

// Top-level nofile, a GPU rule for memlock, requests for memlock up to 8M.
constexpr const char* kPolicy = R"(rlimits = ["nofile=4096"]
[[rule]]
name = "gpu"
rlimits = ["memlock=4M"]
match.env = ["NVIDIA_VISIBLE_DEVICES"]
[requests]
enabled = true
ceilings = ["memlock=8M"]
)";

struct Scenario {
  const char* name;
  ContainerFacts facts;
  std::vector<Rlimit> limits;  // with kApply
  bool container_error;        // a malformed or rejected request: refused under "fail"
  const char* note;            // a substring of one note, or ""
  bool conflict;               // facts.spec_rlimits conflicts with limits
  const char* extra_config = "";
};

std::vector<Scenario> Scenarios() {
  const Rlimit nofile{RLIMIT_NOFILE, 4096, 4096};
  const Rlimit gpu{RLIMIT_MEMLOCK, 4 * kM, 4 * kM};
  return {
      {"NoRuleNoRequest", {}, {nofile}, false, "", false},
      {"RuleMatches", {{}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}, {}}, {nofile, gpu}, false, "", false},
      {"RuleVoidDoesNotMatch",
       {{}, {"NVIDIA_VISIBLE_DEVICES=void"}, {}, {}},
       {nofile},
       false,
       "",
       false},
      {"RequestGranted",
       {{{"oci-rlimit.io/rlimits", "memlock=6M"}}, {}, {}, {}},
       {nofile, {RLIMIT_MEMLOCK, 6 * kM, 6 * kM}},
       false,
       "",
       false},
      {"RequestOverRuleWins",
       {{{"oci-rlimit.io/rlimits", "memlock=2M"}}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}, {}},
       {nofile, {RLIMIT_MEMLOCK, 2 * kM, 2 * kM}},
       false,
       "",
       false},
      {"RequestClamped",
       {{{"oci-rlimit.io/rlimits", "memlock=1G"}}, {}, {}, {}},
       {nofile, {RLIMIT_MEMLOCK, 8 * kM, 8 * kM}},
       false,
       "clamped to memlock=8388608:8388608",
       false},
      {"RequestMalformed",
       {{{"oci-rlimit.io/rlimits", "memlock=lots"}}, {}, {}, {}},
       {nofile},
       true,
       "",
       false},
      {"RequestMalformedKeepsTheRule",
       {{{"oci-rlimit.io/rlimits", "please"}}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}, {}},
       {nofile, gpu},
       true,
       "",
       false},
      {"RequestOverCeilingRejected",
       {{{"oci-rlimit.io/rlimits", "memlock=1G"}}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}, {}},
       {nofile, gpu},
       true,
       "",
       false,
       "over-ceiling = \"reject\"\n"},
      {"ContainerdSandboxGetsNoRequest",
       {{{"oci-rlimit.io/rlimits", "memlock=lots"},
         {"io.kubernetes.cri.container-type", "sandbox"}},
        {"NVIDIA_VISIBLE_DEVICES=0"},
        {},
        {}},
       {nofile, gpu},
       false,
       "ignored on a pod sandbox (pause) container",
       false},
      {"CrioSandboxGetsNoRequest",
       {{{"oci-rlimit.io/rlimits", "memlock=6M"}, {"io.kubernetes.cri-o.ContainerType", "sandbox"}},
        {},
        {},
        {}},
       {nofile},
       false,
       "ignored on a pod sandbox (pause) container",
       false},
      {"NonSandboxContainerTypeKeepsRequest",
       {{{"oci-rlimit.io/rlimits", "memlock=6M"},
         {"io.kubernetes.cri.container-type", "container"}},
        {},
        {},
        {}},
       {nofile, {RLIMIT_MEMLOCK, 6 * kM, 6 * kM}},
       false,
       "",
       false},
      {"SpecSetsTheSameType",
       {{}, {}, {}, {{RLIMIT_NOFILE, 1024, 1024}}},
       {nofile},
       false,
       "",
       true},
  };
}

const std::vector<EntryPoint> kEntryPoints = {EntryPoint::kHook,          EntryPoint::kPrecreate,
                                              EntryPoint::kWrapperCreate, EntryPoint::kWrapperExec,
                                              EntryPoint::kNri,           EntryPoint::kExplain};

using Param = std::tuple<size_t, OnError, EntryPoint>;

class AdmitTable : public ::testing::TestWithParam<Param> {};

TEST_P(AdmitTable, GivesTheVerdict) {
  const auto [index, on_error, at] = GetParam();
  const Scenario s = Scenarios()[index];
  auto cfg = ParseConfig(std::string(kPolicy) + s.extra_config, "test.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  cfg->on_error = on_error;

  const Verdict v = Admit(*cfg, s.facts, at);
  if (s.container_error && on_error == OnError::kFail) {
    ASSERT_TRUE(v.error.has_value());
    EXPECT_NE(v.error->Text().find("oci-rlimit.io/rlimits"), std::string::npos) << v.error->Text();
    EXPECT_TRUE(v.limits.empty());
    EXPECT_EQ(v.action, Action::kFail);
    EXPECT_TRUE(v.warnings.empty());
    return;
  }
  if (s.container_error) {
    // The request's error, never the node's: the node's limits without it.
    EXPECT_EQ(v.action, Action::kApply);
    EXPECT_FALSE(v.error.has_value());
    EXPECT_EQ(v.limits, s.limits);
    ASSERT_FALSE(v.warnings.empty());
    EXPECT_TRUE(v.warnings[0].starts_with("on-error = \"warn\": the request is left out"))
        << v.warnings[0];
    EXPECT_NE(v.warnings[0].find("oci-rlimit.io/rlimits"), std::string::npos) << v.warnings[0];
    return;
  }
  EXPECT_EQ(v.action, Action::kApply);
  EXPECT_FALSE(v.error.has_value()) << v.error->Text();
  EXPECT_EQ(v.limits, s.limits);
  ASSERT_EQ(v.sources.size(), v.limits.size());
  for (size_t i = 0; i < v.limits.size(); ++i) EXPECT_EQ(v.sources[i].limit, v.limits[i]);
  if (*s.note != '\0') {
    bool found = false;
    for (const auto& n : v.notes) found = found || n.find(s.note) != std::string::npos;
    EXPECT_TRUE(found) << "no note with: " << s.note;
  }
  // Conflict warnings are the hook's alone: every other path replaces the
  // spec's entry instead of racing it.
  const bool warned = !v.warnings.empty();
  EXPECT_EQ(warned, s.conflict && at == EntryPoint::kHook);
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  const auto [index, on_error, at] = info.param;
  std::string entry = EntryPointName(at);
  entry[0] = static_cast<char>(entry[0] - 'a' + 'A');
  return std::string(Scenarios()[index].name) + "_" +
         (on_error == OnError::kWarn ? "Warn" : "Fail") + "_" + entry;
}

INSTANTIATE_TEST_SUITE_P(Admission, AdmitTable,
                         ::testing::Combine(::testing::Range(size_t{0}, Scenarios().size()),
                                            ::testing::Values(OnError::kFail, OnError::kWarn),
                                            ::testing::ValuesIn(kEntryPoints)),
                         ParamName);

// A bad request never takes the node's defaults away: top-level limits
// (and rules) stay, under on-error = "warn", on every path.
struct NodeLimitsCase {
  std::string name;
  std::string request;
  std::string extra;  // more config
};

class BadRequestKeepsNodeLimits : public ::testing::TestWithParam<NodeLimitsCase> {};

TEST_P(BadRequestKeepsNodeLimits, UnderWarnOnEveryPath) {
  auto cfg = ParseConfig(std::string(R"(rlimits = ["memlock=64K", "nofile=512"]
on-error = "warn"
[requests]
enabled = true
ceilings = ["memlock=1M"]
)") + GetParam().extra,
                         "test.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  ContainerFacts f;
  f.annotations["oci-rlimit.io/rlimits"] = GetParam().request;
  for (EntryPoint at : kEntryPoints) {
    const Verdict v = Admit(*cfg, f, at);
    EXPECT_EQ(v.action, Action::kApply) << EntryPointName(at);
    EXPECT_EQ(v.limits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, 64 << 10, 64 << 10},
                                             {RLIMIT_NOFILE, 512, 512}}))
        << EntryPointName(at);
    ASSERT_EQ(v.warnings.size(), 1u) << EntryPointName(at);
    EXPECT_NE(v.warnings[0].find(Quote(GetParam().request)), std::string::npos) << v.warnings[0];
  }
  cfg->on_error = OnError::kFail;
  EXPECT_EQ(Admit(*cfg, f, EntryPoint::kNri).action, Action::kFail);
}

INSTANTIATE_TEST_SUITE_P(Admission, BadRequestKeepsNodeLimits,
                         ::testing::Values(NodeLimitsCase{"Malformed", "please", ""},
                                           NodeLimitsCase{"UnknownType", "memlock=1M,bogus=1", ""},
                                           NodeLimitsCase{"OverCeilingRejected", "memlock=1G",
                                                          "over-ceiling = \"reject\"\n"},
                                           NodeLimitsCase{"UnlistedTypeRejected", "core=unlimited",
                                                          "over-ceiling = \"reject\"\n"}),
                         CaseName{});

// A pod dispute that cannot be decided is no request error: it refuses the
// container whatever on-error says (starting it untouched would drop a cap).
TEST(Admit, AnUndecidableDisputeIsRefusedUnderWarnToo) {
  auto cfg = ParseConfig(R"(on-error = "warn"
[[rule]]
name = "gpu"
rlimits = ["memlock=1G"]
match = { namespaces = ["gpu-*"] }
)",
                         "test.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  ContainerFacts f;
  f.annotations = {{"io.kubernetes.cri.sandbox-namespace", "default"},
                   {"io.kubernetes.pod.namespace", "gpu-a"},
                   {"oci-rlimit.io/rlimits", "please"}};
  SetPodFromRuntimeAnnotations(f);
  for (EntryPoint at : kEntryPoints) {
    const Verdict v = Admit(*cfg, f, at);
    EXPECT_EQ(v.action, Action::kFail) << EntryPointName(at);
    ASSERT_TRUE(v.error.has_value());
    EXPECT_NE(v.error->Text().find("disputed pod facts"), std::string::npos) << v.error->Text();
  }
}

TEST(OnContainerError, FollowsOnErrorTheSameWayAsAdmit) {
  Config cfg;
  Verdict fail = OnContainerError(cfg, MakeError("prlimit", EPERM));
  EXPECT_EQ(fail.action, Action::kFail);
  EXPECT_TRUE(fail.warnings.empty());
  cfg.on_error = OnError::kWarn;
  Verdict warn = OnContainerError(cfg, MakeError("prlimit", EPERM));
  EXPECT_EQ(warn.action, Action::kProceedUnmodified);
  ASSERT_EQ(warn.warnings.size(), 1u);
  EXPECT_NE(warn.warnings[0].find("prlimit: Operation not permitted"), std::string::npos)
      << warn.warnings[0];
  ASSERT_TRUE(warn.error.has_value());
}

TEST(IsSandbox, OnlyTheSandboxValueOfEitherKey) {
  EXPECT_TRUE(IsSandbox({{{"io.kubernetes.cri.container-type", "sandbox"}}, {}, {}, {}}));
  EXPECT_TRUE(IsSandbox({{{"io.kubernetes.cri-o.ContainerType", "sandbox"}}, {}, {}, {}}));
  EXPECT_FALSE(IsSandbox({{{"io.kubernetes.cri.container-type", "container"}}, {}, {}, {}}));
  EXPECT_FALSE(IsSandbox({{{"io.kubernetes.cri.sandbox-id", "sandbox"}}, {}, {}, {}}));
  EXPECT_FALSE(IsSandbox({}));
}

TEST(IsSandbox, OnlyTheEnginesOwnKeyAndNoDisagreement) {
  const std::string cd(kContainerdContainerType), crio(kCrioContainerType);
  ContainerFacts cd_sandbox{{{cd, "sandbox"}}, {}, {}, {}};
  ContainerFacts crio_sandbox{{{crio, "sandbox"}}, {}, {}, {}};
  ContainerFacts both{{{cd, "sandbox"}, {crio, "sandbox"}}, {}, {}, {}};
  ContainerFacts disagree{{{cd, "sandbox"}, {crio, "container"}}, {}, {}, {}};
  ContainerFacts disagree2{{{cd, "container"}, {crio, "sandbox"}}, {}, {}, {}};
  EXPECT_TRUE(IsSandbox(cd_sandbox, SandboxMarker::kContainerd));
  EXPECT_FALSE(IsSandbox(crio_sandbox, SandboxMarker::kContainerd));
  EXPECT_TRUE(IsSandbox(crio_sandbox, SandboxMarker::kCrio));
  EXPECT_FALSE(IsSandbox(cd_sandbox, SandboxMarker::kCrio));
  EXPECT_TRUE(IsSandbox(both, SandboxMarker::kCrio));
  EXPECT_TRUE(IsSandbox(both, SandboxMarker::kContainerd));
  for (auto m : {SandboxMarker::kContainerd, SandboxMarker::kCrio, SandboxMarker::kEither}) {
    EXPECT_FALSE(IsSandbox(disagree, m));
    EXPECT_FALSE(IsSandbox(disagree2, m));
  }
  EXPECT_FALSE(IsSandbox(cd_sandbox, SandboxMarker::kNone));
  EXPECT_FALSE(IsSandbox(both, SandboxMarker::kNone));
}

}  // namespace
}  // namespace ocirlimit
