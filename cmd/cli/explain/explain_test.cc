#include "cli/explain/explain.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

Config Cfg(const std::string& toml) {
  auto c = ParseConfig(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

Json Spec(const std::string& text) {
  auto j = ParseJsonObject(text, "spec");
  EXPECT_TRUE(j.ok());
  return j.ok() ? *j : Json::object();
}

constexpr const char* kGpuRule =
    "rlimits = ['core=0']\n[[rule]]\nname = 'gpu'\nrlimits = ['memlock=1G', 'nofile=4096']\n"
    "match = { env = ['NVIDIA_VISIBLE_DEVICES'] }\n";

TEST(Explain, RunsAndCrunDifferOnASpecConflict) {
  auto e = Explain(Cfg(kGpuRule), Spec(R"({"process":{"env":["NVIDIA_VISIBLE_DEVICES=0"],
                     "rlimits":[{"type":"RLIMIT_NOFILE","soft":1024,"hard":1024}]}})"),
                   "/b/config.json");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  ASSERT_EQ(e->rules.size(), 1u);
  EXPECT_TRUE(e->rules[0].second);
  ASSERT_EQ(e->outcomes.size(), 3u);
  const Outcome& nofile = e->outcomes[2];
  EXPECT_EQ(FormatRlimit(nofile.ours), "nofile=4096:4096");
  EXPECT_EQ(FormatRlimit(nofile.hook_runc), "nofile=1024:1024");
  EXPECT_EQ(FormatRlimit(nofile.hook_crun), "nofile=4096:4096");
  EXPECT_EQ(FormatRlimit(nofile.wrapper), "nofile=4096:4096");
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("rule \"gpu\": matches"), std::string::npos) << text;
  EXPECT_NE(text.find("conflict: the spec sets RLIMIT_NOFILE to 1024:1024"), std::string::npos)
      << text;
  Json j = ExplainJson(*e);
  EXPECT_EQ(j["limits"][2]["conflict"], true);
  EXPECT_EQ(j["limits"][0]["conflict"], false);
  EXPECT_EQ(j["limits"][1]["from"], "rule \"gpu\"");
}

// The hook lowers the hard limit below the spec's: runc must raise it back,
// which fails without CAP_SYS_RESOURCE, so explain claims no success there.
// Where the spec's hard limit is not above ours, runc needs no capability.
TEST(Explain, RuncNeedsCapSysResourceWhenTheHookLowersTheHardLimit) {
  struct Case {
    const char* name;
    const char* spec_entry;
    bool needs_cap;
  };
  for (const Case& c : {Case{"spec_hard_above_ours", "\"soft\":2097152,\"hard\":8388608", true},
                        Case{"spec_hard_equal", "\"soft\":2097152,\"hard\":4194304", false},
                        Case{"spec_hard_below", "\"soft\":1024,\"hard\":2048", false}}) {
    SCOPED_TRACE(c.name);
    auto e = Explain(Cfg("rlimits = ['memlock=4M']\n"),
                     Spec(std::string(R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK",)") +
                          c.spec_entry + "}]}}"),
                     "b");
    ASSERT_TRUE(e.ok()) << e.error().Text();
    ASSERT_EQ(e->outcomes.size(), 1u);
    EXPECT_EQ(e->outcomes[0].hook_runc_needs_cap, c.needs_cap);
    const std::string text = ExplainText(*e);
    EXPECT_EQ(text.find("fails w/o CAP_SYS_RESOURCE") != std::string::npos, c.needs_cap) << text;
    EXPECT_EQ(
        text.find("error setting rlimit type 8: operation not permitted") != std::string::npos,
        c.needs_cap)
        << text;
    EXPECT_EQ(ExplainJson(*e)["limits"][0]["hook_runc_fails_without_cap_sys_resource"],
              c.needs_cap);
  }
}

TEST(Explain, NoMatchLeavesOnlyTheDefault) {
  auto e = Explain(Cfg(kGpuRule), Spec(R"({"process":{"env":["PATH=/bin"]}})"), "b");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->rules[0].second);
  ASSERT_EQ(e->outcomes.size(), 1u);
  EXPECT_NE(ExplainText(*e).find("rule \"gpu\": does not match"), std::string::npos);
}

