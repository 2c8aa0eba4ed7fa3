#include "lifecycle_model.h"

#include <gtest/gtest.h>

#include <random>

namespace ocirlimit::itest::lifecycle {
namespace {

Model After(const std::string& ops) {
  std::string bad;
  auto parsed = ParseOps(ops, &bad);
  EXPECT_TRUE(parsed) << bad;
  Model m;
  int n = 0;
  for (const Op& op : parsed.value_or(std::vector<Op>{})) {
    EXPECT_TRUE(m.Valid(op)) << OpName(op);
    m.Apply(op, "p" + std::to_string(n++));
  }
  return m;
}

TEST(LifecycleModelTest, OpNamesParseBack) {
  const std::string text =
      "create:plain create:tier create:ask create:handler delete:3 plugin-restart plugin-stop "
      "plugin-start engine-restart policy-change reboot";
  std::string bad;
  auto ops = ParseOps(text, &bad);
  ASSERT_TRUE(ops) << bad;
  std::string back;
  for (const Op& op : *ops) back += (back.empty() ? "" : " ") + OpName(op);
  EXPECT_EQ(back, text);
  EXPECT_FALSE(ParseOps("create:gpu", &bad));
  EXPECT_EQ(bad, "create:gpu");
}

TEST(LifecycleModelTest, APolicyChangeLeavesRunningPodsTheirDecision) {
  Model m = After("create:tier policy-change plugin-restart create:tier");
  ASSERT_EQ(m.pods().size(), 2u);
  EXPECT_EQ(m.pods()[0].init, TierLimit(0));
  EXPECT_EQ(m.pods()[0].exec, TierLimit(0));
  EXPECT_EQ(m.pods()[1].init, TierLimit(1));
}

TEST(LifecycleModelTest, APodMissedByThePluginIsHealedInItsInitOnly) {
  Model m = After("plugin-stop create:tier create:handler create:plain");
  EXPECT_EQ(m.pods()[0].init, kEngine);
  EXPECT_EQ(m.pods()[1].init, TierLimit(0)) << "the wrapper decides its own pods";
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  m.Apply(Op{.kind = OpKind::kPluginStart});
  EXPECT_EQ(m.pods()[0].init, TierLimit(1)) << "decided by the policy in force at the heal";
  EXPECT_EQ(m.pods()[0].exec, kEngine);
  EXPECT_EQ(m.pods()[1].init, TierLimit(0));
  EXPECT_EQ(m.pods()[2].init, kEngine);
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  m.Apply(Op{.kind = OpKind::kPluginRestart});
  EXPECT_EQ(m.pods()[0].init, TierLimit(1)) << "healed once, then kept";
}

TEST(LifecycleModelTest, RandomOpsAreAlwaysValid) {
  std::mt19937_64 rng(42);
  Model m;
  for (int i = 0; i < 2000; ++i) {
    const Op op = m.Next(rng, 5);
    ASSERT_TRUE(m.Valid(op)) << OpName(op);
    m.Apply(op, "p");
    ASSERT_LE(m.pods().size(), 5u);
  }
}

}  // namespace
}  // namespace ocirlimit::itest::lifecycle
