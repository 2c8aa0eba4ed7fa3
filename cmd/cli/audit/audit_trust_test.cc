// Whom audit trusts (docs/audit.md, "Whom audit trusts"): a state root,
// state file or bundle that root does not own never names a process to heal
// outright, nor supplies node facts; a user's state proves nothing to root,
// so its container is neither judged nor healed by root (unknown,
// unproven); no symlink is followed out of a root or bundle.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/audit/audit.h"
#include "cli/audit/audit_discover.h"
#include "cli/audit/audit_fake.h"
#include "tests/testing/fifo_probe.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;
constexpr uid_t kUser = 1000;
const std::string kRoot = "/run/user/1000/crun";

std::string Spec(const std::string& extra = "") {
  return R"({"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},)"
         R"("linux":{"devices":[{"path":"/dev/nvidia0","type":"c","major":195,"minor":0}]},)"
         R"("annotations":{"io.kubernetes.cri.container-type":"container")" +
         extra + "}}";
}

constexpr const char* kPolicy =
    "rlimits = [\"memlock=4M\"]\n"
    "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=64M\"]\n"
    "[rule.match]\ndevices = [\"/dev/nvidia*\"]\n";

// A rootless user's crun container "c1" at pid 4242, its state and bundle
// the user's: the user's own process, in a cgroup naming the container.
class UserState : public testing::Test {
 protected:
  void SetUp() override {
    node.File(kRoot + "/c1/status", FakeNode::CrunStatus(4242, 100, "/home/u/b"));
    node.File("/home/u/b/config.json", Spec());
    node.owners[kRoot] = kUser;
    node.owners[kRoot + "/c1"] = kUser;
    node.owners[kRoot + "/c1/status"] = kUser;
    node.owners["/home/u/b"] = kUser;
    node.owners["/home/u/b/config.json"] = kUser;
    node.procs[4242] = {100,
                        'S',
                        {{RLIMIT_MEMLOCK, {8 * kM, 8 * kM}}},
                        kUser,
                        "0::/user.slice/user-1000.slice/user@1000.service/libpod-c1.scope"};
    auto parsed = ParseConfig(kPolicy, "test.toml");
    ASSERT_TRUE(parsed) << parsed.error().Text();
    cfg = *parsed;
  }
  AuditReport Run(bool heal) {
    AuditRun run{cfg,     node, node,
                 {kRoot}, heal, [this](const std::string& l) { log.push_back(l); },
                 nullptr};
    return RunAudit(run);
  }
  FakeNode node;
  Config cfg;
  std::vector<std::string> log;
};

TEST_F(UserState, IsAuditedWithoutNodeFacts) {
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  ASSERT_EQ(d.containers.size(), 1u);
  const FoundContainer& c = d.containers[0];
  EXPECT_EQ(c.owner, kUser);
  EXPECT_FALSE(c.facts_trusted);
  ASSERT_TRUE(c.facts);
  EXPECT_TRUE(c.facts->devices.empty());  // the forged GPU is not believed
  EXPECT_TRUE(c.facts->annotations.empty());
}

// Root (these tests' caller) neither judges nor heals a user's container,
// whatever its process and cgroup: the user owns every fact that would
// prove it, so a forged state and a real rootless one look alike.
TEST_F(UserState, RootNeverJudgesNorHealsIt) {
  for (const char* cgroup : {"0::/user.slice/user-1000.slice/user@1000.service/libpod-c1.scope",
                             "0::/c1", "4:memory:/process_api/c1\n0::/"}) {
    node.procs[4242].cgroup = cgroup;
    AuditReport r = Run(true);
    ASSERT_EQ(r.entries.size(), 1u);
    EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kUnknown) << cgroup;
    EXPECT_NE(r.entries[0].verdict.why.find("unproven: its state is uid 1000's"), std::string::npos)
        << r.entries[0].verdict.why;
    EXPECT_FALSE(r.entries[0].heal) << cgroup;
    EXPECT_TRUE(node.set_pids.empty()) << cgroup;
    EXPECT_EQ(node.procs[4242].limits[RLIMIT_MEMLOCK], (LimitPair{8 * kM, 8 * kM}));
    EXPECT_FALSE(r.ok());
  }
}

