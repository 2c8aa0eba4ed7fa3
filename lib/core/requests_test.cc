#include "core/requests.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/admission.h"
#include "core/audit.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;
constexpr uint64_t kG = uint64_t{1} << 30;
const int kMemlock = FindRlimit("memlock")->resource;
const int kNproc = FindRlimit("nproc")->resource;

// The node: memlock 64 KiB for everyone, memlock up to 1 GiB and nofile up
// to 4096 on request.
Config Node(const std::string& sources, const std::string& over = "clamp",
            const std::string& on_error = "fail") {
  auto c = ParseConfig("on-error = '" + on_error +
                           "'\nrlimits = ['memlock=64K']\n[requests]\nenabled = true\n"
                           "ceilings = ['memlock=1G', 'nofile=4096']\nover-ceiling = '" +
                           over + "'\nsources = " + sources + "\n",
                       "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

std::string Yaml(const std::string& type, uint64_t soft, uint64_t hard) {
  return "- type: " + type + "\n  soft: " + std::to_string(soft) +
         "\n  hard: " + std::to_string(hard) + "\n";
}

const std::string kAdjuster = "ulimits.noderesource.dev/container.app";
const std::string kAdjusterOld = "ulimits.nri.containerd.io/container.app";
const std::string kOci(kRequestAnnotation);

ContainerFacts Facts(std::map<std::string, std::string> annotations,
                     std::vector<Rlimit> spec = {}) {
  ContainerFacts f;
  f.annotations = std::move(annotations);
  f.annotations[std::string(kContainerdContainerName)] = "app";
  f.spec_rlimits = std::move(spec);
  SetPodFromRuntimeAnnotations(f);
  return f;
}

std::string Memlock(const Decision& d) {
  for (const auto& s : d.sources) {
    if (s.limit.resource == kMemlock) return FormatRlimit(s.limit) + " from " + s.from;
  }
  return "none";
}

struct SourceCase {
  std::string name;
  std::string sources;  // the TOML list
  std::string over;     // "clamp" or "reject"
  ContainerFacts facts;
  std::string want;  // Memlock(decision), or "error: SUBSTRING"
};

class RequestSources : public ::testing::TestWithParam<SourceCase> {};

TEST_P(RequestSources, GrantUnderTheCeilings) {
  const SourceCase& c = GetParam();
  auto d = Decide(Node(c.sources, c.over), c.facts);
  if (c.want.starts_with("error: ")) {
    ASSERT_FALSE(d.ok()) << Memlock(*d);
    EXPECT_NE(d.error().Text().find(c.want.substr(7)), std::string::npos) << d.error().Text();
    return;
  }
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), c.want);
}

const Rlimit kSpec1M{kMemlock, kM, kM};
const Rlimit kSpec1G{kMemlock, kG, kG};
const Rlimit kSpec2G{kMemlock, 2 * kG, 2 * kG};
const std::string kAll = "['spec', 'ulimit-adjuster', 'oci-rlimit']";

