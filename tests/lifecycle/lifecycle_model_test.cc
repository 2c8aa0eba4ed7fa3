#include "lifecycle_model.h"

#include <gtest/gtest.h>

#include <random>

namespace ocirlimit::itest::lifecycle {
namespace {

Model After(const std::string& ops, Extras extras = {}, bool installer = false) {
  std::string bad;
  auto parsed = ParseOps(ops, &bad);
  EXPECT_TRUE(parsed) << bad;
  Model m;
  if (installer) m.EnableInstaller();
  m.Allow(extras);
  int n = 0;
  for (const Op& op : parsed.value_or(std::vector<Op>{})) {
    EXPECT_TRUE(m.Valid(op)) << OpName(op);
    m.Apply(op, "p" + std::to_string(n++));
  }
  return m;
}

Model After(const std::string& ops, bool installer) { return After(ops, {}, installer); }

// `text` parsed and named again, word for word.
std::string RoundTrip(const std::string& text) {
  std::string bad;
  auto ops = ParseOps(text, &bad);
  EXPECT_TRUE(ops) << bad;
  std::string back;
  for (const Op& op : ops.value_or(std::vector<Op>{}))
    back += (back.empty() ? "" : " ") + OpName(op);
  return back;
}

TEST(LifecycleModelTest, OpNamesParseBack) {
  const std::string text =
      "create:plain create:tier create:ask create:handler delete:3 plugin-restart plugin-stop "
      "plugin-start engine-restart policy-change reboot install uninstall install-killed:250";
  EXPECT_EQ(RoundTrip(text), text);
  std::string bad;
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
// A seed replays: the same seed draws the same sequence, and what a node
// does not run (the installer, the extras) is never drawn.
TEST(LifecycleModelTest, ASeedReplaysAndDrawsOnlyWhatTheNodeRuns) {
  const auto draw = [](uint64_t seed, int n) {
    std::mt19937_64 rng(seed);
    Model m;
    std::string got;
    for (int i = 0; i < n; ++i) {
      const Op op = m.Next(rng, 5);
      got += (got.empty() ? "" : " ") + OpName(op);
      EXPECT_TRUE(NeedsExtra(op).empty()) << OpName(op);
      EXPECT_NE(op.kind, OpKind::kInstall);
      EXPECT_NE(op.kind, OpKind::kUninstall);
      EXPECT_NE(op.kind, OpKind::kInstallKilled);
      m.Apply(op, "p");
    }
    return got;
  };
  EXPECT_EQ(draw(42, 300), draw(42, 300));
  EXPECT_NE(draw(42, 30), draw(43, 30));
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

// upgrades and NVIDIA's tools

constexpr Extras kAll{.upgrade = true, .nvidia = true};

TEST(LifecycleModelTest, UpgradeAndNvidiaOpNamesParseBack) {
  const std::string text =
      "old-binaries upgrade nvidia-configure nvidia-start nvidia-start-nri nvidia-stop "
      "nvidia-remove create:cdi";
  EXPECT_EQ(RoundTrip(text), text);
  std::string bad;
  auto ops = ParseOps(text, &bad);
  ASSERT_TRUE(ops) << bad;
  EXPECT_EQ(NeedsExtra((*ops)[0]), "upgrade");
  EXPECT_EQ(NeedsExtra((*ops)[2]), "nvidia");
  EXPECT_EQ(NeedsExtra((*ops)[4]), "nvidia");
  EXPECT_EQ(NeedsExtra((*ops)[7]), "");
}

TEST(LifecycleModelTest, ExtrasAreLeftOutUnlessTheNodeHasThem) {
  Model m;
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kOldBinaries}));
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kNvidiaConfigure}));
  m.Allow({.upgrade = true});
  EXPECT_TRUE(m.Valid(Op{.kind = OpKind::kOldBinaries}));
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kUpgrade})) << "nothing earlier runs";
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kNvidiaStart}));
  m.Apply(Op{.kind = OpKind::kCreate, .pod = PodKind::kTier}, "p0");
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kOldBinaries})) << "only on a node without pods";
  std::mt19937_64 rng(7);
  Model plain;
  for (int i = 0; i < 2000; ++i) {
    const Op op = plain.Next(rng, 5);
    ASSERT_EQ(NeedsExtra(op), "") << OpName(op);
    plain.Apply(op, "p");
  }
}

