// The decision store on the real file system (the tests run as root, as CI
// does): written whole in a 0700 directory of root's, read back only as
// root wrote it.
#include "effects/decisions.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

#include "tests/testing/case_name.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

class DecisionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(geteuid(), 0u) << "needs root to chown"; }
  [[nodiscard]] static DecisionRecord Sample(const std::string& id) {
    return {.id = id,
            .by = std::string(kDecidedByWrapper),
            .policy = "digest",
            .time = "t",
            .limits = {{RLIMIT_MEMLOCK, 6291456, 8388608}}};
  }
  [[nodiscard]] ::testing::AssertionResult Written(const DecisionRecord& d) const {
    auto w = store_->Write(d);
    if (w) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << w.error().Text();
  }
  testsupport::TempDir tmp_{"decisions"};
  std::string dir_ = tmp_ / "run/decisions";
  std::unique_ptr<DecisionStore> store_ = LinuxDecisionStore(LinuxFsOps(), dir_);
};

TEST_F(DecisionStoreTest, WritesWholeInARootOnlyDirectoryAndReadsBack) {
  EXPECT_FALSE(*store_->Read("c1")) << "no directory yet: no record";
  ASSERT_TRUE(Written(Sample("c1")));
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat((dir_ + "/c1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto back = store_->Read("c1");
  ASSERT_TRUE(back) << back.error().Text();
  ASSERT_TRUE(*back);
  EXPECT_EQ((*back)->limits, Sample("c1").limits);
  EXPECT_EQ(*store_->Ids(), std::vector<std::string>{"c1"});
  DecisionRecord again = Sample("c1");
  again.limits.clear();
  ASSERT_TRUE(Written(again)) << "a record there is replaced whole";
  EXPECT_TRUE((*store_->Read("c1"))->limits.empty());
  ASSERT_TRUE(store_->Remove("c1"));
  EXPECT_FALSE(*store_->Read("c1"));
  EXPECT_TRUE(store_->Remove("c1")) << "none left is fine";
  EXPECT_TRUE(store_->Ids()->empty());
}

TEST_F(DecisionStoreTest, AUsersRecordIsNeverBelieved) {
  ASSERT_TRUE(Written(Sample("c1")));
  ASSERT_EQ(chown((dir_ + "/c1").c_str(), 1000, 1000), 0);
  auto r = store_->Read("c1");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("not root"), std::string::npos) << r.error().Text();
}

TEST_F(DecisionStoreTest, ADirectoryOthersCanWriteIsRefusedForReadAndWrite) {
  ASSERT_TRUE(Written(Sample("c1")));
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_FALSE(store_->Read("c1"));
  auto w = store_->Write(Sample("c2"));
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().Text().find("not trusted"), std::string::npos) << w.error().Text();
}

TEST_F(DecisionStoreTest, ASymlinkedRecordIsNotFollowed) {
  ASSERT_TRUE(Written(Sample("c1")));
  ASSERT_EQ(symlink((dir_ + "/c1").c_str(), (dir_ + "/c2").c_str()), 0);
  EXPECT_FALSE(store_->Read("c2"));
}

// Remove goes through the directory itself: a symlink in its place, or a
// directory others may write, removes nothing.
TEST_F(DecisionStoreTest, RemoveNeverFollowsASymlinkedDirectoryNorActsInAnothersOne) {
  ASSERT_TRUE(Written(Sample("c1")));
  const std::string link = tmp_ / "run/link";
  ASSERT_EQ(symlink(dir_.c_str(), link.c_str()), 0);
  auto via_link = LinuxDecisionStore(LinuxFsOps(), link);
  EXPECT_FALSE(via_link->Remove("c1"));
  EXPECT_TRUE(*store_->Read("c1")) << "still there";
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_FALSE(store_->Remove("c1"));
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_TRUE(*store_->Read("c1")) << "still there";
  EXPECT_TRUE(store_->Remove("c1"));
}

TEST_F(DecisionStoreTest, ARecordNamingAnotherContainerIsNotBelieved) {
  ASSERT_TRUE(Written(Sample("c1")));
  ASSERT_EQ(rename((dir_ + "/c1").c_str(), (dir_ + "/c2").c_str()), 0);
  auto r = store_->Read("c2");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("names container"), std::string::npos) << r.error().Text();
}

TEST_F(DecisionStoreTest, AnIdThatIsNoFileNameIsRefused) {
  EXPECT_FALSE(store_->Read("../etc"));
  EXPECT_FALSE(store_->Write(Sample("a/b")));
  EXPECT_FALSE(store_->Remove(".."));
}

TEST(DecisionsDir, TheEnvironmentPicksAnAbsoluteDirectoryOnly) {
  EXPECT_EQ(DecisionsDir(std::nullopt), kDecisionsDir);
  EXPECT_EQ(DecisionsDir(std::string("relative")), kDecisionsDir);
  EXPECT_EQ(DecisionsDir(std::string("/tmp/d")), "/tmp/d");
}

struct TimeCase {
  const char* name;
  const char* text;
  std::optional<std::time_t> want;
};

class ParseRfc3339Test : public ::testing::TestWithParam<TimeCase> {};

TEST_P(ParseRfc3339Test, ReadsOnlyWhatRfc3339NowWrites) {
  EXPECT_EQ(ParseRfc3339Utc(GetParam().text), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Times, ParseRfc3339Test,
    ::testing::Values(TimeCase{"epoch", "1970-01-01T00:00:00Z", 0},
                      TimeCase{"now", "2026-12-07T21:25:15Z", 1796678715},
                      TimeCase{"no_zone", "2026-12-07T21:25:15", std::nullopt},
                      TimeCase{"offset", "2026-12-07T21:25:15+01:00", std::nullopt},
                      TimeCase{"month_13", "2026-13-07T21:25:15Z", std::nullopt},
                      TimeCase{"hour_24", "2026-12-07T24:25:15Z", std::nullopt},
                      TimeCase{"empty", "", std::nullopt}),
    CaseName{});

TEST(PruneGrace, ARecordIsOldEnoughFromKPruneGraceOn) {
  DecisionRecord d{
      .id = "c", .by = "nri", .policy = "p", .time = "2026-12-07T21:25:15Z", .limits = {}};
  const std::time_t at = 1796678715;
  EXPECT_FALSE(OldEnoughToPrune(d, at + kPruneGrace - 1));
  EXPECT_TRUE(OldEnoughToPrune(d, at + kPruneGrace));
  d.time = "T0";
  EXPECT_FALSE(OldEnoughToPrune(d, at + 100 * kPruneGrace)) << "a time that does not parse";
}

}  // namespace
}  // namespace ocirlimit