TEST(Explain, ARejectedRequestIsAnError) {
  auto e =
      Explain(Cfg("[requests]\nenabled=true\nceilings=['memlock=1G']\nover-ceiling='reject'\n"),
              Spec(R"({"annotations":{"oci-rlimit.io/rlimits":"memlock=2G"}})"), "b");
  ASSERT_TRUE(e.ok());
  EXPECT_NE(e->error.find("over the ceiling"), std::string::npos) << e->error;
  EXPECT_NE(ExplainText(*e).find("REFUSED"), std::string::npos);
  EXPECT_EQ(ExplainJson(*e)["ok"], false);
}

TEST(Validate, ListsRulesAndRequests) {
  Config c = Cfg(std::string(kGpuRule) + "[requests]\nenabled=true\nceilings=['memlock=64G']\n");
  std::string text = ValidateText(c);
  EXPECT_NE(text.find("every container (top-level rlimits): core=0:0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"gpu\": memlock=1073741824:1073741824 nofile=4096:4096 when env "
                      "NVIDIA_VISIBLE_DEVICES set, not void/none"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("enabled, ceilings memlock=68719476736:68719476736, over-ceiling = clamp"),
            std::string::npos)
      << text;
  Json j = ValidateJson(c);
  EXPECT_EQ(j["rules"][0]["match"]["env"][0], "NVIDIA_VISIBLE_DEVICES");
  EXPECT_EQ(j["requests"]["enabled"], true);
}

TEST(Validate, LabelsEachFactAndWarnsOnAnAuthorOnlyRule) {
  Config c = Cfg(std::string(kGpuRule) +
                 "[[rule]]\nname = 'ml'\nrlimits = ['memlock=unlimited']\n"
                 "match = { namespaces = ['gpu-*'], devices = ['/dev/nvidia*'] }\n");
  std::string text = ValidateText(c);
  EXPECT_NE(text.find("when env NVIDIA_VISIBLE_DEVICES set, not void/none [author]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("when device /dev/nvidia* [node]; namespace gpu-* [node]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nwarning: rule \"gpu\" matches only facts the container's author sets "
                      "(env)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("warning: rule \"ml\""), std::string::npos) << text;
  Json j = ValidateJson(c);
  EXPECT_EQ(j["rules"][0]["facts"][0]["owner"], "author");
  EXPECT_EQ(j["rules"][1]["facts"][1]["owner"], "node");
  EXPECT_EQ(j["rules"][1]["facts"][1]["kind"], "namespaces");
  EXPECT_EQ(j["rules"][1]["match"]["namespaces"][0], "gpu-*");
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_TRUE(j["warnings"][0].get<std::string>().starts_with("rule \"gpu\" "));
}

TEST(Validate, NoWarningsForNodeRules) {
  Config c =
      Cfg("[[rule]]\nname='rdma'\nrlimits=['memlock=1G']\n"
          "match={devices=['/dev/infiniband/*']}\n");
  EXPECT_EQ(ValidateText(c).find("warning:"), std::string::npos) << ValidateText(c);
  EXPECT_TRUE(ValidateJson(c)["warnings"].empty());
}

constexpr const char* kNamespaceRule =
    "[[rule]]\nname = 'ml'\nrlimits = ['memlock=1G']\nmatch = { namespaces = ['gpu-*'] }\n";

TEST(Explain, ShowsThePodTheRuntimeNamesAndEachFactsOwner) {
  auto e = Explain(Cfg(kNamespaceRule), Spec(R"({"annotations":{
      "io.kubernetes.cri.sandbox-namespace":"gpu-a","io.kubernetes.cri.sandbox-name":"t-0"}})"),
                   "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  EXPECT_TRUE(e->rules[0].second);
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("pod (as the runtime states it): namespace \"gpu-a\", name \"t-0\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rule \"ml\": matches (namespace gpu-* [node])\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("devices (linux.devices): none\n"), std::string::npos) << text;
  Json j = ExplainJson(*e);
  EXPECT_EQ(j["pod"]["namespace"], "gpu-a");
  EXPECT_TRUE(j["devices"].empty());
  EXPECT_EQ(j["rules"][0]["facts"][0]["owner"], "node");
}

TEST(Explain, ListsTheDevicesTheSpecHolds) {
  auto e = Explain(Cfg(kNamespaceRule), Spec(R"({"linux":{"devices":[
      {"path":"/dev/nvidia0","type":"c","major":195,"minor":0},
      {"path":"/dev/nvidiactl","type":"c","major":195,"minor":255}]}})"),
                   "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("devices (linux.devices): \"/dev/nvidia0\" \"/dev/nvidiactl\"\n"),
            std::string::npos)
      << text;
  Json j = ExplainJson(*e);
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][1], "/dev/nvidiactl");
}

