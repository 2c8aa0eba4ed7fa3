// The uninstall's live-container scan over a real directory tree standing
// for the node's root: root's state with root's bundle keeps the wrapper; a
// user's state never does, whatever it names, and nothing it names is read
// (docs/audit.md, "Whom audit trusts").
#include "node/node_live.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/testing/fifo_probe.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kUser = 1001;

class LiveScan : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to chown the user's state";
    Write("/b/runtime", "/usr/bin/oci-rlimit-runtime");
    Write("/run/runc/rootc/state.json", State("rootc", 4242));
  }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(host.path() + path).parent_path());
    std::ofstream(host.path() + path) << text;
  }
  static std::string State(const std::string& id, int pid) {
    return R"({"id":")" + id + R"(","init_process_pid":)" + std::to_string(pid) +
           R"(,"init_process_start":5,"config":{"labels":["bundle=/b"]}})";
  }
  void UserState(int pid) {
    Write("/run/user/1001/runc/userc/state.json", State("userc", pid));
    for (const char* p : {"/run/user/1001/runc", "/run/user/1001/runc/userc",
                          "/run/user/1001/runc/userc/state.json"}) {
      ASSERT_EQ(chown((host.path() + p).c_str(), kUser, kUser), 0);
    }
  }
  std::vector<std::string> Ids() {
    LiveQuery q{host.path(), {"/run/runc", "/run/user/*/runc"}, "/usr/bin/oci-rlimit-runtime", {}};
    std::vector<std::string> out;
    for (const auto& c : ContainersThroughWrapper(q)) out.push_back(c.id);
    return out;
  }
  testsupport::TempDir host{"live"};
};

TEST_F(LiveScan, AUsersFakeStateDoesNotCount) {
  UserState(4343);  // no such process under the host's /proc
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
}

// A user's state whose init is live, the user's, in a cgroup named after
// the id: all of it the user's to forge, so it proves nothing.
TEST_F(LiveScan, AUsersLiveContainerDoesNotCount) {
  UserState(4343);
  Write("/proc/4343/status", "Uid:\t1001\t1001\t1001\t1001\n");
  Write("/proc/4343/cgroup", "0::/user.slice/user-1001.slice/libpod-userc.scope/container\n");
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
}

TEST_F(LiveScan, AUsersStateNamingRootsProcessDoesNotCount) {
  UserState(4343);
  Write("/proc/4343/status", "Uid:\t0\t0\t0\t0\n");
  Write("/proc/4343/cgroup", "0::/user.slice/libpod-userc.scope\n");
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
}

bool FifoOpenedBy(const std::string& path, const std::function<void()>& scan) {
  EXPECT_EQ(mkfifo(path.c_str(), 0644), 0);
  return testsupport::OpenedToRead(path, scan);
}

// The user's bundle is the user's: a FIFO there (or a symlink to root's
// secret) is never opened, and never says the container is the wrapper's.
TEST_F(LiveScan, AUsersBundleIsNeverOpened) {
  Write("/run/user/1001/runc/userc/state.json",
        R"({"id":"userc","init_process_pid":4343,"init_process_start":5,)"
        R"("config":{"labels":["bundle=/ub"]}})");
  fs::create_directories(host.path() + "/ub");
  for (const char* p : {"/run/user/1001/runc", "/run/user/1001/runc/userc",
                        "/run/user/1001/runc/userc/state.json", "/ub"}) {
    ASSERT_EQ(chown((host.path() + p).c_str(), kUser, kUser), 0);
  }
  Write("/proc/4343/status", "Uid:\t1001\t1001\t1001\t1001\n");
  Write("/proc/4343/cgroup", "0::/userc\n");
  std::vector<std::string> ids;
  EXPECT_FALSE(FifoOpenedBy(host.path() + "/ub/runtime", [&] { ids = Ids(); }));
  EXPECT_EQ(ids, (std::vector<std::string>{"rootc"}));
}

// Root's own state naming a bundle whose files are a FIFO or a symlink to
// the wrapper's name: neither is opened nor followed, so neither keeps it.
TEST_F(LiveScan, RootsBundleIsReadOnlyAsRegularFilesOfRoots) {
  Write("/run/runc/fifoc/state.json",
        R"({"id":"fifoc","init_process_pid":4344,)"
        R"("init_process_start":5,"config":{"labels":["bundle=/fb"]}})");
  Write("/run/runc/linkc/state.json",
        R"({"id":"linkc","init_process_pid":4345,)"
        R"("init_process_start":5,"config":{"labels":["bundle=/lb"]}})");
  fs::create_directories(host.path() + "/fb");
  fs::create_directories(host.path() + "/lb");
  fs::create_symlink(host.path() + "/b/runtime", host.path() + "/lb/runtime");
  std::vector<std::string> ids;
  EXPECT_FALSE(FifoOpenedBy(host.path() + "/fb/runtime", [&] { ids = Ids(); }));
  EXPECT_EQ(ids, (std::vector<std::string>{"rootc"}));
}

// A bundle file a user may write (theirs, or group-writable) says nothing.
TEST_F(LiveScan, ABundleFileAUserCouldWriteDoesNotCount) {
  Write("/run/runc/userb/state.json",
        R"({"id":"userb","init_process_pid":4346,)"
        R"("init_process_start":5,"config":{"labels":["bundle=/ob"]}})");
  Write("/ob/runtime", "/usr/bin/oci-rlimit-runtime");
  ASSERT_EQ(chown((host.path() + "/ob/runtime").c_str(), kUser, kUser), 0);
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
  ASSERT_EQ(chown((host.path() + "/ob/runtime").c_str(), 0, 0), 0);
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc", "userb"}));
  ASSERT_EQ(chmod((host.path() + "/ob/runtime").c_str(), 0664), 0);
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
  // A bundle a user owns whole, named by root's state: still the user's word.
  ASSERT_EQ(chmod((host.path() + "/ob/runtime").c_str(), 0644), 0);
  for (const char* p : {"/ob", "/ob/runtime"}) {
    ASSERT_EQ(chown((host.path() + p).c_str(), kUser, kUser), 0);
  }
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
}

}  // namespace
}  // namespace ocirlimit::node
