#include "lifecycle_model.h"

#include <gtest/gtest.h>

#include <random>

namespace ocirlimit::itest::lifecycle {
namespace {

Model After(const std::string& ops, bool installer = false) {
  std::string bad;
  auto parsed = ParseOps(ops, &bad);
  EXPECT_TRUE(parsed) << bad;
  Model m;
  if (installer) m.EnableInstaller();
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
      "plugin-start engine-restart policy-change reboot install uninstall install-killed:250";
  std::string bad;
  auto ops = ParseOps(text, &bad);
  ASSERT_TRUE(ops) << bad;
  std::string back;
  for (const Op& op : *ops) back += (back.empty() ? "" : " ") + OpName(op);
  EXPECT_EQ(back, text);
  EXPECT_FALSE(ParseOps("create:gpu", &bad));
  EXPECT_EQ(bad, "create:gpu");
  EXPECT_FALSE(ParseOps("install-killed:x", &bad));
  EXPECT_EQ(bad, "install-killed:x");
}

TEST(LifecycleModelTest, InstallerOpsRunOnlyWhereEnabled) {
  Model m;
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kUninstall}));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    const Op op = m.Next(rng, 5);
    ASSERT_NE(op.kind, OpKind::kInstall);
    ASSERT_NE(op.kind, OpKind::kUninstall);
    ASSERT_NE(op.kind, OpKind::kInstallKilled);
    m.Apply(op, "p");
  }
}

// A seed printed before the installer's ops came replays the same sequence
// on a node without them (drawn by the model before them).
TEST(LifecycleModelTest, WithoutTheInstallerAnOldSeedDrawsAsBefore) {
  std::mt19937_64 rng(42);
  Model m;
  std::string got;
  for (int i = 0; i < 30; ++i) {
    const Op op = m.Next(rng, 5);
    got += (got.empty() ? "" : " ") + OpName(op);
    m.Apply(op, "p");
  }
  EXPECT_EQ(got,
            "policy-change plugin-restart create:tier create:ask plugin-stop plugin-start "
            "create:ask delete:0 create:ask create:handler create:handler delete:0 delete:2 "
            "delete:2 delete:0 create:handler delete:1 plugin-restart delete:0 create:ask delete:0 "
            "plugin-stop plugin-start policy-change create:ask plugin-restart plugin-restart "
            "plugin-restart policy-change delete:0");
}

TEST(LifecycleModelTest, ARefusedUninstallKeepsEverything) {
  Model m = After("create:handler uninstall", true);
  EXPECT_TRUE(m.installed());
  EXPECT_TRUE(m.HandlerStarts());
  ASSERT_EQ(m.pods().size(), 1u);
  m.Apply(Op{.kind = OpKind::kDelete});
  EXPECT_FALSE(m.UninstallRefused());
  m.Apply(Op{.kind = OpKind::kUninstall});
  EXPECT_FALSE(m.installed()) << "the same command finishes it once the pods are gone";
}

TEST(LifecycleModelTest, TheEngineServesTheRemovedHandlerUntilItRestarts) {
  Model m = After("create:tier uninstall create:handler", true);
  EXPECT_FALSE(m.UninstallRefused()) << "only the handler's pods keep the wrapper";
  EXPECT_FALSE(m.installed());
  EXPECT_TRUE(m.served());
  EXPECT_EQ(m.pods().size(), 1u) << "a handler pod fails while the wrapper is gone";
  m.Apply(Op{.kind = OpKind::kEngineRestart});
  EXPECT_FALSE(m.served());
  m.Apply(Op{.kind = OpKind::kInstall});
  EXPECT_TRUE(m.installed());
  EXPECT_FALSE(m.HandlerStarts()) << "until the engine reads the handler again";
  m.Apply(Op{.kind = OpKind::kCreate, .pod = PodKind::kHandler}, "h");
  EXPECT_EQ(m.pods().size(), 1u);
  m.Apply(Op{.kind = OpKind::kReboot});
  EXPECT_TRUE(m.HandlerStarts());
  m.Apply(Op{.kind = OpKind::kCreate, .pod = PodKind::kHandler}, "h");
  EXPECT_EQ(m.pods().size(), 1u);
}

TEST(LifecycleModelTest, AKilledInstallIsRerunToItsEnd) {
  Model m = After("uninstall engine-restart install-killed:40", true);
  EXPECT_TRUE(m.installed());
  EXPECT_FALSE(m.served());
  EXPECT_TRUE(m.changed_since_start());
}

TEST(LifecycleModelTest, OnlyAChangeOfTheConfigWaitsForARestart) {
  Model m = After("create:handler uninstall install", true);
  EXPECT_FALSE(m.changed_since_start()) << "a refused uninstall and a rerun change nothing";
  m.Apply(Op{.kind = OpKind::kDelete});
  m.Apply(Op{.kind = OpKind::kUninstall});
  EXPECT_TRUE(m.changed_since_start());
  m.Apply(Op{.kind = OpKind::kInstall});
  EXPECT_TRUE(m.changed_since_start()) << "the engine started before the install wrote it again";
  EXPECT_TRUE(m.HandlerStarts()) << "but it still serves what it read then";
  m.Apply(Op{.kind = OpKind::kReboot});
  EXPECT_FALSE(m.changed_since_start());
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
  m.EnableInstaller();
  size_t ours = 0;
  for (int i = 0; i < 2000; ++i) {
    const Op op = m.Next(rng, 5);
    ASSERT_TRUE(m.Valid(op)) << OpName(op);
    if (op.kind == OpKind::kInstallKilled) {
      ASSERT_LE(op.index, kMaxKillMs);
    }
    ours += op.kind == OpKind::kUninstall ? 1 : 0;
    m.Apply(op, "p");
    ASSERT_LE(m.pods().size(), 5u);
  }
  EXPECT_GT(ours, 0u);
}

}  // namespace
}  // namespace ocirlimit::itest::lifecycle