INSTANTIATE_TEST_SUITE_P(
    Requests, RequestSources,
    ::testing::Values(
        // Nothing asks: the node's default.
        SourceCase{"NoneAsks", kAll, "clamp", Facts({}), "memlock=65536:65536 from default"},
        // oci-rlimit alone: under, at, over (clamp and reject).
        SourceCase{"OciUnder", "['oci-rlimit']", "clamp", Facts({{kOci, "memlock=1M"}}),
                   "memlock=1048576:1048576 from request"},
        SourceCase{"OciAt", "['oci-rlimit']", "reject", Facts({{kOci, "memlock=1G"}}),
                   "memlock=1073741824:1073741824 from request"},
        SourceCase{"OciOverClamped", "['oci-rlimit']", "clamp", Facts({{kOci, "memlock=2G"}}),
                   "memlock=1073741824:1073741824 from request"},
        SourceCase{"OciOverRejected", "['oci-rlimit']", "reject", Facts({{kOci, "memlock=2G"}}),
                   "error: is over the ceiling memlock=1073741824:1073741824"},
        // ulimit-adjuster alone.
        SourceCase{"AdjusterUnder", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, Yaml("RLIMIT_MEMLOCK", kM, kM)}}),
                   "memlock=1048576:1048576 from request (ulimit-adjuster)"},
        SourceCase{"AdjusterOldKey", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjusterOld, Yaml("rlimit_memlock", kM, 2 * kM)}}),
                   "memlock=1048576:2097152 from request (ulimit-adjuster)"},
        SourceCase{"AdjusterNewKeyWins", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, Yaml("memlock", kM, kM)},
                          {kAdjusterOld, Yaml("memlock", 2 * kM, 2 * kM)}}),
                   "memlock=1048576:1048576 from request (ulimit-adjuster)"},
        SourceCase{"AdjusterAt", "['ulimit-adjuster']", "reject",
                   Facts({{kAdjuster, Yaml("memlock", kG, kG)}}),
                   "memlock=1073741824:1073741824 from request (ulimit-adjuster)"},
        SourceCase{"AdjusterOverClamped", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, Yaml("memlock", kM, 2 * kG)}}),
                   "memlock=1048576:1073741824 from request (ulimit-adjuster)"},
        SourceCase{"AdjusterOverRejected", "['ulimit-adjuster']", "reject",
                   Facts({{kAdjuster, Yaml("memlock", kM, 2 * kG)}}), "error: over the ceiling"},
        SourceCase{"AdjusterOtherContainer", "['ulimit-adjuster']", "reject",
                   Facts({{"ulimits.noderesource.dev/container.sidecar", Yaml("memlock", kM, kM)}}),
                   "memlock=65536:65536 from default"},
        SourceCase{"AdjusterTypeNotInCeilingsIgnored", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, Yaml("nproc", 1, 1)}}), "memlock=65536:65536 from default"},
        SourceCase{"AdjusterTypeNotInCeilingsRejected", "['ulimit-adjuster']", "reject",
                   Facts({{kAdjuster, Yaml("nproc", 1, 1)}}),
                   "error: nproc is not in requests.ceilings"},
        SourceCase{"AdjusterMalformed", "['ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, "- type: memlock\n  soft: -1\n  hard: 1\n"}}),
                   "error: soft: \"-1\" is negative"},
        SourceCase{"AdjusterNotASource", "['oci-rlimit']", "reject",
                   Facts({{kAdjuster, "not yaml at all"}}), "memlock=65536:65536 from default"},
        // spec alone: the spec's own entry under, at and over the ceiling.
        SourceCase{"SpecUnder", "['spec']", "reject", Facts({}, {kSpec1M}),
                   "memlock=1048576:1048576 from request (spec)"},
        SourceCase{"SpecAt", "['spec']", "reject", Facts({}, {kSpec1G}),
                   "memlock=1073741824:1073741824 from request (spec)"},
        SourceCase{"SpecOverClamped", "['spec']", "clamp", Facts({}, {kSpec2G}),
                   "memlock=1073741824:1073741824 from request (spec)"},
        SourceCase{"SpecOverRejected", "['spec']", "reject", Facts({}, {kSpec2G}),
                   "error: process.rlimits: memlock=2147483648:2147483648 is over the ceiling"},
        SourceCase{"SpecLastEntryCounts", "['spec']", "reject", Facts({}, {kSpec2G, kSpec1M}),
                   "memlock=1048576:1048576 from request (spec)"},
        SourceCase{"SpecTypeNotInCeilingsIsNoRequest", "['spec']", "reject",
                   Facts({}, {{kNproc, 1, 1}}), "memlock=65536:65536 from default"},
        SourceCase{"SpecNotASource", "['oci-rlimit']", "reject", Facts({}, {kSpec2G}),
                   "memlock=65536:65536 from default"},
        // Together: a later source replaces an earlier one's entry.
        SourceCase{
            "AllThreeLastWins", kAll, "clamp",
            Facts({{kOci, "memlock=3M"}, {kAdjuster, Yaml("memlock", 2 * kM, 2 * kM)}}, {kSpec1M}),
            "memlock=3145728:3145728 from request"},
        SourceCase{
            "AllThreeReversed", "['oci-rlimit', 'ulimit-adjuster', 'spec']", "clamp",
            Facts({{kOci, "memlock=3M"}, {kAdjuster, Yaml("memlock", 2 * kM, 2 * kM)}}, {kSpec1M}),
            "memlock=1048576:1048576 from request (spec)"},
        SourceCase{"SpecAndAdjuster", "['spec', 'ulimit-adjuster']", "clamp",
                   Facts({{kAdjuster, Yaml("memlock", 2 * kM, 2 * kM)}}, {kSpec1M}),
                   "memlock=2097152:2097152 from request (ulimit-adjuster)"},
        SourceCase{"LaterOverStillClamped", kAll, "clamp",
                   Facts({{kAdjuster, Yaml("memlock", 8 * kG, 8 * kG)}}, {kSpec1M}),
                   "memlock=1073741824:1073741824 from request (ulimit-adjuster)"},
        SourceCase{"AnyOverRejectsTheWhole", kAll, "reject",
                   Facts({{kOci, "memlock=1M"}}, {kSpec2G}), "error: process.rlimits"}),
    CaseName{});

