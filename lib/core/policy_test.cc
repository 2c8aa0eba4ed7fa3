#include "core/policy.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/pod_dispute.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;
constexpr uint64_t kG = uint64_t{1} << 30;

Config MustParse(const std::string& toml) {
  auto c = ParseConfig(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

std::string Limits(const std::vector<Rlimit>& limits) {
  std::string out;
  for (const auto& r : limits) out += (out.empty() ? "" : ",") + FormatRlimit(r);
  return out;
}

// --- Config: the rule and request keys ---------------------------------------

struct BadConfig {
  std::string name;
  std::string toml;
  std::string error;  // a substring of the one-line error
};

class RejectsConfig : public ::testing::TestWithParam<BadConfig> {};

TEST_P(RejectsConfig, WithAnErrorNamingFieldAndValue) {
  auto c = ParseConfig(GetParam().toml, "test.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().Text().find(GetParam().error), std::string::npos) << c.error().Text();
  EXPECT_EQ(c.error().Text().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Policy, RejectsConfig,
    ::testing::Values(
        BadConfig{"RuleWithoutRlimits", "[[rule]]\nname='a'\nmatch={always=true}\n",
                  "rule \"a\": rlimits is missing"},
        BadConfig{"RuleWithoutMatch", "[[rule]]\nrlimits=['memlock=1M']\n",
                  "rule \"rule[0]\": match is missing"},
        BadConfig{"EmptyMatch", "[[rule]]\nrlimits=['memlock=1M']\nmatch={}\n",
                  "rule \"rule[0]\".match: no conditions"},
        BadConfig{"AlwaysFalse", "[[rule]]\nrlimits=['memlock=1M']\nmatch={always=false}\n",
                  "match.always: only true"},
        BadConfig{"AlwaysWithOthers",
                  "[[rule]]\nrlimits=['memlock=1M']\nmatch={always=true, env=['X']}\n",
                  "always = true cannot be combined"},
        BadConfig{"BadValueRegex",
                  "[[rule]]\nrlimits=['memlock=1M']\nmatch={annotations={'a'='(x'}}\n",
                  "match.annotations.\"a\": regex \"(x\""},
        BadConfig{"BadKeyRegex",
                  "[[rule]]\nrlimits=['memlock=1M']\nmatch={annotations={'[a'='x'}}\n",
                  "match.annotations key: regex \"[a\""},
        BadConfig{"RelativeDeviceGlob",
                  "[[rule]]\nrlimits=['memlock=1M']\nmatch={devices=['dev/x*']}\n",
                  "match.devices: \"dev/x*\" must be absolute"},
        BadConfig{"UnknownMatchKey", "[[rule]]\nrlimits=['memlock=1M']\nmatch={label=['x']}\n",
                  "rule \"rule[0]\".match: unknown key \"label\""},
        BadConfig{"DuplicateName",
                  "[[rule]]\nname='a'\nrlimits=['memlock=1M']\nmatch={always=true}\n"
                  "[[rule]]\nname='a'\nrlimits=['nofile=1']\nmatch={always=true}\n",
                  "name \"a\" is used twice"},
        BadConfig{"BadRuleRlimit", "[[rule]]\nrlimits=['memlok=1M']\nmatch={always=true}\n",
                  "rule \"rule[0]\".rlimits: rlimit \"memlok=1M\""},
        BadConfig{"RuleNotATable", "rule = 3\n", "rule: must be [[rule]] tables"},
        BadConfig{"EnabledWithoutCeilings", "[requests]\nenabled=true\n",
                  "requests.enabled = true needs requests.ceilings"},
        BadConfig{"BadOverCeiling", "[requests]\nceilings=['memlock=1G']\nover-ceiling='drop'\n",
                  "requests.over-ceiling: \"drop\" is not \"clamp\" or \"reject\""},
        BadConfig{"UnknownRequestsKey", "[requests]\nannotation='x'\n",
                  "unknown key \"requests.annotation\""},
        BadConfig{"NamespaceUpperCase",
                  "[[rule]]\nname='g'\nrlimits=['memlock=1M']\nmatch={namespaces=['Gpu-*']}\n",
                  "rule \"g\".match.namespaces[0]: \"Gpu-*\" is not a Kubernetes name glob"},
        BadConfig{"PodWithSlash",
                  "[[rule]]\nname='g'\nrlimits=['memlock=1M']\nmatch={pods=['ns/pod']}\n",
                  "rule \"g\".match.pods[0]: \"ns/pod\" is not a Kubernetes name glob"},
        BadConfig{"NamespacesEmpty",
                  "[[rule]]\nname='g'\nrlimits=['memlock=1M']\nmatch={namespaces=[]}\n",
                  "rule \"g\".match.namespaces: must not be empty"},
        BadConfig{"PodEmptyEntry",
                  "[[rule]]\nname='g'\nrlimits=['memlock=1M']\nmatch={pods=['a', '']}\n",
                  "rule \"g\".match.pods[1]: empty"},
        BadConfig{"NamespacesNotStrings",
                  "[[rule]]\nname='g'\nrlimits=['memlock=1M']\nmatch={namespaces='gpu'}\n",
                  "rule \"g\".match.namespaces: must be an array of strings"}),
    [](const auto& info) { return info.param.name; });

TEST(ParseConfigPolicy, ReadsRulesAndRequests) {
  Config c = MustParse(R"(
rlimits = ["core=0"]
[[rule]]
name = "gpu"
rlimits = ["memlock=unlimited"]
match = { env = ["NVIDIA_VISIBLE_DEVICES"], env-values = { "X" = "a|b" } }
[[rule]]
rlimits = ["nofile=65536"]
[rule.match]
devices = ["/dev/infiniband/*"]
annotations = { "example\\.com/.*" = "true" }
[requests]
enabled = true
ceilings = ["memlock=64G"]
over-ceiling = "reject"
)");
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_EQ(c.rules[0].name, "gpu");
  EXPECT_EQ(c.rules[0].match.env, (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES"}));
  EXPECT_EQ(c.rules[0].match.env_values.at(0).second, "a|b");
  EXPECT_EQ(c.rules[1].name, "rule[1]");
  EXPECT_EQ(c.rules[1].match.devices, (std::vector<std::string>{"/dev/infiniband/*"}));
  EXPECT_EQ(c.rules[1].match.annotations.at(0).first, "example\\.com/.*");
  EXPECT_TRUE(c.requests.enabled);
  EXPECT_EQ(Limits(c.requests.ceilings), "memlock=68719476736:68719476736");
  EXPECT_EQ(c.requests.over_ceiling, OverCeiling::kReject);
}

TEST(ParseConfigPolicy, RequestsAreOffByDefault) {
  Config c = MustParse("rlimits = ['memlock=1M']\n");
  EXPECT_FALSE(c.requests.enabled);
  EXPECT_EQ(c.requests.over_ceiling, OverCeiling::kClamp);
  EXPECT_TRUE(c.rules.empty());
}

// --- Matching -----------------------------------------------------------------

struct MatchCase {
  std::string name;
  std::string match;  // the inline table after `match =`
  ContainerFacts facts;
  bool matches;
};

class RuleMatching : public ::testing::TestWithParam<MatchCase> {};

TEST_P(RuleMatching, Matches) {
  Config c = MustParse("[[rule]]\nrlimits = ['memlock=1M']\nmatch = " + GetParam().match + "\n");
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(RuleMatches(c.rules[0], GetParam().facts), GetParam().matches);
}

ContainerFacts Env(std::vector<std::string> env) { return {{}, std::move(env), {}}; }
ContainerFacts Devices(std::vector<std::string> d) { return {{}, {}, std::move(d)}; }
ContainerFacts Annotations(std::map<std::string, std::string> a) { return {std::move(a), {}, {}}; }
ContainerFacts Pod(std::optional<std::string> ns, std::optional<std::string> name) {
  ContainerFacts f;
  f.pod_namespace = std::move(ns);
  f.pod_name = std::move(name);
  return f;
}

const char* const kGpu = "{ env = ['NVIDIA_VISIBLE_DEVICES'] }";
const char* const kIb = "{ devices = ['/dev/infiniband/*'] }";
const char* const kAnn = R"({ annotations = { 'rdma\.example\.com/.*' = 'yes|true' } })";

INSTANTIATE_TEST_SUITE_P(
    Policy, RuleMatching,
    ::testing::Values(
        MatchCase{"AlwaysMatchesNothingSet", "{ always = true }", {}, true},
        MatchCase{"EnvSet", kGpu, Env({"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=0,1"}), true},
        MatchCase{"EnvAll", kGpu, Env({"NVIDIA_VISIBLE_DEVICES=all"}), true},
        MatchCase{"EnvVoid", kGpu, Env({"NVIDIA_VISIBLE_DEVICES=void"}), false},
        MatchCase{"EnvNoneUpperCase", kGpu, Env({"NVIDIA_VISIBLE_DEVICES=NONE"}), false},
        MatchCase{"EnvEmpty", kGpu, Env({"NVIDIA_VISIBLE_DEVICES="}), false},
        MatchCase{"EnvBareName", kGpu, Env({"NVIDIA_VISIBLE_DEVICES"}), false},
        MatchCase{"EnvUnset", kGpu, Env({"PATH=/bin"}), false},
        MatchCase{"EnvPrefixIsNotTheName", kGpu, Env({"NVIDIA_VISIBLE_DEVICES_X=1"}), false},
        MatchCase{"EnvLastDuplicateWins", kGpu,
                  Env({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_VISIBLE_DEVICES=void"}), false},
        MatchCase{"EnvAnyOfSeveral", "{ env = ['A', 'B'] }", Env({"B=1"}), true},
        MatchCase{"EnvValueRegex", "{ env-values = { 'CAPS' = '.*compute.*' } }",
                  Env({"CAPS=utility,compute"}), true},
        MatchCase{"EnvValueRegexIsWholeValue", "{ env-values = { 'CAPS' = 'compute' } }",
                  Env({"CAPS=utility,compute"}), false},
        MatchCase{"DeviceGlob", kIb, Devices({"/dev/null", "/dev/infiniband/uverbs0"}), true},
        MatchCase{"DeviceGlobOtherDir", kIb, Devices({"/dev/nvidia0"}), false},
        MatchCase{"DeviceGlobStarStaysInComponent", "{ devices = ['/dev/*'] }",
                  Devices({"/dev/infiniband/uverbs0"}), false},
        MatchCase{"DeviceNoDevices", kIb, Devices({}), false},
        MatchCase{"AnnotationRegex", kAnn, Annotations({{"rdma.example.com/nic", "true"}}), true},
        MatchCase{"AnnotationValueMismatch", kAnn,
                  Annotations({{"rdma.example.com/nic", "truely"}}), false},
        MatchCase{"AnnotationKeyIsWhole", kAnn, Annotations({{"xrdma.example.com/nic", "yes"}}),
                  false},
        MatchCase{"AnnotationKeyDotIsLiteral", kAnn, Annotations({{"rdmaXexample.com/nic", "yes"}}),
                  false},
        MatchCase{"KindsAreAnded", "{ env = ['NVIDIA_VISIBLE_DEVICES'], devices = ['/dev/nv*'] }",
                  ContainerFacts{{}, {"NVIDIA_VISIBLE_DEVICES=0"}, {"/dev/null"}}, false},
        MatchCase{"KindsAllHold", "{ env = ['NVIDIA_VISIBLE_DEVICES'], devices = ['/dev/nv*'] }",
                  ContainerFacts{{}, {"NVIDIA_VISIBLE_DEVICES=0"}, {"/dev/nvidia0"}}, true},
        // What runc 1.1 and crun 1.8 hand the process for void then 0: only "0".
        MatchCase{"EnvVoidThenValueCountsTheValueTheProcessSees", kGpu,
                  Env({"NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_VISIBLE_DEVICES=0"}), true},
        MatchCase{"NamespaceGlob", "{ namespaces = ['gpu-*'] }", Pod("gpu-team", "p"), true},
        MatchCase{"NamespaceOther", "{ namespaces = ['gpu-*'] }", Pod("default", "p"), false},
        MatchCase{"NamespaceUnknown", "{ namespaces = ['*'] }", Pod(std::nullopt, std::nullopt),
                  false},
        MatchCase{"NamespaceAnyOfSeveral", "{ namespaces = ['ml', 'hpc'] }", Pod("hpc", "p"), true},
        MatchCase{"NamespaceIsNotAnAnnotation", "{ namespaces = ['gpu'] }",
                  Annotations({{"io.kubernetes.cri.sandbox-namespace", "gpu"}}), false},
        MatchCase{"PodGlob", "{ pods = ['trainer-?'] }", Pod("ml", "trainer-0"), true},
        MatchCase{"PodGlobWhole", "{ pods = ['trainer'] }", Pod("ml", "trainer-0"), false},
        MatchCase{"NamespaceAndPodAnded", "{ namespaces = ['ml'], pods = ['trainer-*'] }",
                  Pod("default", "trainer-0"), false},
        MatchCase{"NamespaceAndEnvBothHold",
                  "{ namespaces = ['ml'], env = ['NVIDIA_VISIBLE_DEVICES'] }",
                  [] {
                    ContainerFacts f = Env({"NVIDIA_VISIBLE_DEVICES=all"});
                    f.pod_namespace = "ml";
                    return f;
                  }(),
                  true}),
    [](const auto& info) { return info.param.name; });

// --- The pod, from the runtimes' own annotations ---------------------------------

struct PodCase {
  std::string name;
  std::map<std::string, std::string> annotations;
  std::optional<std::string> ns;
  std::optional<std::string> pod;
  std::string doubt;  // a substring of DisputesText(disputes); empty: no dispute
};

class PodFromAnnotations : public ::testing::TestWithParam<PodCase> {};

TEST_P(PodFromAnnotations, TakesTheRuntimesKeysAndRecordsADisagreement) {
  ContainerFacts f = Annotations(GetParam().annotations);
  SetPodFromRuntimeAnnotations(f);
  EXPECT_EQ(f.pod_namespace, GetParam().ns);
  EXPECT_EQ(f.pod_name, GetParam().pod);
  const std::string disputes = DisputesText(f.disputes);
  if (GetParam().doubt.empty()) {
    EXPECT_EQ(disputes, "");
  } else {
    EXPECT_NE(disputes.find(GetParam().doubt), std::string::npos) << disputes;
  }
}

const char* const kCdNs = "io.kubernetes.cri.sandbox-namespace";
const char* const kCdName = "io.kubernetes.cri.sandbox-name";
const char* const kCrioNs = "io.kubernetes.pod.namespace";
const char* const kCrioName = "io.kubernetes.pod.name";

INSTANTIATE_TEST_SUITE_P(
    Policy, PodFromAnnotations,
    ::testing::Values(
        PodCase{"None", {{"a", "b"}}, std::nullopt, std::nullopt, ""},
        PodCase{"Containerd", {{kCdNs, "ml"}, {kCdName, "p"}}, "ml", "p", ""},
        PodCase{"Crio", {{kCrioNs, "ml"}, {kCrioName, "p"}}, "ml", "p", ""},
        PodCase{"BothAgree",
                {{kCdNs, "ml"}, {kCdName, "p"}, {kCrioNs, "ml"}, {kCrioName, "p"}},
                "ml",
                "p",
                ""},
        // containerd's own key, plus a pod annotation of CRI-O's key passed through.
        PodCase{"ForgedCrioKeyOnContainerd",
                {{kCdNs, "default"}, {kCdName, "p"}, {kCrioNs, "gpu"}},
                std::nullopt,
                "p",
                "the pod's namespace: annotation \"io.kubernetes.cri.sandbox-namespace\" = "
                "\"default\" but \"io.kubernetes.pod.namespace\" = \"gpu\""},
        // CRI-O's own keys, plus a pod annotation of containerd's key (CRI-O copies them all).
        PodCase{"ForgedContainerdKeyOnCrio",
                {{kCrioNs, "default"}, {kCrioName, "p"}, {kCdNs, "gpu"}},
                std::nullopt,
                "p",
                "\"io.kubernetes.cri.sandbox-namespace\" = \"gpu\" but "
                "\"io.kubernetes.pod.namespace\" = \"default\""},
        PodCase{"NamesDisagree",
                {{kCdNs, "ml"}, {kCdName, "p"}, {kCrioNs, "ml"}, {kCrioName, "q"}},
                "ml",
                std::nullopt,
                "the pod's name: annotation \"io.kubernetes.cri.sandbox-name\" = \"p\" but "
                "\"io.kubernetes.pod.name\" = \"q\""},
        PodCase{"NamespaceOnly", {{kCdNs, "ml"}}, "ml", std::nullopt, ""}),
    CaseName{});

// --- Disputed pod facts: decided for every candidate, the lowest wins ---------------

// The issue's policy: a 6M default, a cap for untrusted namespaces, a raise
// for GPU namespaces.
constexpr const char* kCapAndRaise = R"(rlimits = ["memlock=6M"]
[[rule]]
name = "untrusted"
rlimits = ["memlock=64K"]
match = { namespaces = ["untrusted-*"] }
[[rule]]
name = "gpu"
rlimits = ["memlock=1G"]
match = { namespaces = ["gpu-*"] }
)";
// No default: whether a raise is a raise depends on what the runtime gives.
constexpr const char* kRaiseOnly = R"([[rule]]
name = "gpu"
rlimits = ["memlock=1G"]
match = { namespaces = ["gpu-*"] }
)";
// A later rule replaces an earlier one per type; names are disputed here.
constexpr const char* kByName = R"(rlimits = ["memlock=6M"]
[[rule]]
name = "ml"
rlimits = ["memlock=8M"]
match = { namespaces = ["ml"] }
[[rule]]
name = "cap-web"
rlimits = ["memlock=64K"]
match = { namespaces = ["ml"], pods = ["web-*"] }
[[rule]]
name = "big"
rlimits = ["memlock=1G", "nofile=4096"]
match = { namespaces = ["ml"], pods = ["big-*"] }
[[rule]]
name = "split"
rlimits = ["memlock=1M:8M"]
match = { namespaces = ["split"], pods = ["a"] }
[[rule]]
name = "split-b"
rlimits = ["memlock=4M:4M"]
match = { namespaces = ["split"], pods = ["b"] }
[requests]
enabled = true
ceilings = ["memlock=8M"]
)";

struct DisputeCase {
  std::string name;
  const char* config;
  std::map<std::string, std::string> annotations;
  std::string spec;    // the spec's own process.rlimits, in the config language
  std::string limits;  // what the container gets, in the config language; "" with error
  std::string from;    // the memlock source; "" to skip
  std::string error;   // a substring of the error; "" for none
};

class DisputedPod : public ::testing::TestWithParam<DisputeCase> {};

TEST_P(DisputedPod, GetsTheLowestOfEveryCandidate) {
  const DisputeCase& c = GetParam();
  ContainerFacts f = Annotations(c.annotations);
  SetPodFromRuntimeAnnotations(f);
  ASSERT_FALSE(f.disputes.empty());
  if (!c.spec.empty()) f.spec_rlimits = ParseRlimitCsv(c.spec).value();
  auto d = Decide(MustParse(c.config), f);
  if (!c.error.empty()) {
    ASSERT_FALSE(d.ok()) << Limits(d->limits);
    EXPECT_NE(d.error().Text().find(c.error), std::string::npos) << d.error().Text();
    EXPECT_NE(d.error().Text().find("disputed pod facts"), std::string::npos) << d.error().Text();
    return;
  }
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Limits(d->limits), Limits(ParseRlimitCsv(c.limits).value()));
  ASSERT_EQ(d->sources.size(), d->limits.size());
  if (!c.from.empty()) {
    EXPECT_EQ(d->sources.at(0).from, c.from);
  }
  ASSERT_FALSE(d->notes.empty());
  EXPECT_TRUE(d->notes[0].starts_with("disputed pod facts (the pod's ")) << d->notes[0];
}

INSTANTIATE_TEST_SUITE_P(
    Policy, DisputedPod,
    ::testing::Values(
        // A pod in an untrusted namespace adds the other runtime's key: the cap holds.
        DisputeCase{"CapHoldsAgainstAForgedCrioKey",
                    kCapAndRaise,
                    {{kCdNs, "untrusted-a"}, {kCrioNs, "x"}},
                    "",
                    "memlock=64K",
                    "rule \"untrusted\"",
                    ""},
        DisputeCase{"CapHoldsAgainstAForgedContainerdKey",
                    kCapAndRaise,
                    {{kCrioNs, "untrusted-a"}, {kCdNs, "x"}},
                    "",
                    "memlock=64K",
                    "rule \"untrusted\"",
                    ""},
        // A pod in default claims a GPU namespace: the raise does not apply.
        DisputeCase{"RaiseNeedsEveryCandidateCrioForged",
                    kCapAndRaise,
                    {{kCdNs, "default"}, {kCrioNs, "gpu-a"}},
                    "",
                    "memlock=6M",
                    "default",
                    ""},
        DisputeCase{"RaiseNeedsEveryCandidateContainerdForged",
                    kCapAndRaise,
                    {{kCrioNs, "default"}, {kCdNs, "gpu-a"}},
                    "",
                    "memlock=6M",
                    "default",
                    ""},
        // A forgery can lower its author's own limits.
        DisputeCase{"AGpuPodForgingAnUntrustedNamespaceLowersItself",
                    kCapAndRaise,
                    {{kCdNs, "gpu-a"}, {kCrioNs, "untrusted-b"}},
                    "",
                    "memlock=64K",
                    "rule \"untrusted\"",
                    ""},
        // Without a default, the candidate the raise misses keeps the spec's entry.
        DisputeCase{"NoDefaultTheSpecsEntryIsTheBaseline",
                    kRaiseOnly,
                    {{kCdNs, "default"}, {kCrioNs, "gpu-a"}},
                    "memlock=64K",
                    "memlock=64K",
                    "the spec's own entry",
                    ""},
        DisputeCase{"NoDefaultASpecEntryAboveTheRuleKeepsTheRule",
                    kRaiseOnly,
                    {{kCdNs, "default"}, {kCrioNs, "gpu-a"}},
                    "memlock=unlimited",
                    "memlock=1G",
                    "rule \"gpu\"",
                    ""},
        DisputeCase{"NoDefaultNoSpecEntryIsRefused",
                    kRaiseOnly,
                    {{kCdNs, "default"}, {kCrioNs, "gpu-a"}},
                    "",
                    "",
                    "",
                    "and the spec sets no memlock to compare with"},
        // Names: a later cap replaces the namespace's 8M for the web candidate.
        DisputeCase{"DisputedNameACapOnEitherNameHolds",
                    kByName,
                    {{kCdNs, "ml"}, {kCdName, "web-0"}, {kCrioName, "job"}},
                    "",
                    "memlock=64K",
                    "rule \"cap-web\"",
                    ""},
        DisputeCase{"DisputedNameARaiseNeedsBothNames",
                    kByName,
                    {{kCdNs, "ml"}, {kCdName, "job"}, {kCrioName, "big-1"}},
                    "",
                    "",
                    "",
                    "and the spec sets no nofile to compare with"},
        DisputeCase{"DisputedNameARaiseOfANewTypeComparesWithTheSpec",
                    kByName,
                    {{kCdNs, "ml"}, {kCdName, "job"}, {kCrioName, "big-1"}},
                    "nofile=1024",
                    "memlock=8M,nofile=1024",
                    "rule \"ml\"",
                    ""},
        // Soft and hard are each the lowest, from different candidates.
        DisputeCase{"SoftAndHardApart",
                    kByName,
                    {{kCdNs, "split"}, {kCdName, "a"}, {kCrioName, "b"}},
                    "",
                    "memlock=1M:4M",
                    "the lowest of the disputed pod's candidates",
                    ""},
        // Both fields disputed: four candidates; only (ml, web-0) caps.
        DisputeCase{"BothFieldsDisputed",
                    kByName,
                    {{kCdNs, "ml"}, {kCrioNs, "other"}, {kCdName, "job"}, {kCrioName, "web-0"}},
                    "",
                    "memlock=64K",
                    "rule \"cap-web\"",
                    ""},
        // The request is the same for every candidate and comes last.
        DisputeCase{"ARequestStillComesLast",
                    kByName,
                    {{kCdNs, "ml"},
                     {kCdName, "web-0"},
                     {kCrioName, "job"},
                     {"oci-rlimit.io/rlimits", "memlock=2M"}},
                    "",
                    "memlock=2M",
                    "request",
                    ""}),
    CaseName{});

TEST(Decide, ADisputeIsNotMentionedWithoutPodRules) {
  Config c = MustParse("[[rule]]\nrlimits=['memlock=1G']\nmatch={devices=['/dev/x']}\n");
  ContainerFacts f = Annotations({{kCdNs, "default"}, {kCrioNs, "gpu"}});
  SetPodFromRuntimeAnnotations(f);
  auto d = Decide(c, f);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->notes.empty());
}

TEST(Decide, RuleMatchesCandidatesSaysSome) {
  Config c = MustParse(kCapAndRaise);
  ContainerFacts f = Annotations({{kCdNs, "default"}, {kCrioNs, "gpu-a"}});
  SetPodFromRuntimeAnnotations(f);
  EXPECT_EQ(RuleMatchesCandidates(c.rules.at(0), f), CandidateMatch::kNone);
  EXPECT_EQ(RuleMatchesCandidates(c.rules.at(1), f), CandidateMatch::kSome);
  f = Annotations({{kCdNs, "gpu-a"}, {kCrioNs, "gpu-a"}});
  SetPodFromRuntimeAnnotations(f);
  EXPECT_EQ(RuleMatchesCandidates(c.rules.at(1), f), CandidateMatch::kAll);
}

// --- The trust model: who controls each fact ----------------------------------------

struct TrustCase {
  std::string name;
  std::string match;
  std::string owners;   // the owners of RuleFacts, in order: "author,node"
  std::string warning;  // a substring of the rule's one warning; empty: none
};

class TrustModel : public ::testing::TestWithParam<TrustCase> {};

TEST_P(TrustModel, LabelsFactsAndWarnsOnAuthorOnlyRules) {
  Config c = MustParse(
      "[[rule]]\nname = 'r'\nrlimits = ['memlock=1M']\nmatch = " + GetParam().match + "\n");
  std::string owners;
  for (const auto& f : RuleFacts(c.rules.at(0).match)) {
    owners += (owners.empty() ? "" : ",") + std::string(FactOwnerName(f.owner));
  }
  EXPECT_EQ(owners, GetParam().owners);
  auto w = TrustWarnings(c);
  if (GetParam().warning.empty()) {
    EXPECT_TRUE(w.empty()) << w.at(0);
  } else {
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find(GetParam().warning), std::string::npos) << w[0];
    EXPECT_TRUE(w[0].starts_with("rule \"r\" matches only facts the container's author sets"))
        << w[0];
    EXPECT_EQ(w[0].find('\n'), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policy, TrustModel,
    ::testing::Values(
        TrustCase{"EnvOnly", kGpu, "author", "(env): any container can claim its limits"},
        TrustCase{"AnnotationOnly", kAnn, "author", "(annotations)"},
        TrustCase{"EnvValuesOnly", "{ env-values = { 'CAPS' = '.*compute.*' } }", "author",
                  "(env-values)"},
        TrustCase{"EnvAndAnnotation", R"({ env = ['A', 'B'], annotations = { 'a' = 'b' } })",
                  "author,author,author", "(annotations, env)"},
        TrustCase{"Devices", kIb, "node", ""},
        TrustCase{"Namespaces", "{ namespaces = ['gpu-*'] }", "node", ""},
        // A pod's name is its author's choice: alone it says nothing of who the pod is.
        TrustCase{"PodsAlone", "{ pods = ['trainer-*'] }", "author",
                  "(pods): any container can claim its limits; add a devices or namespaces"},
        TrustCase{"PodsAndEnv", "{ pods = ['trainer-*'], env = ['X'] }", "author,author",
                  "(env, pods)"},
        TrustCase{"PodsInNamespaces", "{ pods = ['trainer-*'], namespaces = ['ml'] }", "node,node",
                  ""},
        TrustCase{"EnvAndDevice", "{ env = ['NVIDIA_VISIBLE_DEVICES'], devices = ['/dev/nv*'] }",
                  "author,node", ""},
        TrustCase{"EnvAndNamespace", "{ env = ['NVIDIA_VISIBLE_DEVICES'], namespaces = ['ml'] }",
                  "author,node", ""},
        TrustCase{"Always", "{ always = true }", "", ""}),
    CaseName{});

TEST(TrustWarnings, OneLinePerRuleNamingIt) {
  Config c = MustParse(R"(
[[rule]]
name = "gpu"
rlimits = ["memlock=1G"]
match = { env = ["NVIDIA_VISIBLE_DEVICES"] }
[[rule]]
name = "rdma"
rlimits = ["memlock=1G"]
match = { devices = ["/dev/infiniband/*"] }
[[rule]]
name = "cdi"
rlimits = ["memlock=1G"]
match = { annotations = { "cdi\\.k8s\\.io/.*" = ".*" } }
)");
  auto w = TrustWarnings(c);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].starts_with("rule \"gpu\" ")) << w[0];
  EXPECT_TRUE(w[1].starts_with("rule \"cdi\" ")) << w[1];
}

// --- Combination --------------------------------------------------------------

constexpr const char* kRules = R"(
rlimits = ["memlock=8M", "core=0"]
[[rule]]
name = "gpu"
rlimits = ["memlock=1G", "nofile=4096"]
match = { env = ["NVIDIA_VISIBLE_DEVICES"] }
[[rule]]
name = "rdma"
rlimits = ["memlock=unlimited"]
match = { devices = ["/dev/infiniband/*"] }
)";

struct CombineCase {
  std::string name;
  ContainerFacts facts;
  std::string limits;
  std::vector<std::string> matched;
  std::string memlock_from;
};

class Combination : public ::testing::TestWithParam<CombineCase> {};

TEST_P(Combination, LaterRuleWinsPerType) {
  auto d = Decide(MustParse(kRules), GetParam().facts);
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Limits(d->limits), GetParam().limits);
  EXPECT_EQ(d->matched, GetParam().matched);
  ASSERT_FALSE(d->sources.empty());
  EXPECT_EQ(d->sources[0].from, GetParam().memlock_from);
  EXPECT_TRUE(d->notes.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Policy, Combination,
    ::testing::Values(
        CombineCase{"NoRuleMatches", {}, "memlock=8388608:8388608,core=0:0", {}, "default"},
        CombineCase{"Gpu",
                    Env({"NVIDIA_VISIBLE_DEVICES=0"}),
                    "memlock=1073741824:1073741824,core=0:0,nofile=4096:4096",
                    {"gpu"},
                    "rule \"gpu\""},
        CombineCase{"GpuAndRdmaLaterWins",
                    ContainerFacts{{}, {"NVIDIA_VISIBLE_DEVICES=0"}, {"/dev/infiniband/uverbs0"}},
                    "memlock=unlimited:unlimited,core=0:0,nofile=4096:4096",
                    {"gpu", "rdma"},
                    "rule \"rdma\""}),
    [](const auto& info) { return info.param.name; });

TEST(Decide, NoRulesMeansEveryContainerGetsTheTopLevelLimits) {
  Config c = MustParse("rlimits = ['memlock=unlimited']\n");
  EXPECT_FALSE(PolicyNeedsSpec(c));
  auto d = Decide(c, {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Limits(d->limits), "memlock=unlimited:unlimited");
}

TEST(Decide, PolicyNeedsSpecWithRulesOrRequests) {
  EXPECT_TRUE(PolicyNeedsSpec(MustParse(kRules)));
  EXPECT_TRUE(PolicyNeedsSpec(MustParse("[requests]\nenabled=true\nceilings=['memlock=1G']\n")));
  EXPECT_FALSE(PolicyNeedsSpec(MustParse("[requests]\nceilings=['memlock=1G']\n")));
}

// --- Requests -----------------------------------------------------------------

struct RequestCase {
  std::string name;
  std::string over_ceiling;  // clamp or reject
  std::string annotation;
  std::string limits;  // expected, when allowed
  std::string note;    // a substring of the only note, or "" for none
  std::string error;   // a substring of the error, or "" when allowed
};

class Requesting : public ::testing::TestWithParam<RequestCase> {};

TEST_P(Requesting, UnderTheCeilings) {
  const RequestCase& p = GetParam();
  Config c = MustParse(
      "rlimits = ['memlock=8M', 'nofile=1024']\n[requests]\nenabled = true\n"
      "ceilings = ['memlock=64G', 'nofile=4096:1048576']\nover-ceiling = '" +
      p.over_ceiling + "'\n");
  auto d = Decide(c, Annotations({{"oci-rlimit.io/rlimits", p.annotation}}));
  if (!p.error.empty()) {
    ASSERT_FALSE(d.ok()) << Limits(d->limits);
    EXPECT_NE(d.error().Text().find(p.error), std::string::npos) << d.error().Text();
    return;
  }
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Limits(d->limits), p.limits);
  if (p.note.empty()) {
    EXPECT_TRUE(d->notes.empty()) << d->notes[0];
  } else {
    ASSERT_EQ(d->notes.size(), 1u);
    EXPECT_NE(d->notes[0].find(p.note), std::string::npos) << d->notes[0];
  }
}

const std::string k64G = std::to_string(64 * kG);

INSTANTIATE_TEST_SUITE_P(
    Policy, Requesting,
    ::testing::Values(
        RequestCase{"Under", "clamp", "memlock=1G",
                    "memlock=1073741824:1073741824,nofile=1024:1024", "", ""},
        RequestCase{"AtTheCeiling", "reject", "memlock=64G,nofile=4096:1048576",
                    "memlock=" + k64G + ":" + k64G + ",nofile=4096:1048576", "", ""},
        RequestCase{"LowerThanTheDefault", "reject", "memlock=64K",
                    "memlock=65536:65536,nofile=1024:1024", "", ""},
        RequestCase{"OverIsClamped", "clamp", "memlock=unlimited",
                    "memlock=" + k64G + ":" + k64G + ",nofile=1024:1024",
                    "memlock=unlimited:unlimited is over the ceiling memlock=" + k64G + ":" + k64G +
                        "; clamped to memlock=" + k64G + ":" + k64G,
                    ""},
        RequestCase{"OnlyTheSoftPartOver", "clamp", "nofile=8192:8192",
                    "memlock=8388608:8388608,nofile=4096:8192", "clamped to nofile=4096:8192", ""},
        RequestCase{"OverIsRejected", "reject", "memlock=unlimited", "", "",
                    "annotation \"oci-rlimit.io/rlimits\" = \"memlock=unlimited\": "
                    "memlock=unlimited:unlimited is over the ceiling"},
        RequestCase{"UnlistedTypeIsIgnoredWhenClamping", "clamp", "core=unlimited,memlock=1G",
                    "memlock=1073741824:1073741824,nofile=1024:1024",
                    "core=unlimited:unlimited: core is not in requests.ceilings; ignored", ""},
        RequestCase{"UnlistedTypeIsRejected", "reject", "core=unlimited", "", "",
                    "core is not in requests.ceilings (over-ceiling = \"reject\")"},
        RequestCase{"MalformedIsAnErrorWhenClamping", "clamp", "memlock=lots", "", "",
                    "annotation \"oci-rlimit.io/rlimits\" = \"memlock=lots\": rlimit "
                    "\"memlock=lots\""},
        RequestCase{"MalformedNameIsAnError", "reject", "memlok=1G", "", "",
                    "unknown name \"memlok\""},
        RequestCase{"ControlCharactersAreEscaped", "clamp", "memlock=1\x01G", "", "",
                    "\"memlock=1\\x01G\""},
        RequestCase{"EmptyAsksForNothing", "reject", "", "memlock=8388608:8388608,nofile=1024:1024",
                    "", ""}),
    [](const auto& info) { return info.param.name; });

TEST(Decide, RequestsDisabledAreIgnoredWithANote) {
  Config c = MustParse("rlimits = ['memlock=8M']\n[requests]\nceilings = ['memlock=64G']\n");
  auto d = Decide(c, Annotations({{"oci-rlimit.io/rlimits", "memlock=unlimited"}}));
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Limits(d->limits), "memlock=8388608:8388608");
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_NE(d->notes[0].find("ignored, requests are not enabled"), std::string::npos);
}

TEST(Decide, RequestReplacesARuleEntryAndIsNamedAsTheSource) {
  Config c =
      MustParse(std::string(kRules) + "[requests]\nenabled = true\nceilings = ['memlock=2G']\n");
  auto d = Decide(
      c,
      ContainerFacts{{{"oci-rlimit.io/rlimits", "memlock=2G"}}, {"NVIDIA_VISIBLE_DEVICES=0"}, {}});
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(Limits(d->limits), "memlock=2147483648:2147483648,core=0:0,nofile=4096:4096");
  EXPECT_EQ(d->sources[0].from, "request");
  EXPECT_EQ(d->sources[2].from, "rule \"gpu\"");
}

// --- Conflicts with the spec's own rlimits ----------------------------------

TEST(FindConflicts, PairsConfiguredWithSpecEntriesOfTheSameType) {
  std::vector<Rlimit> configured = {
      {RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 10, 20}, {RLIMIT_CORE, 0, 0}};
  std::vector<Rlimit> spec = {{RLIMIT_NOFILE, 1024, 1024}, {RLIMIT_CORE, 1, 1}};
  auto c = FindConflicts(configured, spec);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].configured, configured[1]);
  EXPECT_EQ(c[0].spec, spec[0]);
  EXPECT_EQ(c[1].configured, configured[2]);
  EXPECT_EQ(c[1].spec, spec[1]);
}