// One owner owns a state root and all in it (FsOps::ReadTrusted): a user's
// file in root's root is neither root's nor the user's, and is not read.
TEST_F(UserState, AUserOwnedStateFileInARootOwnedRootIsNotRead) {
  node.owners.erase(kRoot);
  node.owners.erase(kRoot + "/c1");
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].state);
  EXPECT_NE(d.containers[0].problem.find("status\" is owned by uid 1000, not root"),
            std::string::npos)
      << d.containers[0].problem;
}

// Nor is a root-owned file in the user's root (a hard link, a rename).
TEST_F(UserState, ARootOwnedStateFileInAUsersRootIsNotRead) {
  node.owners.erase(kRoot + "/c1/status");
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].state);
  EXPECT_NE(d.containers[0].problem.find("status\" is owned by uid 0, not uid 1000"),
            std::string::npos)
      << d.containers[0].problem;
  EXPECT_EQ(Run(true).entries[0].verdict.status, AuditStatus::kUnknown);
  EXPECT_TRUE(node.set_pids.empty());
}

// options.json beside a user's bundle is the user's (issue 39): never a
// FIFO opened, never a root's file through a symlink. Over the real reader
// in ReadOriginOverARealTree below.
TEST_F(UserState, AFifoAsOptionsJsonIsNeverOpened) {
  node.fifos.insert("/home/u/b/options.json");
  node.owners["/home/u/b/options.json"] = kUser;
  Discovery d = DiscoverContainers(node, {kRoot}, false, true);
  EXPECT_TRUE(node.opened_fifos.empty());
  EXPECT_EQ(d.containers[0].binary_name, "");
}

// The user's own config.json in a directory of root's: not the user's bundle.
TEST_F(UserState, AUsersConfigInARootOwnedBundleIsNotRead) {
  node.owners.erase("/home/u/b");
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].facts);
  EXPECT_NE(d.containers[0].problem.find("is owned by uid 0"), std::string::npos)
      << d.containers[0].problem;
}

TEST_F(UserState, ABundleOfAnotherOwnerIsNotRead) {
  node.owners.erase("/home/u/b");
  node.owners.erase("/home/u/b/config.json");  // root's: the user named it
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].facts);
  EXPECT_NE(d.containers[0].problem.find("is owned by uid 0"), std::string::npos)
      << d.containers[0].problem;
  AuditReport r = Run(true);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kUnknown);
  EXPECT_TRUE(node.set_pids.empty());
}

TEST_F(UserState, ASymlinkedConfigIsNotFollowed) {
  node.symlinks.insert("/home/u/b/config.json");
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].facts);
  EXPECT_NE(d.containers[0].problem.find("no symlinks"), std::string::npos)
      << d.containers[0].problem;
}

TEST_F(UserState, ASymlinkedStateDirIsNotFollowed) {
  node.symlinks.insert(kRoot + "/c1");
  Discovery d = DiscoverContainers(node, {kRoot}, true);
  EXPECT_FALSE(d.containers[0].state);
  EXPECT_NE(d.containers[0].problem.find("no symlinks"), std::string::npos);
}

TEST(RootState, RootsStateWithAUsersBundleLosesNodeFactsButHeals) {
  FakeNode node;
  node.File("/run/runc/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/home/u/b"));
  node.File("/home/u/b/config.json", Spec());
  node.owners["/home/u/b"] = kUser;
  node.owners["/home/u/b/config.json"] = kUser;
  node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {8 * kM, 8 * kM}}}};
  auto cfg = ParseConfig(kPolicy, "test.toml");
  ASSERT_TRUE(cfg);
  Discovery d = DiscoverContainers(node, {"/run/runc"}, true);
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_EQ(d.containers[0].owner, 0u);
  EXPECT_FALSE(d.containers[0].facts_trusted);
  ASSERT_TRUE(d.containers[0].facts);
  EXPECT_TRUE(d.containers[0].facts->devices.empty());
  AuditRun run{*cfg, node, node, {"/run/runc"}, true, nullptr, nullptr};
  AuditReport r = RunAudit(run);
  ASSERT_TRUE(r.entries[0].heal);
  EXPECT_TRUE(r.entries[0].heal->ok());
  EXPECT_EQ(node.procs[4242].limits[RLIMIT_MEMLOCK], (LimitPair{4 * kM, 4 * kM}));
}

