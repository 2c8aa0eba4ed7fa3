// ReadRootOwned: what a root-side program reads from a runtime's state root.
// The tests run as root (as CI does) and make the untrusted shapes with chown.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "effects/files.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

class RootOwnedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root to chown (CI runs unit tests as root)";
    ASSERT_EQ(mkdir((dir_ / "id").c_str(), 0711), 0) << strerror(errno);
    std::ofstream(dir_ / "id/state.json") << "{}";
    ASSERT_EQ(chmod((dir_ / "id/state.json").c_str(), 0644), 0);
  }
  [[nodiscard]] Result<std::string> Read() const {
    return ReadRootOwned(dir_.path(), {"id", "state.json"}, 4096);
  }
  testsupport::TempDir dir_{"root-owned"};
};

TEST_F(RootOwnedTest, ReadsWhatRootWrote) {
  auto r = Read();
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(*r, "{}");
}

TEST_F(RootOwnedTest, RefusesAFileAUserOwns) {
  ASSERT_EQ(chown((dir_ / "id/state.json").c_str(), 65534, 65534), 0);
  auto r = Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("state.json is owned by uid 65534, not root"), std::string::npos)
      << r.error().Text();
}

TEST_F(RootOwnedTest, RefusesADirectoryAUserOwns) {
  ASSERT_EQ(chown((dir_ / "id").c_str(), 1000, 1000), 0);
  auto r = Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("/id is owned by uid 1000"), std::string::npos)
      << r.error().Text();
}

TEST_F(RootOwnedTest, RefusesARootAUserOwns) {
  ASSERT_EQ(chown(dir_.path().c_str(), 1000, 1000), 0);
  auto r = Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("is owned by uid 1000"), std::string::npos) << r.error().Text();
}

TEST_F(RootOwnedTest, RefusesAGroupWritableFile) {
  ASSERT_EQ(chmod((dir_ / "id/state.json").c_str(), 0664), 0);
  auto r = Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("writable by group or others"), std::string::npos);
}

TEST_F(RootOwnedTest, NeverFollowsASymlinkedFile) {
  std::ofstream(dir_ / "secret") << "root only";
  ASSERT_EQ(unlink((dir_ / "id/state.json").c_str()), 0);
  ASSERT_EQ(symlink((dir_ / "secret").c_str(), (dir_ / "id/state.json").c_str()), 0);
  auto r = Read();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("state.json is a symlink: not followed"), std::string::npos)
      << r.error().Text();
}

TEST_F(RootOwnedTest, NeverFollowsASymlinkedDirectory) {
  ASSERT_EQ(mkdir((dir_ / "elsewhere").c_str(), 0700), 0);
  std::ofstream(dir_ / "elsewhere/state.json") << "{}";
  ASSERT_EQ(symlink((dir_ / "elsewhere").c_str(), (dir_ / "link").c_str()), 0);
  auto r = ReadRootOwned(dir_.path(), {"link", "state.json"}, 4096);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("link is a symlink"), std::string::npos) << r.error().Text();
}

TEST_F(RootOwnedTest, RefusesNamesThatLeaveTheRoot) {
  for (const char* name : {"..", ".", "", "a/b"}) {
    auto r = ReadRootOwned(dir_.path(), {name, "state.json"}, 4096);
    ASSERT_FALSE(r) << name;
    EXPECT_NE(r.error().Text().find("not a plain file name"), std::string::npos) << name;
  }
}

TEST_F(RootOwnedTest, AMissingFileIsENOENT) {
  auto r = ReadRootOwned(dir_.path(), {"other", "state.json"}, 4096);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
}

TEST_F(RootOwnedTest, RefusesADirectoryAsTheFile) {
  auto r = ReadRootOwned(dir_.path(), {"id"}, 4096);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("is not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace ocirlimit