TEST(Requests, RecordsEachSourceThatAskedAndWhatItGot) {
  auto d = Decide(Node(kAll), Facts({{kOci, "memlock=3M"}}, {kSpec2G}));
  ASSERT_TRUE(d.ok()) << d.error().Text();
  ASSERT_EQ(d->requests.size(), 2U);
  EXPECT_EQ(RequestRecordText(d->requests[0]),
            "spec: process.rlimits asks memlock=2147483648:2147483648; granted "
            "memlock=1073741824:1073741824 (over the ceiling memlock=1073741824:1073741824, "
            "clamped; replaced by the later source oci-rlimit)");
  EXPECT_EQ(d->requests[1].source, "oci-rlimit");
  ASSERT_TRUE(d->requests[1].granted.has_value());
  EXPECT_EQ(FormatRlimit(*d->requests[1].granted), "memlock=3145728:3145728");
}

TEST(Requests, DisabledIgnoresEveryAnnotationSourceEvenMalformed) {
  Config cfg = Node(kAll);
  cfg.requests.enabled = false;
  auto d = Decide(cfg, Facts({{kAdjuster, "{{{"}, {kOci, "memlock=2G"}}, {kSpec2G}));
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=65536:65536 from default");
  ASSERT_EQ(d->notes.size(), 2U);
  EXPECT_NE(d->notes[0].find("requests are not enabled"), std::string::npos);
}

