// FsOps::ReadBeneath on the real file system: it follows no symlink (not the
// directory, not a component, not out of it) and says who owns what it read;
// and the pure checks of a container proof (effects/heal.h).
#include "effects/fs_ops.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "effects/heal.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

namespace fs = std::filesystem;

class ReadBeneath : public testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir / "b/sub");
    std::ofstream(dir / "b/config.json") << "{}";
    std::ofstream(dir / "b/sub/f") << "x";
    std::ofstream(dir / "secret") << "s";
  }
  testsupport::TempDir dir{"beneath"};
};

TEST_F(ReadBeneath, ReadsAFileAndItsOwners) {
  auto r = LinuxFsOps().ReadBeneath(dir / "b", "config.json", 100);
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(r->text, "{}");
  EXPECT_EQ(r->owner, getuid());
  EXPECT_EQ(r->dir_owner, getuid());
  auto sub = LinuxFsOps().ReadBeneath(dir / "b", "sub/f", 100);
  ASSERT_TRUE(sub) << sub.error().Text();
  EXPECT_EQ(sub->text, "x");
}

TEST_F(ReadBeneath, RefusesASymlinkedFile) {
  fs::create_symlink(dir / "secret", dir / "b/link.json");
  auto r = LinuxFsOps().ReadBeneath(dir / "b", "link.json", 100);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find("no symlinks"), std::string::npos) << r.error().Text();
}

// Even a symlink that stays beneath the directory is not followed.
TEST_F(ReadBeneath, RefusesARelativeSymlinkBeneath) {
  fs::create_symlink("config.json", dir / "b/rel.json");
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "b", "rel.json", 100));
  fs::create_directory_symlink("sub", dir / "b/rsub");
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "b", "rsub/f", 100));
}

TEST_F(ReadBeneath, RefusesASymlinkedComponent) {
  fs::create_directory_symlink(dir / "b/sub", dir / "b/lsub");
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "b", "lsub/f", 100));
}

TEST_F(ReadBeneath, RefusesASymlinkedDirectory) {
  fs::create_directory_symlink(dir / "b", dir / "lb");
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "lb", "config.json", 100));
}

TEST_F(ReadBeneath, RefusesDotDotOut) {
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "b", "../secret", 100));
}

TEST_F(ReadBeneath, RefusesWhatIsNoRegularFile) {
  EXPECT_FALSE(LinuxFsOps().ReadBeneath(dir / "b", "sub", 100));
}

TEST(StatusUidsAre, EveryFieldMustMatch) {
  EXPECT_TRUE(StatusUidsAre("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGid:\t0\n", 1000));
  EXPECT_FALSE(StatusUidsAre("Name:\tx\nUid:\t1000\t0\t1000\t1000\n", 1000));
  EXPECT_FALSE(StatusUidsAre("Name:\tx\nUid:\t0\t0\t0\t0\n", 1000));
  EXPECT_FALSE(StatusUidsAre("Name:\tx\nUid:\t1000\t1000\t1000\n", 1000));
  EXPECT_FALSE(StatusUidsAre("Name:\tx\n", 0));
  EXPECT_TRUE(StatusUidsAre("Uid:\t0\t0\t0\t0\n", 0));
}

TEST(CgroupNames, TheIdWholeInAComponent) {
  const std::string id = "3f2a9c";
  EXPECT_TRUE(CgroupNames("0::/user.slice/libpod-3f2a9c.scope/container\n", id));
  EXPECT_TRUE(CgroupNames("0::/kubepods/besteffort/pod1/3f2a9c\n", id));
  EXPECT_TRUE(CgroupNames("12:memory:/x\n0::/system.slice/crio-3f2a9c.scope\n", id));
  EXPECT_FALSE(CgroupNames("0::/user.slice/libpod-3f2a9c1.scope\n", id));
  EXPECT_FALSE(CgroupNames("0::/user.slice/libpod-a3f2a9c.scope\n", id));
  EXPECT_FALSE(CgroupNames("0::/user.slice/session-3.scope\n", id));
  EXPECT_FALSE(CgroupNames("3f2a9c\n", id));  // no path
  EXPECT_FALSE(CgroupNames("0::/\n", ""));
}

}  // namespace
}  // namespace ocirlimit
