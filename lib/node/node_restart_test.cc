// The restart memory's proof (node_restart.h): which processes named like
// the engine count as the node's engine. A user's rootless containerd, one
// in a pod's PID namespace and one with another --config are not it
// (issue 39 finding 5), nor a root one in its own mount namespace or
// running an executable someone else may write: they never keep a restart
// pending.
#include "node/node_restart.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "tests/testing/case_name.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit::node {
namespace {

class FakeProcs : public testing::FakeFilesT<NodeOps> {
 public:
  std::multimap<std::string, RunningProcess> processes;
  std::optional<std::string> Which(const std::string&) override { return std::nullopt; }
  Result<std::string> Version(const std::string&) override { return MakeError("none"); }
  std::optional<FileId> Socket(const std::string&) override { return std::nullopt; }
  std::vector<RunningProcess> ProcessesNamed(const std::string& comm) override {
    std::vector<RunningProcess> out;
    for (auto [it, end] = processes.equal_range(comm); it != end; ++it) out.push_back(it->second);
    return out;
  }
};

constexpr int64_t kBoot = 1700000000;

// /proc/PID/stat with starttime (field 22) `seconds` after boot.
std::string Stat(int pid, const std::string& comm, int64_t seconds) {
  return std::to_string(pid) + " (" + comm + ") S 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " +
         std::to_string(seconds * sysconf(_SC_CLK_TCK)) + " 0 0\n";
}

struct EngineCase {
  std::string name;
  std::string engine;
  RunningProcess process;
  bool counted = false;
};
void PrintTo(const EngineCase& c, std::ostream* os) { *os << c.name; }

RunningProcess Proc(std::vector<std::string> argv, bool root, bool host_pid) {
  RunningProcess p;
  p.pid = 100;
  p.argv = std::move(argv);
  p.root_uid = root;
  p.host_pid_namespace = host_pid;
  p.node_mount_namespace = true;
  p.exe_root_owned = true;
  p.exe_dir_root_owned = true;
  return p;
}

RunningProcess With(RunningProcess p, bool RunningProcess::*fact, bool value) {
  p.*fact = value;
  return p;
}

class EngineProcesses : public ::testing::TestWithParam<EngineCase> {};

TEST_P(EngineProcesses, OnlyTheNodesEngineCounts) {
  const EngineCase& c = GetParam();
  FakeProcs ops;
  ops.files["/proc/stat"] = "cpu 1 2 3\nbtime " + std::to_string(kBoot) + "\n";
  ops.files["/proc/100/stat"] = Stat(100, c.engine, 50);
  ops.processes.emplace(c.engine, c.process);
  const std::vector<int64_t> got = EngineStartTimes(ops, c.engine);
  EXPECT_EQ(got, c.counted ? std::vector<int64_t>{kBoot + 50} : std::vector<int64_t>{});
}

INSTANTIATE_TEST_SUITE_P(
    NodeRestart, EngineProcesses,
    ::testing::Values(
        EngineCase{"RootsContainerd", "containerd", Proc({"/usr/bin/containerd"}, true, true),
                   true},
        EngineCase{"WithTheNodesConfig", "containerd",
                   Proc({"containerd", "--config", "/etc/containerd/config.toml"}, true, true),
                   true},
        EngineCase{"AUsersContainerd", "containerd", Proc({"containerd"}, false, true), false},
        EngineCase{"OneInItsOwnPidNamespace", "containerd", Proc({"containerd"}, true, false),
                   false},
        EngineCase{"AnotherConfig", "containerd",
                   Proc({"containerd", "--config", "/var/run/docker/containerd.toml"}, true, true),
                   false},
        EngineCase{"RootsCrio", "crio", Proc({"/usr/bin/crio"}, true, true), true},
        EngineCase{"AUsersCrio", "crio", Proc({"crio"}, false, true), false},
        EngineCase{"ACrioInAPod", "crio", Proc({"crio"}, true, false), false},
        // A hostPID pod's root crio: its own mounts, or an executable or a
        // directory someone else may write, are not the node's.
        EngineCase{"ACrioInItsOwnMountNamespace", "crio",
                   With(Proc({"crio"}, true, true), &RunningProcess::node_mount_namespace, false),
                   false},
        EngineCase{"AnExecutableRootDoesNotOwnAlone", "crio",
                   With(Proc({"crio"}, true, true), &RunningProcess::exe_root_owned, false), false},
        EngineCase{
            "InADirectoryRootDoesNotOwnAlone", "containerd",
            With(Proc({"containerd"}, true, true), &RunningProcess::exe_dir_root_owned, false),
            false}),
    CaseName{});

// The node's namespaces from the links' text: its init's; where that link
// cannot be read, the caller's only on the node's own root (a sandbox hiding
// pid 1), never under a fixture root; an unreadable link is no namespace.
TEST(NodeNamespaces, TheInitsThenTheCallersOnItsOwnRootOnly) {
  EXPECT_EQ(NodePidNamespace("pid:[1]", "pid:[9]", true), "pid:[1]");
  EXPECT_EQ(NodePidNamespace("pid:[1]", "pid:[9]", false), "pid:[1]");
  EXPECT_EQ(NodePidNamespace("", "pid:[9]", true), "pid:[9]");
  EXPECT_EQ(NodePidNamespace("", "pid:[9]", false), "");
  EXPECT_TRUE(InNamespace("pid:[1]", "pid:[1]"));
  EXPECT_FALSE(InNamespace("pid:[9]", "pid:[1]"));
  EXPECT_FALSE(InNamespace("", ""));
  EXPECT_FALSE(InNamespace("", "pid:[1]"));
  EXPECT_FALSE(InNamespace("pid:[1]", ""));
  EXPECT_TRUE(NodeMountNamespace("mnt:[1]", "mnt:[1]"));
  EXPECT_FALSE(NodeMountNamespace("mnt:[2]", "mnt:[1]"));
  EXPECT_FALSE(NodeMountNamespace("", "mnt:[1]"));
  EXPECT_TRUE(NodeMountNamespace("mnt:[2]", ""));  // cannot be told: the other facts decide
}

}  // namespace
}  // namespace ocirlimit::node
