// `node install` and `node uninstall` (node_install.cc, node_uninstall.cc)
// over a fake filesystem (tests/testing/fake_host_fs.h): a refusal writes
// nothing, a write that fails midway leaves the mode unrecorded, a removal
// that fails is one line and removes nothing else. The node root is an empty
// real directory, so what the installer reads through NodeOps finds nothing.
#include <gtest/gtest.h>

#include <cerrno>
#include <sstream>

#include "node/node_files.h"
#include "node/node_install.h"
#include "tests/testing/fake_host_fs.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {

using ocirlimit::testing::FakeHostFs;

constexpr const char* kPrograms[] = {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper",
                                     "oci-rlimit"};

class NodeEffects : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_.AddDir(host_);
    for (const char* p : kPrograms) fs_.AddFile(std::string("/src/") + p, p, 0755);
  }
  int Install() {
    InstallArgs a;
    a.host = host_;
    a.source = "/src";
    a.runtime = "crio";
    out_.str("");
    err_.str("");
    return RunInstall(fs_, a, out_, err_);
  }
  int Uninstall() {
    out_.str("");
    err_.str("");
    return RunUninstall(fs_, {host_, false}, out_, err_);
  }
  std::string Node(std::string_view path) const { return host_ + std::string(path); }
  size_t ErrLines() const {
    const std::string e = err_.str();
    return static_cast<size_t>(std::count(e.begin(), e.end(), '\n'));
  }

  testsupport::TempDir dir_;
  std::string host_ = dir_.path();
  FakeHostFs fs_;
  std::ostringstream out_, err_;
};

TEST_F(NodeEffects, InstallAndUninstallGoThroughTheFake) {
  ASSERT_EQ(Install(), 0) << err_.str();
  EXPECT_EQ(fs_.files[Node("/usr/local/bin/oci-rlimit-runtime")].content, "oci-rlimit-runtime");
  EXPECT_EQ(fs_.files[Node("/usr/local/bin/oci-rlimit-runtime")].mode, 0755U);
  EXPECT_TRUE(fs_.Has(Node(kCrioHandler)));
  EXPECT_TRUE(fs_.Has(Node(kStateDir) + "/mode.json"));
  ASSERT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs_.Has(Node("/usr")));
  EXPECT_FALSE(fs_.Has(Node("/var")));
  EXPECT_FALSE(fs_.Has(Node(kCrioHandler)));
}

// node_preflight.cc via node_install.cc: a directory it cannot write is
// refused in one line before anything is written.
TEST_F(NodeEffects, AnUnwritableDirectoryIsRefusedBeforeAnyWrite) {
  fs_.AddDir(Node("/etc/crio/crio.conf.d"));
  fs_.unwritable.insert(Node("/etc/crio/crio.conf.d"));
  EXPECT_EQ(Install(), 1);
  EXPECT_EQ(ErrLines(), 1U) << err_.str();
  EXPECT_NE(err_.str().find("crio.conf.d\": cannot write " + std::string(kCrioHandler) +
                            " there: Permission denied, nothing changed\n"),
            std::string::npos)
      << err_.str();
  EXPECT_TRUE(fs_.changes.empty()) << fs_.changes.front();
}

// node_preflight.cc via node_install.cc: a symlink where the handler goes.
TEST_F(NodeEffects, ASymlinkedTargetIsRefusedBeforeAnyWrite) {
  fs_.AddDir(Node("/etc/crio/crio.conf.d"));
  fs_.links[Node(kCrioHandler)] = "/etc/elsewhere.conf";
  EXPECT_EQ(Install(), 1);
  EXPECT_EQ(ErrLines(), 1U) << err_.str();
  EXPECT_NE(err_.str().find(": a symlink;"), std::string::npos) << err_.str();
  EXPECT_TRUE(fs_.changes.empty()) << fs_.changes.front();
}

// node_install.cc: the drop-in cannot be written (a full disk): one line,
// no empty drop-in left, and the node's mode not recorded (the run did not
// finish; the next one redoes it).
TEST_F(NodeEffects, AConfigWriteThatFailsLeavesTheModeUnrecorded) {
  fs_.fail["replace " + Node(kDropin)] = ENOSPC;
  EXPECT_EQ(Install(), 1);
  EXPECT_EQ(err_.str(),
            "oci-rlimit node: write \"" + Node(kDropin) + "\": No space left on device\n");
  EXPECT_FALSE(fs_.Has(Node(kDropin)));
  EXPECT_FALSE(fs_.Has(Node(kStateDir) + "/mode.json"));
  fs_.fail.clear();
  ASSERT_EQ(Install(), 0) << err_.str();
  EXPECT_TRUE(fs_.Has(Node(kStateDir) + "/mode.json"));
}

// node_uninstall.cc: the handler cannot be removed: one line, exit 1, and
// nothing else removed (the engine must not lose the wrapper it runs).
TEST_F(NodeEffects, AHandlerThatCannotBeRemovedIsOneLineAndNothingElseGoes) {
  ASSERT_EQ(Install(), 0) << err_.str();
  fs_.fail["unlink " + Node(kCrioHandler)] = EACCES;
  const auto before = fs_.files;
  EXPECT_EQ(Uninstall(), 1);
  EXPECT_EQ(err_.str(),
            "oci-rlimit node: remove \"" + Node(kCrioHandler) + "\": Permission denied\n");
  EXPECT_EQ(fs_.files.size(), before.size());
  EXPECT_TRUE(fs_.Has(Node("/usr/local/bin/oci-rlimit-runtime")));
}

}  // namespace
}  // namespace ocirlimit::node