constexpr const char* kForgedGpuNamespace = R"({"annotations":{
      "io.kubernetes.cri.sandbox-namespace":"default","io.kubernetes.pod.namespace":"gpu-a"}})";

TEST(Explain, ShowsADisputedNamespaceAndRefusesWhatItCannotDecide) {
  // No default and no spec entry: the GPU candidate's raise cannot be compared.
  auto e = Explain(Cfg(kNamespaceRule), Spec(kForgedGpuNamespace), "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  EXPECT_FALSE(e->rules[0].second);
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("disputed: the pod's namespace: annotation "
                      "\"io.kubernetes.cri.sandbox-namespace\" = \"default\" but "
                      "\"io.kubernetes.pod.namespace\" = \"gpu-a\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rule \"ml\": matches for some disputed candidates"), std::string::npos)
      << text;
  EXPECT_NE(text.find("REFUSED: disputed pod facts"), std::string::npos) << text;
  Json j = ExplainJson(*e);
  EXPECT_EQ(j["pod"]["namespace"], nullptr);
  ASSERT_EQ(j["pod"]["disputed"].size(), 1u);
  EXPECT_EQ(j["pod"]["disputed"][0]["field"], "namespace");
  EXPECT_EQ(j["pod"]["disputed"][0]["claims"]["io.kubernetes.pod.namespace"], "gpu-a");
  EXPECT_EQ(j["rules"][0]["matched_some_candidates"], true);
  EXPECT_EQ(j["ok"], false);
}