TEST(RootState, RootsOwnFilesAreTrusted) {
  FakeNode node;
  node.File("/run/runc/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/b"));
  node.File("/b/config.json", Spec());
  Discovery d = DiscoverContainers(node, {"/run/runc"}, true);
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_TRUE(d.containers[0].facts_trusted);
  ASSERT_TRUE(d.containers[0].facts);
  EXPECT_EQ(d.containers[0].facts->devices, (std::vector<std::string>{"/dev/nvidia0"}));
}

// The sandbox mark comes from the engine whose root the container is under:
// under CRI-O's /run/runc only CRI-O's key; under a rootless user's root none.
TEST(SandboxMark, OnlyTheEngineOfTheRootMarksASandbox) {
  struct Case {
    std::string root;
    std::string key;
    bool sandbox;
  };
  for (const Case& k : std::vector<Case>{
           {"/run/runc", "io.kubernetes.cri-o.ContainerType", true},
           {"/run/runc", "io.kubernetes.cri.container-type", false},
           {"/run/containerd/runc/k8s.io", "io.kubernetes.cri.container-type", true},
           {"/run/containerd/runc/k8s.io", "io.kubernetes.cri-o.ContainerType", false},
           {"/run/docker/runtime-runc/moby", "io.kubernetes.cri.container-type", false},
           {"/srv/state", "io.kubernetes.cri-o.ContainerType", true}}) {
    SCOPED_TRACE(k.root + " " + k.key);
    FakeNode node;
    node.File(k.root + "/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/b"));
    node.File("/b/config.json",
              R"({"ociVersion":"1.0.2","annotations":{")" + k.key + R"(":"sandbox"}})");
    node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {8 * kM, 8 * kM}}}};
    auto cfg = ParseConfig("rlimits = [\"memlock=4M\"]\n", "test.toml");
    ASSERT_TRUE(cfg);
    AuditRun run{*cfg, node, node, {k.root}, true, nullptr, nullptr};
    AuditReport r = RunAudit(run);
    ASSERT_EQ(r.entries.size(), 1u);
    EXPECT_EQ(!r.entries[0].verdict.judged, k.sandbox);
    EXPECT_EQ(node.set_pids.empty(), k.sandbox);
  }
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// A newline in a container id (a directory name any owner of a root can
// pick) never forges a row of audit's table.
TEST(AuditTextEscaping, ANewlineInAnIdForgesNoRow) {
  FakeNode node;
  const std::string id = "innocent\nok       forged   1        (the policy gives none)";
  node.File("/run/runc/" + id + "/state.json", FakeNode::RuncState("x", 4242, 100, "/b"));
  node.File("/b/config.json", R"({"ociVersion":"1.0.2"})");
  node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {8 * kM, 8 * kM}}}};
  auto cfg = ParseConfig("rlimits = [\"memlock=4M\"]\n", "test.toml");
  ASSERT_TRUE(cfg);
  AuditRun run{*cfg, node, node, {"/run/runc"}, false, nullptr, nullptr};
  const std::string text = AuditText(RunAudit(run), /*no_trunc=*/true);
  EXPECT_EQ(text.find("\nok       forged"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("innocent\nok       forged)"), std::string::npos) << text;
  // One header, one row, one summary.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
}

