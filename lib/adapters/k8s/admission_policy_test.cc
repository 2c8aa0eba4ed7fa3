// The policy's structure, per config: which documents, which checks in
// which, the binding's actions and selectors, what the comments leave to
// the node. What the CEL decides is tests/admission's (a real API server
// against explain, on one case table).
#include "adapters/k8s/admission_policy.h"

#include <gtest/gtest.h>

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
  size_t refused_checks;  // validations in NAME (0: no such document)
  size_t warned_checks;   // validations in NAME-warn
};

// Named in test names and GetParam() lines (case_name.h's PrintTo is for ocirlimit's own
// namespace, which argument-dependent lookup does not search from here).
void PrintTo(const ShapeCase& c, std::ostream* os) { *os << c.name; }

class Shape : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(Shape, PutsEachCheckWhereTheNodePutsThePod) {
  const ShapeCase& c = GetParam();
  const auto docs = Documents(Yaml(Cfg(c.top, c.requests)));
  size_t at = 0;
  ASSERT_EQ(docs.size(), 2 * ((c.refused_checks > 0) + (c.warned_checks > 0)));
  if (c.refused_checks > 0) {
    EXPECT_TRUE(Has(docs[0], "kind: ValidatingAdmissionPolicy\n"));
    EXPECT_TRUE(Has(docs[0], "  name: oci-rlimit-requests\n"));
    EXPECT_EQ(Count(docs[0], "  - expression: |-\n"), c.refused_checks);
    EXPECT_TRUE(Has(docs[1], "kind: ValidatingAdmissionPolicyBinding\n"));
    EXPECT_TRUE(Has(docs[1], "  policyName: oci-rlimit-requests\n  validationActions: [Deny]\n"));
    at = 2;
  }
  if (c.warned_checks > 0) {
    EXPECT_TRUE(Has(docs[at], "  name: oci-rlimit-requests-warn\n"));
    EXPECT_EQ(Count(docs[at], "  - expression: |-\n"), c.warned_checks);
    const bool clamp = std::string(c.requests).empty() || Has(c.requests, "clamp");
    EXPECT_EQ(Has(docs[at], "; clamped to "), clamp);
    EXPECT_EQ(Has(docs[at], " is not in requests.ceilings; ignored'"), clamp);
    EXPECT_TRUE(Has(docs[at + 1], "  validationActions: [Warn]\n"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Shape,
    ::testing::Values(
        // reject, fail: malformed and over both refused.
        ShapeCase{"reject_fail", "", "over-ceiling = \"reject\"\n", 2, 0},
        // clamp, fail: malformed refused; not-in and over clamped with a warning.
        ShapeCase{"clamp_fail", "", "over-ceiling = \"clamp\"\n", 1, 2},
        // reject, warn: the node starts every one without the request.
        ShapeCase{"reject_warn", "on-error = \"warn\"\n", "over-ceiling = \"reject\"\n", 0, 2},
        ShapeCase{"clamp_warn", "on-error = \"warn\"\n", "", 0, 3}),
    CaseName{});

TEST(AdmissionPolicy, MatchesPodsAndEveryPodTemplate) {
  const std::string y = Yaml(Cfg("", "over-ceiling = \"reject\"\n"));
  EXPECT_TRUE(Has(y, "      operations: [\"CREATE\"]\n      resources: [\"pods\"]\n"));
  EXPECT_TRUE(
      Has(y, "resources: [\"deployments\", \"statefulsets\", \"daemonsets\", \"replicasets\"]"));
  EXPECT_TRUE(Has(y, "resources: [\"jobs\", \"cronjobs\"]"));
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
  EXPECT_EQ(Count(y, "'on-error = \"warn\": the request is left out"), 2U) << y;
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
  EXPECT_EQ(Count(y, "  # securityContext.ulimits: "), 2U) << "one check per ceiling type";
  EXPECT_TRUE(Has(y, "!has(c.securityContext) || !has(c.securityContext.ulimits) || "));
  EXPECT_TRUE(Has(y, "u.name == 'memlock'"));
  EXPECT_TRUE(Has(y, " <= 67108864u && "));
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
