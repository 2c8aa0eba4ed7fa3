#include "adapters/k8s/selector.h"

#include <gtest/gtest.h>

namespace ocirlimit::k8s {
namespace {

TEST(ParseSelector, ReadsTheFourForms) {
  auto r = ParseSelector("--namespace-selector", "team=ml, tier!=dev,example.com/gpu,!legacy");
  ASSERT_TRUE(r.ok()) << r.error().Text();
  const std::vector<Requirement> want = {{"team", "In", "ml"},
                                         {"tier", "NotIn", "dev"},
                                         {"example.com/gpu", "Exists", ""},
                                         {"legacy", "DoesNotExist", ""}};
  EXPECT_EQ(*r, want);
}

TEST(ParseSelector, ReadsDoubleEqualsAndEmptyValues) {
  auto r = ParseSelector("--object-selector", "a==b,c=");
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ((*r)[0], (Requirement{"a", "In", "b"}));
  EXPECT_EQ((*r)[1], (Requirement{"c", "In", ""}));
}

TEST(ParseSelector, RefusesWhatIsNoLabel) {
  for (const char* bad :
       {"", " ", "a b=c", "=v", "k=v v", "k=-v", "Example.com/x=1", "a,,b", "k/=v", "/k=v"}) {
    auto r = ParseSelector("--object-selector", bad);
    EXPECT_FALSE(r.ok()) << '"' << bad << '"';
    if (!r.ok()) {
      EXPECT_EQ(r.error().Text().rfind("--object-selector", 0), 0U) << r.error().Text();
    }
  }
}

TEST(SelectorYaml, WritesMatchExpressions) {
  EXPECT_EQ(SelectorYaml({{"team", "In", "ml"}, {"x", "Exists", ""}}, 2),
            "  matchExpressions:\n"
            "  - key: \"team\"\n    operator: In\n    values: [\"ml\"]\n"
            "  - key: \"x\"\n    operator: Exists\n");
}

}  // namespace
}  // namespace ocirlimit::k8s
