// CRI-O's pods of a handler, from a directory tree laid out as CRI-O 1.31.13
// leaves its storage (tests/crio saw it): a sandbox's userdata/config.json
// names the pod's handler; a workload container's names none.
#include "node/node_crio_pods.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "formats/text.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {

namespace fs = std::filesystem;
constexpr const char* kStorage = "/var/lib/containers/storage";

class CrioPods : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: only root's storage counts";
  }
  void Config(const std::string& driver, const std::string& id, const std::string& annotations) {
    const std::string dir =
        Cat(host.path(), kStorage, "/", driver, "-containers/", id, "/userdata");
    fs::create_directories(dir);
    std::ofstream(dir + "/config.json")
        << R"({"ociVersion":"1.0.2","annotations":{)" << annotations << "}}";
  }
  static std::string Sandbox(const std::string& handler, const std::string& name) {
    return R"("io.kubernetes.cri-o.ContainerType":"sandbox","io.kubernetes.cri-o.RuntimeHandler":")" +
           handler + R"(","io.kubernetes.pod.namespace":"default","io.kubernetes.pod.name":")" +
           name + R"(")";
  }
  std::vector<std::string> Found() {
    std::vector<std::string> out;
    for (const auto& p : CrioHandlerPods(LinuxFsOps(), host.path(), kStorage, {"oci-rlimit"})) {
      out.push_back(p.id + " " + p.name);
    }
    return out;
  }
  testsupport::TempDir host{"crio-pods"};
};

TEST_F(CrioPods, FindsTheHandlersSandboxesOnly) {
  Config("overlay", "aaa", Sandbox("oci-rlimit", "kept"));
  Config("overlay", "bbb", Sandbox("runc", "plain"));
  Config("overlay", "ccc", Sandbox("", "default-handler"));
  // A workload container: no RuntimeHandler in its config.json.
  Config("overlay", "ddd", R"("io.kubernetes.cri-o.ContainerType":"container")");
  // A workload container that names the handler is no pod.
  Config(
      "overlay", "eee",
      R"("io.kubernetes.cri-o.ContainerType":"container","io.kubernetes.cri-o.RuntimeHandler":"oci-rlimit")");
  Config("vfs", "fff", Sandbox("oci-rlimit", "on-vfs"));
  EXPECT_EQ(Found(), (std::vector<std::string>{"aaa default/kept", "fff default/on-vfs"}));
}

TEST_F(CrioPods, NoStorageIsNoPods) { EXPECT_TRUE(Found().empty()); }

TEST_F(CrioPods, AUsersFileIsNoPod) {
  Config("overlay", "aaa", Sandbox("oci-rlimit", "forged"));
  const std::string file =
      Cat(host.path(), kStorage, "/overlay-containers/aaa/userdata/config.json");
  ASSERT_EQ(chown(file.c_str(), 1001, 1001), 0);
  EXPECT_TRUE(Found().empty());
}

// Only CRI-O's DRIVER-containers directories hold containers: a sandbox's
// config.json in any other directory of the storage is no pod.
TEST_F(CrioPods, OnlyADriversContainersDirectoryIsLookedIn) {
  for (const char* dir : {"overlay-layers", "overlay-images", "overlay", "containers-x"}) {
    const std::string at = Cat(host.path(), kStorage, "/", dir, "/aaa/userdata");
    fs::create_directories(at);
    std::ofstream(at + "/config.json")
        << R"({"ociVersion":"1.0.2","annotations":{)" << Sandbox("oci-rlimit", dir) << "}}";
  }
  EXPECT_TRUE(Found().empty());
}

// A tree a user owns whole (its one owner, so ReadTrusted's own rule holds)
// is still no pod: only root's storage counts.
TEST_F(CrioPods, AUsersWholeTreeIsNoPod) {
  Config("overlay", "aaa", Sandbox("oci-rlimit", "forged"));
  std::string path = host.path() + kStorage;
  for (const char* part : {"", "/overlay-containers", "/aaa", "/userdata", "/config.json"}) {
    path += part;
    ASSERT_EQ(chown(path.c_str(), 1001, 1001), 0) << path;
  }
  EXPECT_TRUE(Found().empty());
}

TEST_F(CrioPods, ListsThemByNameAndShortId) {
  EXPECT_EQ(CrioPodList({{"0123456789abcdef", "default/kept"}, {"fedcba9876543210", ""}}),
            "default/kept (0123456789ab), fedcba987654");
}

}  // namespace
}  // namespace ocirlimit::node