TEST(Explain, ADisputedNamespaceGetsTheLowestCandidate) {
  auto e = Explain(Cfg(std::string("rlimits = ['memlock=6M']\n") + kNamespaceRule),
                   Spec(kForgedGpuNamespace), "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("note: disputed pod facts (the pod's namespace: "), std::string::npos)
      << text;
  EXPECT_NE(text.find("memlock=6291456:6291456   default "), std::string::npos) << text;
  EXPECT_EQ(ExplainJson(*e)["limits"][0]["limit"], "memlock=6291456:6291456");
}

TEST(Explain, ABadRequestUnderWarnKeepsTheNodesLimits) {
  auto e = Explain(Cfg("rlimits = ['memlock=64K', 'nofile=512']\non-error = 'warn'\n"
                       "[requests]\nenabled = true\nceilings = ['memlock=1M']\n"),
                   Spec(R"({"annotations":{"oci-rlimit.io/rlimits":"please"}})"), "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  EXPECT_TRUE(e->error.empty()) << e->error;
  ASSERT_EQ(e->decision.limits.size(), 2u);
  EXPECT_EQ(FormatRlimit(e->decision.limits[0]), "memlock=65536:65536");
  EXPECT_EQ(FormatRlimit(e->decision.limits[1]), "nofile=512:512");
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("warning: on-error = \"warn\": the request is left out"), std::string::npos)
      << text;
  Json j = ExplainJson(*e);
  ASSERT_EQ(j["verdict_warnings"].size(), 1u);
  EXPECT_EQ(j["ok"], true);
}

TEST(Validate, APodsConditionAloneIsAnAuthorFact) {
  Config c =
      Cfg("[[rule]]\nname = 'trainer'\nrlimits = ['memlock=6M']\nmatch = { pods = ['trainer-*'] }\n"
          "[[rule]]\nname = 'ml'\nrlimits = ['memlock=6M']\n"
          "match = { pods = ['trainer-*'], namespaces = ['ml'] }\n");
  std::string text = ValidateText(c);
  EXPECT_NE(text.find("when pod trainer-* (in any namespace: its author names it) [author]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("when namespace ml [node]; pod trainer-* [node]\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("warning: rule \"trainer\" matches only facts the container's author "
                      "sets (pods)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("warning: rule \"ml\""), std::string::npos) << text;
  Json j = ValidateJson(c);
  EXPECT_EQ(j["rules"][0]["facts"][0]["owner"], "author");
  EXPECT_EQ(j["rules"][1]["facts"][1]["owner"], "node");
  auto e = Explain(c, Spec(R"({"annotations":{"io.kubernetes.cri.sandbox-namespace":"default",
      "io.kubernetes.cri.sandbox-name":"trainer-evil"}})"),
                   "b");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  EXPECT_NE(ExplainText(*e).find("rule \"trainer\": matches (pod trainer-* (in any namespace: "
                                 "its author names it) [author])"),
            std::string::npos)
      << ExplainText(*e);
  EXPECT_EQ(ExplainJson(*e)["warnings"].size(), 1u);
}

TEST(Explain, WarnsOnAnAuthorOnlyRule) {
  auto e =
      Explain(Cfg(kGpuRule), Spec(R"({"process":{"env":["NVIDIA_VISIBLE_DEVICES=all"]}})"), "b");
  ASSERT_TRUE(e.ok());
  std::string text = ExplainText(*e);
  EXPECT_NE(text.find("rule \"gpu\": matches (env NVIDIA_VISIBLE_DEVICES set, not void/none "
                      "[author])\nwarning: rule \"gpu\" matches only facts"),
            std::string::npos)
      << text;
  EXPECT_EQ(ExplainJson(*e)["warnings"].size(), 1u);
}

struct RootlessShown {
  std::string name;
  std::string toml;
  std::string value;  // "degrade" or "fail"
};

void PrintTo(const RootlessShown& c, std::ostream* os) { *os << c.name; }

class ShowsTheRootlessChoice : public ::testing::TestWithParam<RootlessShown> {};

TEST_P(ShowsTheRootlessChoice, InValidateAndExplainTextAndJson) {
  Config cfg = Cfg(GetParam().toml);
  EXPECT_NE(ValidateText(cfg).find("rootless: " + GetParam().value + " ("), std::string::npos)
      << ValidateText(cfg);
  EXPECT_EQ(ValidateJson(cfg)["rootless"], GetParam().value);
  auto e = Explain(cfg, Spec(R"({"process":{}})"), "/b/config.json");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  EXPECT_NE(ExplainText(*e).find("rootless engine: " + GetParam().value + " ("), std::string::npos)
      << ExplainText(*e);
  EXPECT_EQ(ExplainJson(*e)["rootless"], GetParam().value);
}

INSTANTIATE_TEST_SUITE_P(
    Explain, ShowsTheRootlessChoice,
    ::testing::Values(RootlessShown{"Default", "rlimits = ['memlock=unlimited']\n", "degrade"},
                      RootlessShown{"Fail", "rlimits = ['memlock=unlimited']\nrootless = 'fail'\n",
                                    "fail"}),
    [](const auto& info) { return info.param.name; });

// Request sources (docs/policy.md, "Request sources"): validate lists them in
// order; explain shows each source that asked, what it was granted and why.
constexpr const char* kSources =
    "rlimits = ['memlock=64K']\n[requests]\nenabled = true\nceilings = ['memlock=1G']\n"
    "sources = ['spec', 'ulimit-adjuster', 'oci-rlimit']\n";

TEST(Validate, ListsTheRequestSourcesInOrder) {
  const Config c = Cfg(kSources);
  const std::string text = ValidateText(c);
  EXPECT_NE(text.find("request sources, in order (a later source replaces an earlier one's "
                      "type): spec (the spec's own process.rlimits), ulimit-adjuster"),
            std::string::npos)
      << text;
  Json j = ValidateJson(c);
  EXPECT_EQ(j["requests"]["sources"], Json::array({"spec", "ulimit-adjuster", "oci-rlimit"}));
}

TEST(Explain, ShowsEachSourceThatAskedWhatItGotAndWhy) {
  auto e = Explain(Cfg(kSources), Spec(R"({"annotations":{
      "io.kubernetes.cri.container-name":"app",
      "ulimits.noderesource.dev/container.app":"- type: memlock\n  soft: 1048576\n  hard: 1048576\n"},
      "process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","soft":4294967296,"hard":4294967296}]}})"),
                   "/b/config.json");
  ASSERT_TRUE(e.ok()) << e.error().Text();
  const std::string text = ExplainText(*e);
  EXPECT_NE(text.find("request spec: process.rlimits asks memlock=4294967296:4294967296; granted "
                      "memlock=1073741824:1073741824 (over the ceiling "
                      "memlock=1073741824:1073741824, clamped; replaced by the later source "
                      "ulimit-adjuster)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("request ulimit-adjuster: annotation "
                      "\"ulimits.noderesource.dev/container.app\" = "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("granted memlock=1048576:1048576 (at or under the ceiling"),
            std::string::npos)
      << text;
  Json j = ExplainJson(*e);
  ASSERT_EQ(j["requests"].size(), 2u) << j.dump();
  EXPECT_EQ(j["requests"][1]["source"], "ulimit-adjuster");
  EXPECT_EQ(j["requests"][1]["granted"], "memlock=1048576:1048576");
  EXPECT_EQ(j["limits"][0]["from"], "request (ulimit-adjuster)");
}

