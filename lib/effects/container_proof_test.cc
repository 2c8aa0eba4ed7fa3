// The one proof that a process is a container's init (effects/container_proof.h),
// pure. The trusted reader's own tests are in trusted_read_test.cc.
#include "effects/container_proof.h"

#include <gtest/gtest.h>

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

// Root's and the engine's records are believed; a user's only by that user.
TEST(Distrust, AUsersRecordProvesNothingToAnotherUid) {
  EXPECT_EQ(Distrust(InitRecord{0, 5, ""}, 0), std::nullopt);
  EXPECT_EQ(Distrust(InitRecord{0, 5, ""}, 1000), std::nullopt);
  EXPECT_EQ(Distrust(InitRecord{1000, 5, ""}, 1000), std::nullopt);
  auto why = Distrust(InitRecord{65534, 5, "/process_api"}, 0);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "unproven: its state is uid 65534's, and nothing a user writes proves a container to "
            "another uid (that user's own `oci-rlimit audit` judges it)");
  EXPECT_TRUE(Distrust(InitRecord{1000, 5, ""}, 1001));
}

TEST(NotTheInit, TheRecordMustPinTheProcess) {
  const std::string root = "Uid:\t0\t0\t0\t0\n";
  const std::string user = "Uid:\t1000\t1000\t1000\t1000\n";
  const std::string in = "0::/kubepods/pod1/c1\n";
  EXPECT_EQ(NotTheInit(InitRecord{0, 5, ""}, "", ""), std::nullopt);
  EXPECT_EQ(NotTheInit(InitRecord{0, std::nullopt, "/kubepods/pod1/c1"}, "", in), std::nullopt);
  EXPECT_EQ(*NotTheInit(InitRecord{0, std::nullopt, ""}, root, in),
            "neither a start time nor a cgroup was recorded to prove it");
  EXPECT_EQ(*NotTheInit(InitRecord{0, 5, "/kubepods/pod1/c2"}, root, in),
            "its cgroup is not \"/kubepods/pod1/c2\", the one made for the container");
  // A user's record (believed by that user only): the process must be theirs.
  EXPECT_EQ(NotTheInit(InitRecord{1000, 5, ""}, user, ""), std::nullopt);
  EXPECT_EQ(*NotTheInit(InitRecord{1000, 5, ""}, root, ""),
            "not a process of uid 1000, who owns the container's state");
}

// The cgroup the engine made, or below it, by whole components: never a
// component or a substring that merely names the id.
TEST(CgroupIsWithin, TheRecordedCgroupOrBelow) {
  const std::string path = "/kubepods/besteffort/pod1/3f2a9c";
  EXPECT_TRUE(CgroupIsWithin("0::/kubepods/besteffort/pod1/3f2a9c\n", path));
  EXPECT_TRUE(CgroupIsWithin("0::/kubepods/besteffort/pod1/3f2a9c/container\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/kubepods/besteffort/pod1/3f2a9c1\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/kubepods/besteffort/pod1\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/user.slice/kubepods/besteffort/pod1/3f2a9c\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/3f2a9c\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/kubepods/besteffort/pod1/3f2a9c/../x\n", path));
  EXPECT_FALSE(CgroupIsWithin("3f2a9c\n", path));  // no path
  EXPECT_FALSE(CgroupIsWithin("0::/\n", "/"));     // the root is nobody's container
  EXPECT_FALSE(CgroupIsWithin("0::/kubepods\n", ""));
}

// cgroup v1 (this machine's hybrid layout): the memory hierarchy's line
// counts, whatever the v2 line or the other hierarchies say.
TEST(CgroupIsWithin, OnV1TheMemoryHierarchy) {
  const std::string v1 =
      "9:name=systemd:/user.slice/c1\n8:pids:/c1\n4:memory:/process_api/c1\n0::/\n";
  EXPECT_TRUE(CgroupIsWithin(v1, "/process_api/c1"));
  EXPECT_FALSE(CgroupIsWithin(v1, "/c1"));
  EXPECT_FALSE(CgroupIsWithin(v1, "/user.slice/c1"));
  EXPECT_TRUE(CgroupIsWithin("5:cpu,memory:/k/c1\n0::/x\n", "/k/c1"));
  EXPECT_FALSE(CgroupIsWithin("5:cpu,memory:/x\n0::/k/c1\n", "/k/c1"));
}

// Seen from a cgroup namespace of its own (the NRI plugin in a pod): the
// tail below the ".." must be the end of the recorded path.
TEST(CgroupIsWithin, FromACgroupNamespaceTheTail) {
  const std::string path = "/kubepods.slice/kubepods-pod1.slice/cri-containerd-c1.scope";
  EXPECT_TRUE(CgroupIsWithin("0::/../kubepods-pod1.slice/cri-containerd-c1.scope\n", path));
  EXPECT_TRUE(CgroupIsWithin("0::/../../cri-containerd-c1.scope/container\n", path));
  EXPECT_TRUE(CgroupIsWithin("0::/../../" + path.substr(1) + "\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/../user.slice/cri-containerd-c1.scope\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/../kubepods-pod1.slice\n", path));
  EXPECT_FALSE(CgroupIsWithin("0::/../..\n", path));
}

TEST(ResolveCgroupsPath, AsRuncAndCrunResolveIt) {
  EXPECT_EQ(ResolveCgroupsPath("/kubepods/besteffort/pod1/c1"), "/kubepods/besteffort/pod1/c1");
  EXPECT_EQ(ResolveCgroupsPath("/kubepods//pod1/c1/"), "/kubepods/pod1/c1");
  EXPECT_EQ(ResolveCgroupsPath("kubepods-besteffort-pod1.slice:cri-containerd:c1"),
            "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
            "cri-containerd-c1.scope");
  EXPECT_EQ(ResolveCgroupsPath("system.slice:crio:c1"), "/system.slice/crio-c1.scope");
  EXPECT_EQ(ResolveCgroupsPath(":runc:c1"), "/system.slice/runc-c1.scope");
  EXPECT_EQ(ResolveCgroupsPath("-.slice:x:y.slice"), "/y.slice");
  EXPECT_EQ(ResolveCgroupsPath("machine.slice::c1"), "/machine.slice/c1.scope");
  for (const char* bad : {"", "/", "relative/path", "a.slice:p", "a.slice:p:n:x", "a:p:n",
                          "a--b.slice:p:n", "-a.slice:p:n", "a.slice:p:n/x", "a.slice:p:"}) {
    EXPECT_EQ(ResolveCgroupsPath(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace ocirlimit