TEST(FindConflicts, NoneWithoutCommonTypes) {
  EXPECT_TRUE(FindConflicts({{RLIMIT_MEMLOCK, 1, 1}}, {{RLIMIT_NOFILE, 1, 1}}).empty());
  EXPECT_TRUE(FindConflicts({}, {{RLIMIT_NOFILE, 1, 1}}).empty());
  EXPECT_TRUE(FindConflicts({{RLIMIT_MEMLOCK, 1, 1}}, {}).empty());
}

TEST(FindConflicts, ADuplicatedSpecTypeReportsTheEntryThatWins) {
  // Runtimes apply spec entries in order, so the last one is what sticks.
  auto c = FindConflicts({{RLIMIT_NOFILE, 10, 20}},
                         {{RLIMIT_NOFILE, 1, 1}, {RLIMIT_CORE, 0, 0}, {RLIMIT_NOFILE, 2, 2}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].spec, (Rlimit{RLIMIT_NOFILE, 2, 2}));
}

TEST(ConflictWarnings, OnePerConflictNamingBothValuesAndTheFallback) {
  std::vector<Conflict> conflicts = {
      {{RLIMIT_NOFILE, 65536, 65536}, {RLIMIT_NOFILE, 1024, 1024}},
      {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_MEMLOCK, 65536, kInf}},
  };
  auto w = ConflictWarnings(conflicts);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0],
            "spec process.rlimits sets RLIMIT_NOFILE to 1024:1024; runc re-applies it after "
            "hooks, so under runc the spec's value wins over nofile=65536:65536 (crun keeps the "
            "hook's value); use oci-rlimit-runtime (runtime mode) to replace the spec entry");
  EXPECT_NE(w[1].find("sets RLIMIT_MEMLOCK to 65536:unlimited"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find("wins over memlock=unlimited:unlimited"), std::string::npos) << w[1];
  EXPECT_TRUE(ConflictWarnings({}).empty());
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// A rule's regexes are compiled once per config, not once per annotation:
// 50k annotations took 7 s in the hook when every match compiled its
// pattern. The bound is generous (ASan, a loaded 2-core machine); the old
// code missed it by far.
TEST(Decide, FiftyThousandAnnotationsAgainstRegexRulesIsFast) {
  auto cfg = ParseConfig(R"toml([[rule]]
name = "rdma"
rlimits = ["memlock=1M"]
match.annotations = { "example\\.com/(rdma|ib)-[a-z]+" = "(true|yes|1)" }
)toml",
                         "t.toml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().Text();
  ContainerFacts facts;
  for (int i = 0; i < 50000; ++i)
    facts.annotations["k8s.example.org/key-" + std::to_string(i)] = "v";
  facts.annotations["example.com/rdma-nic"] = "yes";
  const auto start = std::chrono::steady_clock::now();
  auto d = Decide(*cfg, facts);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(d.ok()) << d.error().Text();
  EXPECT_EQ(d->matched, std::vector<std::string>{"rdma"});
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST(Decide, AHandBuiltRuleWithoutCompiledPatternsStillMatches) {
  Config cfg;
  Rule r;
  r.name = "x";
  r.rlimits = {{RLIMIT_CORE, 0, 0}};
  r.match.annotations = {{"a.*", "b"}};
  r.match.env_values = {{"MODE", "rd(ma)?"}};
  cfg.rules.push_back(r);
  ASSERT_EQ(cfg.rules[0].match.compiled, nullptr);
  auto d = Decide(cfg, ContainerFacts{{{"abc", "b"}}, {"MODE=rdma"}, {}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->matched, std::vector<std::string>{"x"});
  d = Decide(cfg, ContainerFacts{{{"abc", "b"}}, {"MODE=rdx"}, {}});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->matched.empty());
}

}  // namespace
}  // namespace ocirlimit