// The earlier commit's plugin decides every container again at its heal
// (break 1) and keeps no record; audit judges such a container by the
// policy now; the current plugin's heal decides each once and records it.
TEST(LifecycleModelTest, AnUpgradeDecidesWhatTheEarlierCommitLeftOnce) {
  Model m = After("old-binaries create:tier create:handler create:plain create:ask", kAll);
  EXPECT_TRUE(m.old_binaries());
  EXPECT_FALSE(m.pods()[0].recorded);
  EXPECT_TRUE(m.AuditSettles());
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  EXPECT_FALSE(m.AuditSettles()) << "tier pod: 2M:4M, while the policy now gives 3M:4M";
  EXPECT_EQ(m.pods()[1].init, TierLimit(0));
  EXPECT_EQ(m.pods()[1].exec, TierLimit(1)) << "the earlier wrapper's exec decides again";
  m.Apply(Op{.kind = OpKind::kPluginRestart});
  EXPECT_EQ(m.pods()[0].init, TierLimit(1)) << "the earlier heal decides again";
  EXPECT_EQ(m.pods()[0].exec, TierLimit(0));
  EXPECT_TRUE(m.AuditSettles());
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  m.Apply(Op{.kind = OpKind::kUpgrade});
  EXPECT_FALSE(m.old_binaries());
  EXPECT_EQ(m.pods()[0].init, TierLimit(0)) << "decided at the heal, with the policy then";
  EXPECT_EQ(m.pods()[0].exec, TierLimit(0));
  EXPECT_EQ(m.pods()[1].init, TierLimit(0));
  EXPECT_EQ(m.pods()[1].exec, TierLimit(0)) << "the wrapper's exec applies the heal's record";
  EXPECT_EQ(m.pods()[2].init, kEngine);
  EXPECT_EQ(m.pods()[3].init, kAsked);
  EXPECT_TRUE(m.pods()[0].recorded);
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  m.Apply(Op{.kind = OpKind::kPluginRestart});
  EXPECT_EQ(m.pods()[0].init, TierLimit(0)) << "recorded, then kept";
  EXPECT_EQ(m.pods()[1].exec, TierLimit(0));
  EXPECT_TRUE(m.AuditSettles());
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kOldBinaries})) << "the reverse is not tested";
}

TEST(LifecycleModelTest, AnUpgradeWhileThePluginIsDownWaitsForItsStart) {
  Model m = After("old-binaries create:handler plugin-stop upgrade policy-change", kAll);
  EXPECT_FALSE(m.pods()[0].recorded);
  EXPECT_EQ(m.pods()[0].exec, TierLimit(1)) << "no record: the wrapper's exec decides now";
  m.Apply(Op{.kind = OpKind::kPluginStart});
  EXPECT_EQ(m.pods()[0].init, TierLimit(1));
  EXPECT_TRUE(m.pods()[0].recorded);
  m.Apply(Op{.kind = OpKind::kPolicyChange});
  EXPECT_EQ(m.pods()[0].exec, TierLimit(1));
}

TEST(LifecycleModelTest, NvidiasToolsLeaveEveryDecision) {
  Model m = After(
      "create:cdi nvidia-configure create:cdi nvidia-start create:tier nvidia-stop policy-change "
      "nvidia-remove",
      kAll);
  for (size_t i : {0u, 1u}) EXPECT_EQ(m.pods()[i].init, kCdiLimit) << i;
  EXPECT_EQ(m.pods()[2].init, TierLimit(0));
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kNvidiaRemove})) << "nothing left to remove";
  EXPECT_FALSE(m.Valid(Op{.kind = OpKind::kNvidiaStop}));
  Model running = After("nvidia-start", kAll);
  EXPECT_FALSE(running.Valid(Op{.kind = OpKind::kNvidiaRemove})) << "stopped first";
  running.Apply(Op{.kind = OpKind::kReboot});
  EXPECT_FALSE(running.nvidia_running());
  Model nri = After("nvidia-start-nri", kAll);
  EXPECT_FALSE(nri.Valid(Op{.kind = OpKind::kNvidiaStart})) << "one installer at a time";
  nri.Apply(Op{.kind = OpKind::kNvidiaStop});
  EXPECT_FALSE(nri.Valid(Op{.kind = OpKind::kNvidiaRemove})) << "its NRI mode wrote no drop-in";
}

TEST(LifecycleModelTest, RandomOpsWithExtrasAreAlwaysValid) {
  std::mt19937_64 rng(44);
  Model m;
  m.Allow(kAll);
  bool upgraded = false;
  for (int i = 0; i < 3000; ++i) {
    const Op op = m.Next(rng, 5);
    ASSERT_TRUE(m.Valid(op)) << OpName(op);
    upgraded = upgraded || op.kind == OpKind::kUpgrade;
    m.Apply(op, "p");
  }
  EXPECT_TRUE(upgraded);
}

}  // namespace
}  // namespace ocirlimit::itest::lifecycle
