// audit --heal's prune of decision records (audit_prune.h) over a fake node
// and an in-memory store: a record goes only when root's, older than the
// grace period, and its container absent from every root, each listed.
#include "cli/audit/audit_prune.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "cli/audit/audit_fake.h"
#include "tests/testing/fake_decisions.h"

namespace ocirlimit {
namespace {

constexpr std::time_t kNow = 1796000000;
const std::vector<std::string> kRoots = {"/run/containerd/runc/*", "/run/crun"};

std::string At(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// FakeNode, with one directory that cannot be listed.
class Unlistable final : public FsOps {
 public:
  Unlistable(FakeNode& node, std::string dir) : node_(node), dir_(std::move(dir)) {}
  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    if (dir == dir_) return MakeError("open directory " + dir, EACCES);
    return node_.ListDir(dir);
  }
  Result<std::string> ReadFile(const std::string& path, size_t max) override {
    return node_.ReadFile(path, max);
  }
  Result<TrustedText> ReadTrusted(const std::string& root, const std::vector<std::string>& parts,
                                  std::optional<uid_t> owner, size_t max) override {
    return node_.ReadTrusted(root, parts, owner, max);
  }

 private:
  FakeNode& node_;
  std::string dir_;
};

class AuditPruneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_.dirs.insert("/run/containerd/runc");
    node_.dirs.insert("/run/containerd/runc/k8s.io");
    node_.dirs.insert("/run/crun");
    node_.dirs.insert("/run/containerd/runc/k8s.io/live");
    node_.dirs.insert("/run/crun/crio-live");
  }
  void Record(const std::string& id, std::time_t at) {
    store_.records[id] = {.id = id, .by = "nri", .policy = "p", .time = At(at), .limits = {}};
  }
  FakeNode node_;
  testsupport::FakeDecisions store_;
};

TEST_F(AuditPruneTest, PrunesOnlyARecordWhoseContainerIsGoneFromEveryRoot) {
  Record("live", kNow - 7200);
  Record("crio-live", kNow - 7200);
  Record("gone", kNow - 7200);
  PruneReport r = PruneDecisions(store_, node_, kRoots, kNow);
  EXPECT_EQ(r.pruned, std::vector<std::string>{"gone"});
  EXPECT_EQ(store_.removed, std::vector<std::string>{"gone"});
  EXPECT_EQ(r.not_proven, "");
  EXPECT_TRUE(store_.records.contains("live"));
  EXPECT_TRUE(store_.records.contains("crio-live"));
}

TEST_F(AuditPruneTest, KeepsARecordYoungerThanTheGracePeriod) {
  Record("in-flight", kNow - kPruneGrace + 5);
  Record("old", kNow - kPruneGrace);
  PruneReport r = PruneDecisions(store_, node_, kRoots, kNow);
  EXPECT_EQ(r.pruned, std::vector<std::string>{"old"});
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_TRUE(r.kept[0].starts_with("in-flight: recorded at")) << r.kept[0];
}

TEST_F(AuditPruneTest, KeepsARecordWhoseTimeDoesNotParse) {
  Record("odd", kNow - 7200);
  store_.records["odd"].time = "yesterday";
  EXPECT_TRUE(PruneDecisions(store_, node_, kRoots, kNow).pruned.empty());
  EXPECT_TRUE(store_.removed.empty());
}

TEST_F(AuditPruneTest, ARootThatCannotBeListedProvesNothing) {
  Record("gone", kNow - 7200);
  for (const char* dir : {"/run/containerd/runc", "/run/containerd/runc/k8s.io", "/run/crun"}) {
    SCOPED_TRACE(dir);
    Unlistable fs(node_, dir);
    PruneReport r = PruneDecisions(store_, fs, kRoots, kNow);
    EXPECT_TRUE(r.pruned.empty());
    EXPECT_NE(r.not_proven.find(dir), std::string::npos) << r.not_proven;
  }
  EXPECT_TRUE(store_.removed.empty());
}

TEST_F(AuditPruneTest, AnAbsentRootHoldsNothing) {
  Record("gone", kNow - 7200);
  PruneReport r = PruneDecisions(store_, node_, {"/run/runc", "/run/user/*/runc"}, kNow);
  EXPECT_EQ(r.pruned, std::vector<std::string>{"gone"});
}

TEST_F(AuditPruneTest, ARecordNotBelievedIsKept) {
  Record("gone", kNow - 7200);
  store_.read_error = MakeError("decision record: owned by uid 1000: not trusted", EPERM);
  PruneReport r = PruneDecisions(store_, node_, kRoots, kNow);
  EXPECT_TRUE(r.pruned.empty());
  EXPECT_TRUE(store_.removed.empty());
  ASSERT_EQ(r.kept.size(), 1u);
  EXPECT_NE(r.kept[0].find("not trusted"), std::string::npos) << r.kept[0];
}

TEST_F(AuditPruneTest, AContainerUnderARuntimeRootKeepsItsRecord) {
  Record("custom", kNow - 7200);
  node_.dirs.insert("/srv/runc/custom");
  std::vector<std::string> roots = kRoots;
  roots.emplace_back("/srv/runc");
  EXPECT_TRUE(PruneDecisions(store_, node_, roots, kNow).pruned.empty());
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

TEST(AuditPruneText, NamesEachPrunedRecordAndWhyNoneWent) {
  EXPECT_EQ(PruneText({"a\nb"}, ""),
            "pruned the decision record of \"a\\nb\", gone from every state root\n");
  EXPECT_EQ(PruneText({}, "a state root: open directory /run/crun: Permission denied"),
            "no decision record pruned: a state root: open directory /run/crun: Permission "
            "denied\n");
  EXPECT_EQ(PruneText({}, ""), "");
}

}  // namespace
}  // namespace ocirlimit