TEST(Requests, ANameNobodyStatesReadsNoAdjusterAnnotation) {
  ContainerFacts f;
  f.annotations[kAdjuster] = Yaml("memlock", kM, kM);
  auto d = Decide(Node(kAll, "reject"), f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=65536:65536 from default");
}

TEST(Requests, CrioNamesTheContainerToo) {
  ContainerFacts f;
  f.annotations[std::string(kCrioContainerName)] = "app";
  f.annotations[kAdjuster] = Yaml("memlock", kM, kM);
  SetPodFromRuntimeAnnotations(f);
  auto d = Decide(Node(kAll), f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=1048576:1048576 from request (ulimit-adjuster)");
}

// Where the pod's annotations are known apart (NRI), the ulimit-adjuster
// source reads them only, as the NRI sample does: a container's own
// annotation of that key is no request (a note says so).
TEST(Requests, TheAdjusterReadsThePodsAnnotationsOnlyWhereKnown) {
  ContainerFacts f;
  f.container_name = "app";
  f.pod_annotations.emplace();
  f.annotations[kAdjuster] = Yaml("memlock", kM, kM);  // the container's own
  auto d = Decide(Node("['ulimit-adjuster']", "reject"), f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=65536:65536 from default");
  ASSERT_EQ(d->notes.size(), 1U);
  EXPECT_NE(d->notes[0].find("container annotation \"" + kAdjuster + "\": ignored"),
            std::string::npos)
      << d->notes[0];

  // The pod's, which a container annotation of the same key overrode in
  // `annotations`: the pod's value counts.
  (*f.pod_annotations)[kAdjusterOld] = Yaml("memlock", 2 * kM, 2 * kM);
  f.annotations[kAdjusterOld] = Yaml("memlock", 3 * kM, 3 * kM);
  d = Decide(Node("['ulimit-adjuster']", "reject"), f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=2097152:2097152 from request (ulimit-adjuster)");

  // Without pod_annotations (a spec), the merged annotations are read.
  f.pod_annotations.reset();
  d = Decide(Node("['ulimit-adjuster']", "reject"), f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Memlock(*d), "memlock=1048576:1048576 from request (ulimit-adjuster)");
}

TEST(Requests, ADisputedPodKeepsItsRequestRecords) {
  auto c = ParseConfig(
      "[[rule]]\nrlimits = ['memlock=2M']\nmatch = { namespaces = ['gpu-*'] }\n"
      "[requests]\nenabled = true\nceilings = ['memlock=1G']\nsources = ['ulimit-adjuster']\n",
      "test.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  ContainerFacts f = Facts({{kAdjuster, Yaml("memlock", kM, kM)},
                            {std::string(kContainerdSandboxNamespace), "gpu-a"},
                            {std::string(kCrioPodNamespace), "default"}});
  ASSERT_EQ(f.disputes.size(), 1U);
  auto d = Decide(*c, f);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  ASSERT_EQ(d->requests.size(), 1U);
  EXPECT_EQ(d->requests[0].source, "ulimit-adjuster");
  EXPECT_EQ(Memlock(*d), "memlock=1048576:1048576 from request (ulimit-adjuster)");
}

// --- Admit: on-error, the hook, the sandbox ----------------------------------

TEST(Requests, WarnLeavesOutAnnotationsAndClampsTheSpec) {
  const Verdict v = Admit(Node(kAll, "reject", "warn"),
                          Facts({{kAdjuster, Yaml("memlock", 8 * kG, 8 * kG)}}, {kSpec2G}),
                          EntryPoint::kWrapperCreate);
  ASSERT_EQ(v.action, Action::kApply);
  ASSERT_EQ(v.limits.size(), 1U);
  EXPECT_EQ(FormatRlimit(v.limits[0]), "memlock=1073741824:1073741824");
  ASSERT_FALSE(v.warnings.empty());
  EXPECT_NE(v.warnings[0].find("the request is left out"), std::string::npos);
}

TEST(Requests, FailRefusesARejectedSpecEntryOnEveryPath) {
  for (EntryPoint at : {EntryPoint::kHook, EntryPoint::kWrapperCreate, EntryPoint::kWrapperExec,
                        EntryPoint::kNri, EntryPoint::kExplain}) {
    const Verdict v = Admit(Node("['spec']", "reject"), Facts({}, {kSpec2G}), at);
    EXPECT_EQ(v.action, Action::kFail) << EntryPointName(at);
  }
}

TEST(Requests, TheHookRefusesASpecEntryOverTheCeilingItCannotLower) {
  const Verdict v = Admit(Node("['spec']"), Facts({}, {kSpec2G}), EntryPoint::kHook);
  ASSERT_EQ(v.action, Action::kFail);
  EXPECT_NE(v.error->Text().find("the hook cannot lower it"), std::string::npos);
  // The wrapper replaces the spec's entry: clamped.
  const Verdict w = Admit(Node("['spec']"), Facts({}, {kSpec2G}), EntryPoint::kWrapperCreate);
  ASSERT_EQ(w.action, Action::kApply);
  EXPECT_EQ(FormatRlimit(w.limits[0]), "memlock=1073741824:1073741824");
}

TEST(Requests, TheHookSaysSoUnderWarn) {
  const Verdict v =
      Admit(Node("['spec']", "clamp", "warn"), Facts({}, {kSpec2G}), EntryPoint::kHook);
  ASSERT_EQ(v.action, Action::kApply);
  ASSERT_EQ(v.warnings.size(), 1U);
  EXPECT_NE(v.warnings[0].find("the hook cannot lower it"), std::string::npos);
  EXPECT_NE(v.warnings[0].find("the container keeps it"), std::string::npos);
  EXPECT_TRUE(v.limits.empty()) << "runc would only raise it back";
}

TEST(Requests, TheHookHasNoConflictWithAGrantedSpecEntry) {
  const Verdict v = Admit(Node("['spec']"), Facts({}, {kSpec1M}), EntryPoint::kHook);
  ASSERT_EQ(v.action, Action::kApply);
  EXPECT_TRUE(v.warnings.empty()) << v.warnings[0];
  // Without the spec source the node's default conflicts with it, as before.
  const Verdict old = Admit(Node("['oci-rlimit']"), Facts({}, {kSpec1M}), EntryPoint::kHook);
  ASSERT_EQ(old.warnings.size(), 1U);
  EXPECT_NE(old.warnings[0].find("runc re-applies it after hooks"), std::string::npos);
}

TEST(Requests, ASandboxAsksNothingByAnnotation) {
  ContainerFacts f = Facts({{kAdjuster, Yaml("memlock", kM, kM)}, {kOci, "memlock=2G"}});
  f.annotations[std::string(kContainerdContainerType)] = "sandbox";
  const Verdict v = Admit(Node(kAll, "reject"), f, EntryPoint::kWrapperCreate);
  ASSERT_EQ(v.action, Action::kApply);
  EXPECT_EQ(FormatRlimit(v.limits[0]), "memlock=65536:65536");
}

TEST(Requests, AuditJudgesAgainstTheGrantedRequestAndReportsIt) {
  const Config cfg = Node(kAll);
  const ContainerFacts f = Facts({{kAdjuster, Yaml("memlock", kM, kM)}});
  AuditVerdict ok = AuditContainer(cfg, f, EntryPoint::kAudit, {{kMemlock, kM, kM}});
  EXPECT_EQ(ok.status, AuditStatus::kOk);
  ASSERT_EQ(ok.requests.size(), 1U);
  EXPECT_EQ(ok.requests[0].source, "ulimit-adjuster");
  AuditVerdict over = AuditContainer(cfg, f, EntryPoint::kAudit, {{kMemlock, kG, kG}});
  EXPECT_EQ(over.status, AuditStatus::kOver);
  // A refused spec entry: judged against the clamped one.
  AuditVerdict refused = AuditContainer(Node("['spec']", "reject"), Facts({}, {kSpec2G}),
                                        EntryPoint::kAudit, {{kMemlock, kG, kG}});
  EXPECT_EQ(refused.status, AuditStatus::kRefused);
  ASSERT_EQ(refused.requests.size(), 1U);
  EXPECT_EQ(refused.requests[0].source, "spec");
}

// --- Config ------------------------------------------------------------------

struct SourcesConfig {
  std::string name;
  std::string sources;
  std::string error;  // empty: parses
};

class ParsesSources : public ::testing::TestWithParam<SourcesConfig> {};

TEST_P(ParsesSources, OrSaysWhy) {
  auto c = ParseConfig("[requests]\nenabled = true\nceilings = ['memlock=1G']\n" +
                           (GetParam().sources.empty() ? "" : "sources = " + GetParam().sources),
                       "test.toml");
  if (GetParam().error.empty()) {
    ASSERT_TRUE(c.ok()) << c.error().Text();
    return;
  }
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().Text().find(GetParam().error), std::string::npos) << c.error().Text();
}

INSTANTIATE_TEST_SUITE_P(
    Requests, ParsesSources,
    ::testing::Values(SourcesConfig{"Default", "", ""}, SourcesConfig{"All", kAll, ""},
                      SourcesConfig{"Unknown", "['docker']",
                                    "requests.sources: \"docker\" is not \"oci-rlimit\""},
                      SourcesConfig{"Twice", "['spec', 'spec']", "\"spec\" given twice"},
                      SourcesConfig{"Empty", "[]", "requests.sources: empty"},
                      SourcesConfig{"NotAList", "'spec'", "must be an array of strings"}),
    CaseName{});

TEST(Requests, DefaultSourceIsOurAnnotationAlone) {
  auto c = ParseConfig("[requests]\nenabled = true\nceilings = ['memlock=1G']\n", "t.toml");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->requests.sources.size(), 1U);
  EXPECT_EQ(c->requests.sources[0], RequestSource::kOciRlimit);
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// SpecOverCeiling (the hook's refusal under runc) compares both values, and
// an entry exactly at its ceiling is not over it (issue 39's surviving
// mutants: soft only, and `>=` for `>`).
TEST(SpecOverCeiling, EitherValueOverTheCeilingAndNeverAtIt) {
  auto cfg = ParseConfig(
      "[requests]\nenabled = true\nceilings = ['memlock=1G', 'nofile=1024:4096']\n"
      "sources = ['spec']\n",
      "test.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  const int nofile = FindRlimit("nofile")->resource;
  const auto over = [&](Rlimit r) { return SpecOverCeiling(cfg->requests, {r}); };
  const Rlimit hard_over{kMemlock, kM, 2 * kG};
  EXPECT_EQ(over(hard_over), std::vector<Rlimit>{hard_over});
  const Rlimit soft_over{nofile, 2048, 4096};
  EXPECT_EQ(over(soft_over), std::vector<Rlimit>{soft_over});
  const Rlimit nofile_hard_over{nofile, 512, 8192};
  EXPECT_EQ(over(nofile_hard_over), std::vector<Rlimit>{nofile_hard_over});
  EXPECT_EQ(over({kMemlock, kG, kG}), std::vector<Rlimit>{});
  EXPECT_EQ(over({nofile, 1024, 4096}), std::vector<Rlimit>{});
  EXPECT_EQ(over({kMemlock, kG - 1, kG}), std::vector<Rlimit>{});
  const Rlimit one_over{kMemlock, kG, kG + 1};
  EXPECT_EQ(over(one_over), std::vector<Rlimit>{one_over});
}

}  // namespace
}  // namespace ocirlimit
