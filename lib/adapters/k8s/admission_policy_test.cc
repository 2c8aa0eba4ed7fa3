// The policy's structure, per config: which documents, which checks in
// which, the binding's actions and selectors, what the comments leave to
// the node. What the CEL decides is tests/admission's (a real API server
// against explain, on one case table).
#include "adapters/k8s/admission_policy.h"

#include <gtest/gtest.h>

#include "adapters/k8s/verdict_checks.h"
#include "formats/text.h"
#include "tests/testing/case_name.h"

namespace ocirlimit::k8s {
namespace {

constexpr const char* kCeilings = "ceilings = [\"memlock=64M\", \"nofile=4096:65536\"]\n";

Config Cfg(const std::string& top, const std::string& requests) {
  auto c = ParseConfig(top + "[requests]\nenabled = true\n" + kCeilings + requests, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c ? *c : Config{};
}

std::string Yaml(const Config& cfg, const PolicyOptions& o = {}) {
  auto y = AdmissionPolicyYaml(cfg, o);
  EXPECT_TRUE(y.ok()) << y.error().Text();
  return y ? *y : "";
}

// The YAML's documents, "---" apart, without the header comment.
std::vector<std::string> Documents(const std::string& yaml) {
  std::vector<std::string> out;
  size_t at = yaml.find("---\n");
  while (at != std::string::npos) {
    const size_t next = yaml.find("---\n", at + 4);
    out.push_back(yaml.substr(at + 4, next == std::string::npos ? next : next - at - 4));
    at = next;
  }
  return out;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

struct ShapeCase {
  const char* name;
  const char* top;        // on-error
  const char* requests;   // over-ceiling
  size_t refused_checks;  // validations in NAME (0: inert)
  size_t warned_checks;   // validations in NAME-warn (0: inert)
};

// Named in test names and GetParam() lines (case_name.h's PrintTo is for ocirlimit's own
// namespace, which argument-dependent lookup does not search from here).
void PrintTo(const ShapeCase& c, std::ostream* os) { *os << c.name; }

class Shape : public ::testing::TestWithParam<ShapeCase> {};

bool Inert(const std::string& doc) {
  return Has(doc, "  - expression: \"true\"\n") && !Has(doc, "variables:");
}

// Both policies and both bindings, whatever the config: applying a regenerated file replaces
// every piece an older one bound (an inert policy where the config gives it nothing to do).
TEST_P(Shape, WritesBothPoliciesAndBindingsAlways) {
  const ShapeCase& c = GetParam();
  const auto docs = Documents(Yaml(Cfg(c.top, c.requests)));
  ASSERT_EQ(docs.size(), 4U);
  const char* names[] = {"oci-rlimit-requests", "oci-rlimit-requests-warn"};
  const size_t checks[] = {c.refused_checks, c.warned_checks};
  for (size_t p = 0; p < 2; ++p) {
    const std::string& policy = docs[2 * p];
    const std::string& binding = docs[2 * p + 1];
    EXPECT_TRUE(Has(policy, "kind: ValidatingAdmissionPolicy\n"));
    EXPECT_TRUE(Has(policy, Cat("metadata:\n  name: ", names[p], "\n")));
    EXPECT_TRUE(Has(binding, "kind: ValidatingAdmissionPolicyBinding\n"));
    EXPECT_TRUE(Has(binding, Cat("metadata:\n  name: ", names[p], "\n")));
    EXPECT_TRUE(Has(binding, Cat("  policyName: ", names[p], "\n")));
    EXPECT_EQ(Inert(policy), checks[p] == 0) << policy;
    if (checks[p] > 0) {
      EXPECT_EQ(Count(policy, "  - expression: |-\n"), checks[p]);
    }
  }
  EXPECT_TRUE(Has(docs[1], "  validationActions: [Deny]\n"));
  EXPECT_TRUE(Has(docs[3], "  validationActions: [Warn]\n"));
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Shape,
    ::testing::Values(
        // reject, fail: malformed and over both refused, by one check (the first error).
        ShapeCase{"reject_fail", "", "over-ceiling = \"reject\"\n", 1, 0},
        // clamp, fail: malformed refused; each entry not in or over warned (6), and the
        // count of those past 4 KiB.
        ShapeCase{"clamp_fail", "", "over-ceiling = \"clamp\"\n", 1, 7},
        // reject, warn: the node starts every one without the request.
        ShapeCase{"reject_warn", "on-error = \"warn\"\n", "over-ceiling = \"reject\"\n", 0, 7},
        ShapeCase{"clamp_warn", "on-error = \"warn\"\n", "", 0, 7}),
    CaseName{});

TEST(AdmissionPolicy, WarnsEachEntryInTheNodesOrderWithinTheWarningBudget) {
  const auto docs = Documents(Yaml(Cfg("", "")));
  const std::string& warn = docs[2];
  for (size_t i = 0; i < kMaxWarnings; ++i) {
    const std::string at = std::to_string(i);
    EXPECT_TRUE(Has(warn, Cat("  - expression: |-\n      variables.warnKept <= ", at, "\n")));
    EXPECT_TRUE(Has(warn, Cat("      string(variables.warnings[", at, "])\n")));
  }
  // Each warning costs the API server's prefix for this policy's name and binding.
  const std::string prefix =
      "Validation failed for ValidatingAdmissionPolicy 'oci-rlimit-requests-warn' with binding "
      "'oci-rlimit-requests-warn': ";
  EXPECT_TRUE(Has(warn, Cat(".map(k, ", std::to_string(prefix.size()),
                            " + size(variables.warnings[k])).sum() <= ")));
  EXPECT_TRUE(Has(warn, "variables.judged.map(l, !(l[0] in variables.ceilings) ? "));
  EXPECT_TRUE(Has(warn,
                  " is not in requests.ceilings; ignored' : (!(l[0] in variables.ceilings) "
                  "|| l[1] > variables.ceilings[l[0]][0] || l[2] > "
                  "variables.ceilings[l[0]][1]) ? "));
}

TEST(AdmissionPolicy, RefusesPastEitherTheSoftOrTheHardCeiling) {
  const std::string y = Yaml(Cfg("", "over-ceiling = \"reject\"\n"));
  EXPECT_TRUE(Has(y,
                  "variables.judged.filter(l, (!(l[0] in variables.ceilings) || l[1] > "
                  "variables.ceilings[l[0]][0] || l[2] > variables.ceilings[l[0]][1]))"));
}

TEST(AdmissionPolicy, JudgesAnUpdateOnlyWhereItChangesWhatTheNodesJudge) {
  const std::string y = Yaml(Cfg("", ""));
  EXPECT_TRUE(Has(y, "      operations: [\"CREATE\", \"UPDATE\"]\n      resources: [\"pods\"]\n"));
  EXPECT_TRUE(Has(y,
                  "  matchConditions:\n  - name: not-being-deleted\n    expression: "
                  "'!has(object.metadata.deletionTimestamp)'\n"));
  EXPECT_TRUE(
      Has(y,
          "      request.operation != 'UPDATE' || request.subResource != '' || (object.kind == "
          "'Pod' ? (has(object.metadata.annotations) && 'oci-rlimit.io/rlimits' in "
          "object.metadata.annotations ? object.metadata.annotations['oci-rlimit.io/rlimits'] : "
          "'') != (has(oldObject.metadata.annotations) && 'oci-rlimit.io/rlimits' in "
          "oldObject.metadata.annotations ? oldObject.metadata.annotations['oci-rlimit.io/"
          "rlimits'] : '') : (object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template : "
          "object.spec.template) != (oldObject.kind == 'CronJob' ? "
          "oldObject.spec.jobTemplate.spec.template : oldObject.spec.template))\n"));
  EXPECT_FALSE(Has(y, "/scale")) << "a Scale has no template; docs/policy.md says so";
}

TEST(AdmissionPolicy, MatchesPodsAndEveryPodTemplateOnCreateAndUpdate) {
  const std::string y = Yaml(Cfg("", "over-ceiling = \"reject\"\n"));
  EXPECT_TRUE(Has(y,
                  "    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: "
                  "[\"CREATE\", \"UPDATE\"]\n      resources: [\"deployments\", \"statefulsets\", "
                  "\"daemonsets\", \"replicasets\"]\n"));
  EXPECT_TRUE(Has(y,
                  "    - apiGroups: [\"batch\"]\n      apiVersions: [\"v1\"]\n      operations: "
                  "[\"CREATE\", \"UPDATE\"]\n      resources: [\"jobs\", \"cronjobs\"]\n"));
  EXPECT_TRUE(
      Has(y, "      operations: [\"UPDATE\"]\n      resources: [\"pods/ephemeralcontainers\"]\n"));
  EXPECT_TRUE(Has(y, "object.spec.jobTemplate.spec.template"));
  EXPECT_TRUE(Has(y, "variables.tmpl.spec.initContainers"));
  EXPECT_TRUE(Has(y, "variables.tmpl.spec.ephemeralContainers"));
  EXPECT_TRUE(Has(y, "failurePolicy: Ignore\n"))
      << "an evaluation error leaves the pod to the node";
}

TEST(AdmissionPolicy, ChecksTheSizeBeforeAnyParsing) {
  const std::string y = Yaml(Cfg("", ""));
  const size_t size_check = y.find("size(variables.value) > 1024 ? [] : variables.value.split(");
  ASSERT_NE(size_check, std::string::npos);
  EXPECT_EQ(y.find(".split("), y.find(".split(", size_check)) << "a split before the size check";
  EXPECT_TRUE(Has(y,
                  "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16].filter(i, i < "
                  "size(variables.entries))"));
}

TEST(AdmissionPolicy, NamesTheCeilingsOfTheConfig) {
  const std::string y = Yaml(Cfg("", ""));
  EXPECT_TRUE(Has(y, "{'memlock': [67108864u, 67108864u], 'nofile': [4096u, 65536u]}"));
  EXPECT_TRUE(Has(y, "'nofile': 'nofile=4096:65536'"));
}

TEST(AdmissionPolicy, OnErrorWarnSaysTheRequestIsLeftOut) {
  const std::string y = Yaml(Cfg("on-error = \"warn\"\n", "over-ceiling = \"reject\"\n"));
  // The malformed entry's words and the refusal's, once each (every policy reads them).
  EXPECT_EQ(Count(Documents(y)[2], "'on-error = \"warn\": the request is left out"), 2U) << y;
  EXPECT_TRUE(Has(y, "size(variables.errors) > 0 ? [variables.errors[0]] : variables.notes"));
}

TEST(AdmissionPolicy, ActionsAndSelectorsGoToTheBindings) {
  PolicyOptions o;
  o.name = "ceilings";
  o.actions = {"Deny", "Audit"};
  o.namespace_selector = {{"team", "In", "ml"}};
  o.object_selector = {{"skip", "DoesNotExist", ""}};
  const auto docs = Documents(Yaml(Cfg("", ""), o));
  ASSERT_EQ(docs.size(), 4U);
  EXPECT_TRUE(Has(docs[1], "  policyName: ceilings\n  validationActions: [Deny, Audit]\n"));
  EXPECT_TRUE(Has(docs[3], "  policyName: ceilings-warn\n  validationActions: [Warn, Audit]\n"));
  for (size_t i : {1, 3}) {
    EXPECT_TRUE(Has(docs[i],
                    "  matchResources:\n    namespaceSelector:\n      matchExpressions:\n"
                    "      - key: \"team\"\n        operator: In\n"));
    EXPECT_TRUE(Has(docs[i],
                    "    objectSelector:\n      matchExpressions:\n      - key: \"skip\"\n"
                    "        operator: DoesNotExist\n"));
  }
  EXPECT_FALSE(Has(docs[0], "matchResources")) << "selectors are the binding's";
}

TEST(AdmissionPolicy, UlimitsOnlyWhenAskedAndBehindHas) {
  const Config cfg = Cfg("", "over-ceiling = \"reject\"\nsources = [\"spec\", \"oci-rlimit\"]\n");
  EXPECT_FALSE(Has(Yaml(cfg), "ulimits"));
  PolicyOptions o;
  o.ulimits_field = true;
  const std::string y = Yaml(cfg, o);
  EXPECT_TRUE(Has(y,
                  "variables.containers.filter(c, has(c.securityContext) && "
                  "has(c.securityContext.ulimits) && size(c.securityContext.ulimits) > 0)"));
  // -1 is unlimited, as the runtime reads it; the last entry of a type counts.
  EXPECT_TRUE(Has(y,
                  "dyn((s[size(s) - 1].soft < 0 ? 18446744073709551615u : uint(s[size(s) - "
                  "1].soft))), dyn((s[size(s) - 1].hard < 0 ? 18446744073709551615u : "
                  "uint(s[size(s) - 1].hard)))"));
  // The runtime's own nofile entry comes first in process.rlimits.
  EXPECT_TRUE(Has(y,
                  ".filter(i, c.securityContext.ulimits[i].name == 'nofile') + "
                  "variables.ulimitsIdx.filter(i, i < size(c.securityContext.ulimits) && "));
  EXPECT_TRUE(Has(y, ".filter(i, c.securityContext.ulimits[i].name != 'nofile')).map(i, "));
  // The node's order of sources: the spec's entries, then the annotation.
  EXPECT_TRUE(Has(y, "[variables.ulimitsError, variables.annotationError].filter(e, e != '')"));
}

TEST(AdmissionPolicy, UlimitsFieldFitsTheApiServerForEveryType) {
  std::string all;
  for (const RlimitInfo& info : AllRlimits())
    all += Cat(all.empty() ? "" : ", ", "\"", info.name, "=1\"");
  auto c = ParseConfig(Cat("[requests]\nenabled = true\nceilings = [", all,
                           "]\nover-ceiling = \"clamp\"\nsources = [\"spec\", \"oci-rlimit\"]\n"),
                       "t.toml");
  ASSERT_TRUE(c.ok()) << c.error().Text();
  PolicyOptions o;
  o.ulimits_field = true;
  const std::string y = Yaml(*c, o);
  // kubectl apply keeps the whole object in an annotation: all of them at most 256 KiB.
  EXPECT_LT(y.size(), 128U * 1024) << "16 types";
  // A list too long to judge within CEL's cost budget is said, never admitted unjudged.
  EXPECT_TRUE(Has(y,
                  "size(variables.ulimitsOwners) <= 32 && variables.ulimitsOwners.all(c, "
                  "size(c.securityContext.ulimits) <= 64)"));
  EXPECT_TRUE(Has(y, "!variables.ulimitsJudgeable ? ['securityContext.ulimits: more than 64"));
  auto r = ParseConfig(Cat("[requests]\nenabled = true\nceilings = [", all,
                           "]\nover-ceiling = \"reject\"\nsources = [\"spec\", \"oci-rlimit\"]\n"),
                       "t.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(
      Has(Yaml(*r, o), "!variables.ulimitsJudgeable ? 'securityContext.ulimits: more than 64"));
}

TEST(AdmissionPolicy, SaysWhatItLeavesToTheNode) {
  PolicyOptions o;
  o.config_origin = "/etc/oci-rlimit/config.toml";
  const std::string plain = Yaml(Cfg("", ""), o);
  EXPECT_TRUE(
      Has(plain, "# Generated by `oci-rlimit admission-policy` from /etc/oci-rlimit/config.toml"));
  EXPECT_TRUE(Has(plain, "# Left to the node, never guessed:\n"));
  EXPECT_FALSE(Has(plain, "ulimits.noderesource.dev"));
  const std::string sample = Yaml(Cfg("", "sources = [\"ulimit-adjuster\", \"oci-rlimit\"]\n"), o);
  EXPECT_TRUE(
      Has(sample, "# - the NRI sample's ulimits.noderesource.dev/container.NAME annotations"));
  EXPECT_TRUE(Has(sample, "CEL cannot parse as the node does"));
}

TEST(AdmissionPolicy, RefusesWhatItCannotJudge) {
  auto off = ParseConfig("[requests]\nenabled = false\n", "t");
  ASSERT_TRUE(off.ok());
  auto r = AdmissionPolicyYaml(*off, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text().rfind("[requests] enabled is false", 0), 0U) << r.error().Text();

  const Config spec_only = Cfg("", "sources = [\"spec\"]\n");
  r = AdmissionPolicyYaml(spec_only, {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.error().Text(), "lacks \"oci-rlimit\"")) << r.error().Text();

  PolicyOptions o;
  o.ulimits_field = true;
  r = AdmissionPolicyYaml(Cfg("", ""), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text().rfind("--ulimits-field: ", 0), 0U) << r.error().Text();

  o = {};
  o.name = "Bad_Name";
  r = AdmissionPolicyYaml(Cfg("", ""), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text().rfind("--name \"Bad_Name\": ", 0), 0U) << r.error().Text();
}

TEST(ParseActions, ReadsAListAndRefusesDenyWithWarn) {
  auto a = ParseActions("Deny,Audit");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<std::string>{"Deny", "Audit"}));
  for (const char* bad : {"", "deny", "Deny,Deny", "Deny,Warn", "Warn,", "Block"}) {
    auto r = ParseActions(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().Text().rfind("--actions ", 0), 0U) << r.error().Text();
    }
  }
}

}  // namespace
}  // namespace ocirlimit::k8s
