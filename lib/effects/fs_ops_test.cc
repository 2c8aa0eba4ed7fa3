// The pure checks of a container proof (effects/heal.h). The trusted
// reader's own tests are in trusted_read_test.cc.
#include <gtest/gtest.h>

#include "effects/heal.h"

namespace ocirlimit {
namespace {

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

// Issue 39 finding 7: a user-chosen id names only a whole component or a
// runtime's own scope for it, never a component that contains it.
TEST(CgroupNames, NeverAComponentThatOnlyContainsTheId) {
  EXPECT_FALSE(CgroupNames("0::/user.slice/user-1000.slice/session-3.scope\n", "user"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/user-1000.slice/session-3.scope\n", "3"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/user-1000.slice/session-3.scope\n", "1000"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/user@1000.service/app.slice/x.scope\n", "app"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/evil-c1.scope\n", "c1"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/libpod-c1.scope.d\n", "c1"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/c1.scope\n", "c1"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/-c1.scope\n", "c1"));
  EXPECT_FALSE(CgroupNames("0::/user.slice/libpod-c1-x.scope\n", "c1"));
  EXPECT_TRUE(CgroupNames("0::/user.slice/user\n", "user"));
  EXPECT_TRUE(CgroupNames("0::/user.slice/libpod-user.scope/container\n", "user"));
  for (const char* prefix : {"libpod", "crio", "docker", "cri-containerd", "runc", "crun"}) {
    EXPECT_TRUE(CgroupNames(std::string("0::/x.slice/") + prefix + "-c1.scope\n", "c1")) << prefix;
  }
}

}  // namespace
}  // namespace ocirlimit
