// The installer on a CRI-O node (issue 37), on a node root in a temporary
// directory: the handler it writes carries the base handler's monitor
// fields, a config crio would not start with is refused with the node
// unchanged, and uninstall keeps the handler while CRI-O's pods of it remain
// (found in CRI-O's storage, node_crio_pods.h). tests/crio proves each on a
// real crio 1.31.13.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "node/node_install.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {
namespace fs = std::filesystem;

constexpr const char* kHandlerFile = "/etc/crio/crio.conf.d/99-oci-rlimit.conf";

class CrioInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = dir_.path() + "/host";
    src_ = dir_.path() + "/src";
    for (const char* p :
         {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper", "oci-rlimit"}) {
      Write(src_ + "/" + p, std::string("#!/bin/sh\n# ") + p + "\n");
    }
  }
  static void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Every file under the node root, with its bytes.
  std::map<std::string, std::string> Node() const {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(host_)) {
      out[e.path().string()] = e.is_regular_file() ? Read(e.path()) : "<dir>";
    }
    return out;
  }
  int Install() {
    InstallArgs a;
    a.runtime = "crio";
    a.host = host_;
    a.source = src_;
    out_.str("");
    err_.str("");
    return RunInstall(a, out_, err_);
  }
  int Uninstall(bool force = false) {
    out_.str("");
    err_.str("");
    return RunUninstall({host_, force}, out_, err_);
  }
  // A pod of handler `handler` as CRI-O 1.31 keeps it in storage `root`.
  void Pod(const std::string& root, const std::string& id, const std::string& handler) {
    Write(host_ + root + "/overlay-containers/" + id + "/userdata/config.json",
          R"({"annotations":{"io.kubernetes.cri-o.ContainerType":"sandbox",)"
          R"("io.kubernetes.cri-o.RuntimeHandler":")" +
              handler +
              R"(","io.kubernetes.pod.namespace":"ns","io.kubernetes.pod.name":"kept"}})");
  }

  testsupport::TempDir dir_;
  std::string host_, src_;
  std::ostringstream out_, err_;
};

const std::string kCgroupfs =
    "[crio.runtime]\ncgroup_manager = 'cgroupfs'\ndefault_runtime = 'runc'\n"
    "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\n"
    "monitor_path = '/usr/bin/conmon'\nmonitor_cgroup = 'pod'\n"
    "[crio.runtime.runtimes.crun]\nmonitor_cgroup = 'pod'\n";

// A cgroupfs node whose handlers set monitor_cgroup = "pod" with no global
// conmon_cgroup: ours copies the default handler's monitor fields.
TEST_F(CrioInstall, TheHandlerCopiesTheBaseHandlersMonitorFields) {
  Write(host_ + "/etc/crio/crio.conf", kCgroupfs);
  ASSERT_EQ(Install(), 0) << err_.str();
  const std::string ours = Read(host_ + kHandlerFile);
  EXPECT_NE(ours.find("monitor_cgroup = 'pod'"), std::string::npos) << ours;
  EXPECT_NE(ours.find("monitor_path = '/usr/bin/conmon'"), std::string::npos) << ours;
}

// A config crio would refuse at start is refused before any write.
TEST_F(CrioInstall, AConfigCrioWouldRefuseLeavesTheNodeUnchanged) {
  Write(host_ + "/etc/crio/crio.conf", kCgroupfs);
  Write(host_ + "/etc/crio/crio.conf.d/10-kata.conf",
        "[crio.runtime.runtimes.kata]\nmonitor_cgroup = 'system.slice'\n");
  const auto before = Node();
  EXPECT_EQ(Install(), 1);
  EXPECT_EQ(Node(), before) << out_.str();
  const std::string e = err_.str();
  EXPECT_NE(e.find("[crio.runtime.runtimes.kata] monitor_cgroup is \"system.slice\""),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), e.size() - 1) << "one line: " << e;
}

// With no monitor_cgroup anywhere, CRI-O makes it system.slice: a cgroupfs
// node needs the global conmon_cgroup, which covers ours too.
TEST_F(CrioInstall, AGlobalConmonCgroupCoversOurHandler) {
  Write(host_ + "/etc/crio/crio.conf",
        "[crio.runtime]\ncgroup_manager = 'cgroupfs'\nconmon_cgroup = 'pod'\n");
  ASSERT_EQ(Install(), 0) << err_.str();
  Write(host_ + "/etc/crio/crio.conf", "[crio.runtime]\ncgroup_manager = 'cgroupfs'\n");
  EXPECT_EQ(Install(), 1);
  EXPECT_NE(err_.str().find("is unset (CRI-O makes it \"system.slice\")"), std::string::npos)
      << err_.str();
}

// Uninstall keeps the wrapper and the handler's drop-in while a CRI-O pod of
// the handler exists in the storage crio.conf names, then removes them.
TEST_F(CrioInstall, UninstallKeepsTheHandlerWhileACrioPodOfItRemains) {
  Write(host_ + "/etc/crio/crio.conf", "[crio]\nroot = '/store'\n");
  ASSERT_EQ(Install(), 0) << err_.str();
  Pod("/store", "0123456789abcdef", "oci-rlimit");
  Pod("/store", "fedcba9876543210", "runc");
  EXPECT_EQ(Uninstall(), 3);
  EXPECT_TRUE(fs::exists(host_ + kHandlerFile));
  EXPECT_TRUE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-runtime"));
  const std::string e = err_.str();
  EXPECT_NE(e.find("1 CRI-O pod(s) of handler oci-rlimit still exist (ns/kept (0123456789ab))"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(kHandlerFile), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), e.size() - 1) << "one line: " << e;
  // The pod gone, the rest goes.
  fs::remove_all(host_ + "/store/overlay-containers/0123456789abcdef");
  EXPECT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + kHandlerFile));
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-runtime"));
}

// A refused uninstall removes no file (the CLI, the record, the programs),
// so the same command finishes once the pods are gone; that run names the
// engine that still serves the removed handler until it restarts.
TEST_F(CrioInstall, ARefusedUninstallIsFinishedByTheSameCommand) {
  Write(host_ + "/etc/crio/crio.conf", "[crio]\nroot = '/store'\n");
  ASSERT_EQ(Install(), 0) << err_.str();
  Pod("/store", "0123456789abcdef", "oci-rlimit");
  const auto before = Node();
  EXPECT_EQ(Uninstall(), 3);
  EXPECT_EQ(Node(), before) << out_.str() << err_.str();
  EXPECT_TRUE(fs::exists(host_ + "/usr/local/bin/oci-rlimit"));
  EXPECT_EQ(out_.str().find("must restart"), std::string::npos) << out_.str();
  fs::remove_all(host_ + "/store/overlay-containers/0123456789abcdef");
  EXPECT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin/oci-rlimit"));
  EXPECT_FALSE(fs::exists(host_ + "/var/lib/oci-rlimit"));
  EXPECT_NE(out_.str().find("plan restart=crio\ncrio must restart: until then it still serves "
                            "the removed handler oci-rlimit"),
            std::string::npos)
      << out_.str();
}

}  // namespace
}  // namespace ocirlimit::node
