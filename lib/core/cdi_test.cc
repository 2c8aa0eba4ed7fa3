// GPU pods by CDI device name (docs/policy.md, "GPU pods by CDI device"): the
// names an injector the node runs acts on, and only those.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/policy.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

std::string Names(const std::vector<CdiName>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n.name + "@" + n.injector;
  return out;
}

TEST(CdiNames, NvidiasNriPluginReadsTheContainersAnnotationFirst) {
  const std::map<std::string, std::string> pod = {
      {"nvidia.cdi.k8s.io/container.app", " nvidia.com/gpu=0 , nvidia.com/gpu=1"},
      {"nvidia.cdi.k8s.io/pod", "nvidia.com/gpu=all"},
      {"nvidia.cdi.k8s.io", "nvidia.com/gpu=2"}};
  EXPECT_EQ(Names(NvidiaNriCdiNames(pod, "app")),
            "nvidia.com/gpu=0@nvidia-nri nvidia.com/gpu=1@nvidia-nri");
  EXPECT_EQ(Names(NvidiaNriCdiNames(pod, "sidecar")), "nvidia.com/gpu=all@nvidia-nri");
  EXPECT_EQ(Names(NvidiaNriCdiNames({{"nvidia.cdi.k8s.io", "nvidia.com/gpu=2"}}, "x")),
            "nvidia.com/gpu=2@nvidia-nri");
  EXPECT_EQ(NvidiaNriCdiNames(pod, "app")[0].from,
            "pod annotation \"nvidia.cdi.k8s.io/container.app\"");
}

TEST(CdiNames, OnlyQualifiedNamesCount) {
  EXPECT_EQ(
      Names(NvidiaNriCdiNames({{"nvidia.cdi.k8s.io/pod", "all,gpu=0,/x=1,a/=1,a/b=,,"}}, "c")), "");
  EXPECT_EQ(Names(NvidiaRuntimeCdiNames({"NVIDIA_VISIBLE_DEVICES=all"})), "");
  EXPECT_EQ(Names(NvidiaRuntimeCdiNames({"NVIDIA_VISIBLE_DEVICES=0,1"})), "");
  EXPECT_EQ(Names(NvidiaRuntimeCdiNames(
                {"NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=all"})),
            "nvidia.com/gpu=all@nvidia-runtime")
      << "the last entry is the one the process sees";
}

// One rule on CDI names; the node's injectors and the container's names vary.
struct CdiCase {
  std::string name;
  std::string injectors;  // the [cdi] table's line, "" for none
  std::vector<CdiName> names;
  std::string memlock;  // what Decide gives: "" for nothing
};
void PrintTo(const CdiCase& c, std::ostream* os) { *os << c.name; }

class CdiRule : public ::testing::TestWithParam<CdiCase> {};

TEST_P(CdiRule, MatchesOnlyNamesGivenToAnInjectorTheNodeRuns) {
  const CdiCase& c = GetParam();
  std::string toml =
      "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=64M\"]\n"
      "match = { cdi = [\"nvidia.com/gpu=*\"] }\n";
  if (!c.injectors.empty()) toml += "[cdi]\ninjectors = " + c.injectors + "\n";
  auto cfg = ParseConfig(toml, "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  ContainerFacts f;
  f.cdi_devices = c.names;
  auto d = Decide(*cfg, f);
  ASSERT_TRUE(d) << d.error().Text();
  std::string got;
  for (const auto& l : d->limits) got += FormatRlimit(l);
  EXPECT_EQ(got, c.memlock);
}

const CdiName kNri{"nvidia.com/gpu=0", "nvidia-nri", "pod annotation"};
const CdiName kRuntime{"nvidia.com/gpu=all", "nvidia-runtime", "env"};
const CdiName kOther{"example.com/fpga=0", "nvidia-nri", "pod annotation"};

INSTANTIATE_TEST_SUITE_P(
    Cdi, CdiRule,
    ::testing::Values(
        CdiCase{"NriNameWithNriInjector", R"(["nvidia-nri"])", {kNri}, "memlock=67108864:67108864"},
        CdiCase{"NriNameWithNoInjector", "", {kNri}, ""},
        CdiCase{"NriNameWithOnlyTheRuntime", R"(["nvidia-runtime"])", {kNri}, ""},
        CdiCase{"RuntimeNameWithTheRuntime",
                R"(["nvidia-runtime"])",
                {kRuntime},
                "memlock=67108864:67108864"},
        CdiCase{"BothInjectors",
                R"(["nvidia-nri", "nvidia-runtime"])",
                {kOther, kRuntime},
                "memlock=67108864:67108864"},
        CdiCase{"ANameTheGlobMisses", R"(["nvidia-nri"])", {kOther}, ""},
        CdiCase{"NoNames", R"(["nvidia-nri"])", {}, ""}),
    CaseName{});

struct BadCdiConfig {
  std::string name;
  std::string toml;
  std::string error;
};
void PrintTo(const BadCdiConfig& c, std::ostream* os) { *os << c.name; }
class CdiConfigBad : public ::testing::TestWithParam<BadCdiConfig> {};

TEST_P(CdiConfigBad, OneLineNamingTheFieldAndValue) {
  auto cfg = ParseConfig(GetParam().toml, "t.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().Text().find(GetParam().error), std::string::npos) << cfg.error().Text();
}

INSTANTIATE_TEST_SUITE_P(
    Cdi, CdiConfigBad,
    ::testing::Values(
        BadCdiConfig{"UnknownInjector", "[cdi]\ninjectors = [\"nvidia\"]\n",
                     "cdi.injectors: \"nvidia\" is not \"nvidia-nri\" or \"nvidia-runtime\""},
        BadCdiConfig{"UnknownKey", "[cdi]\ninjector = [\"nvidia-nri\"]\n",
                     "cdi: unknown key \"injector\""},
        BadCdiConfig{"NotATable", "cdi = 1\n", "cdi: must be a table"},
        BadCdiConfig{"NotACdiGlob",
                     "[[rule]]\nrlimits = [\"memlock=1M\"]\nmatch = { cdi = [\"gpu\"] }\n",
                     "\"gpu\" is not a CDI device name glob (vendor/class=name"}),
    CaseName{});

TEST(CdiTrust, ACdiConditionIsTheNodesAndNotWarned) {
  auto cfg = ParseConfig(
      "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=1M\"]\nmatch = { cdi = "
      "[\"nvidia.com/gpu=*\"] }\n"
      "[cdi]\ninjectors = [\"nvidia-nri\"]\n",
      "t.toml");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  const auto facts = RuleFacts(cfg->rules[0].match);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].kind, "cdi");
  EXPECT_EQ(facts[0].owner, FactOwner::kNode);
  EXPECT_TRUE(TrustWarnings(*cfg).empty());
}

}  // namespace
}  // namespace ocirlimit