// Issue 39 finding 9: validate says when this node cannot back the
// `nvidia-runtime` CDI injector.
class FakeNodeOps : public testing::FakeFilesT<NodeOps> {
 public:
  std::map<std::string, std::string> programs;
  std::optional<std::string> Which(const std::string& name) override {
    auto it = programs.find(name);
    return it == programs.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  Result<std::string> Version(const std::string&) override { return MakeError("none"); }
  std::optional<FileId> Socket(const std::string&) override { return std::nullopt; }
  std::vector<RunningProcess> ProcessesNamed(const std::string&) override { return {}; }
};

TEST(Validate, SaysWhenTheNodeCannotBackTheNvidiaRuntimeInjector) {
  const Config cfg = Cfg("[cdi]\ninjectors = ['nvidia-runtime']\n");
  const std::string lead =
      "[cdi] injectors lists \"nvidia-runtime\", which this node cannot back: ";
  FakeNodeOps node;
  EXPECT_EQ(
      NvidiaInjectorWarnings(node, cfg),
      std::vector<std::string>{lead + "no NVIDIA runtime is installed (nvidia-container-runtime on "
                                      "PATH, or the GPU Operator's toolkit)"});
  node.programs["nvidia-container-runtime"] = "/usr/bin/nvidia-container-runtime";
  EXPECT_EQ(NvidiaInjectorWarnings(node, cfg), std::vector<std::string>{});
  node.files["/etc/nvidia-container-runtime/config.toml"] =
      "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n";
  const std::vector<std::string> off = NvidiaInjectorWarnings(node, cfg);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_NE(off[0].find(lead + "/etc/nvidia-container-runtime/config.toml sets "
                               "accept-nvidia-visible-devices-envvar-when-unprivileged = false"),
            std::string::npos)
      << off[0];
  EXPECT_NE(ValidateText(cfg, off).find("warning: " + off[0] + "\n"), std::string::npos);
  EXPECT_EQ(ValidateJson(cfg, off)["warnings"].back(), off[0]);
  // Only the operator's toolkit, whose own config keeps the default.
  node.programs.clear();
  node.executables.insert("/usr/local/nvidia/toolkit/nvidia-container-runtime");
  EXPECT_EQ(NvidiaInjectorWarnings(node, cfg), std::vector<std::string>{});
  // Not listed: nothing to say.
  EXPECT_EQ(NvidiaInjectorWarnings(node, Cfg("[cdi]\ninjectors = ['nvidia-nri']\n")),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace ocirlimit
