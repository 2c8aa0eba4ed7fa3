// The uninstall's live-container scan over a real directory tree standing
// for the node's root: root's state keeps the wrapper; a user's state keeps
// it only while its init is live, that user's, and in a cgroup naming the
// container (docs/audit.md, "Whom audit trusts").
#include "node/node_live.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

TEST_F(LiveScan, AUsersLiveContainerCounts) {
  UserState(4343);
  Write("/proc/4343/status", "Uid:\t1001\t1001\t1001\t1001\n");
  Write("/proc/4343/cgroup", "0::/user.slice/user-1001.slice/libpod-userc.scope/container\n");
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc", "userc"}));
}

TEST_F(LiveScan, AUsersStateNamingRootsProcessDoesNotCount) {
  UserState(4343);
  Write("/proc/4343/status", "Uid:\t0\t0\t0\t0\n");
  Write("/proc/4343/cgroup", "0::/user.slice/libpod-userc.scope\n");
  EXPECT_EQ(Ids(), (std::vector<std::string>{"rootc"}));
}

}  // namespace
}  // namespace ocirlimit::node