// A container whose bundle cannot be read is unknown, never judged on empty
// facts (which would heal it to the top-level limits).
TEST(AuditMutants, AnUnreadableBundleIsUnknown) {
  FakeNode node;
  node.File("/run/runc/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/gone"));
  node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {8 * kM, 8 * kM}}}};
  auto cfg = ParseConfig("rlimits = [\"memlock=4M\"]\n", "test.toml");
  ASSERT_TRUE(cfg);
  AuditRun run{*cfg, node, node, {"/run/runc"}, true, nullptr, nullptr};
  AuditReport r = RunAudit(run);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kUnknown);
  EXPECT_NE(r.entries[0].verdict.why.find("no bundle"), std::string::npos);
  EXPECT_FALSE(r.entries[0].heal);
  EXPECT_TRUE(node.set_pids.empty());
}

// crun keeps its own lock directory .crun beside the containers: no container.
TEST(AuditMutants, DotDirectoriesAreNoContainers) {
  FakeNode node;
  node.File("/run/crun/.crun/status", FakeNode::CrunStatus(4242, 100, "/b"));
  node.File("/run/crun/c1/status", FakeNode::CrunStatus(4243, 100, "/b"));
  Discovery d = DiscoverContainers(node, {"/run/crun"}, false);
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_EQ(d.containers[0].id, "c1");
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// Issue 39: audit's scope reads the shim's options.json beside a bundle that
// a user's state names. Root reads it only as that user's, through the real
// reader: a FIFO the user planted there is never opened, and a symlink to a
// root-only file never moves the container into the scope.
class ReadOriginOverARealTree : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root to chown (CI runs unit tests as root)";
    const std::string state = tree / "crun/c1";
    std::filesystem::create_directories(state);
    std::filesystem::create_directories(tree / "b");
    std::filesystem::create_directories(tree / "root-only");
    std::ofstream(state + "/status") << FakeNode::CrunStatus(4242, 100, tree / "b");
    std::ofstream(tree / "root-only/options.json") << kWrapper;
    ASSERT_EQ(chmod((tree / "root-only").c_str(), 0700), 0);
    for (const std::string p : {"crun", "crun/c1", "crun/c1/status", "b"}) {
      ASSERT_EQ(chown((tree / p).c_str(), kUser, kUser), 0) << p;
    }
  }
  std::string BinaryName() {
    Discovery d = DiscoverContainers(LinuxFsOps(), {tree / "crun"}, false, true);
    EXPECT_EQ(d.containers.size(), 1u);
    if (d.containers.empty()) return "?";
    EXPECT_EQ(d.containers[0].owner, kUser) << d.containers[0].problem;
    return d.containers[0].binary_name;
  }
  static constexpr const char* kWrapper = R"({"binary_name":"/usr/local/bin/oci-rlimit-runtime"})";
  testsupport::TempDir tree{"origin"};
};

TEST_F(ReadOriginOverARealTree, ReadsTheUsersOwnOptions) {
  std::ofstream(tree / "b/options.json") << R"({"binary_name":"/home/u/runc"})";
  ASSERT_EQ(chown((tree / "b/options.json").c_str(), kUser, kUser), 0);
  EXPECT_EQ(BinaryName(), "/home/u/runc");
}

TEST_F(ReadOriginOverARealTree, NeverFollowsASymlinkToRootsFile) {
  ASSERT_EQ(symlink((tree / "root-only/options.json").c_str(), (tree / "b/options.json").c_str()),
            0);
  ASSERT_EQ(lchown((tree / "b/options.json").c_str(), kUser, kUser), 0);
  EXPECT_EQ(BinaryName(), "");
}

// The user's state naming a bundle of root's: its options.json is not the user's.
TEST_F(ReadOriginOverARealTree, NeverReadsRootsOptionsForAUsersState) {
  std::ofstream(tree / "crun/c1/status") << FakeNode::CrunStatus(4242, 100, tree / "root-only");
  EXPECT_EQ(BinaryName(), "");
}

TEST_F(ReadOriginOverARealTree, NeverOpensAFifo) {
  const std::string fifo = tree / "b/options.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(chown(fifo.c_str(), kUser, kUser), 0);
  std::string name = "?";
  EXPECT_FALSE(testsupport::OpenedToRead(fifo, [&] { name = BinaryName(); }));
  EXPECT_EQ(name, "");
}

}  // namespace
}  // namespace ocirlimit
