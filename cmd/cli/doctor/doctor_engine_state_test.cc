// doctor against what the running engine serves (doctor_engine_state.cc):
// an engine started before its config last changed, with no installer
// record (after an uninstall), and a failing handler's running pods.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli/doctor/doctor.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

constexpr const char* kStdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class EngineNode : public testing::FakeFilesT<NodeOps> {
 public:
  std::map<std::string, std::string> versions;
  std::map<std::string, int64_t> mtimes;
  std::optional<std::string> Which(const std::string& name) override {
    return WhichIn(name, kStdPath);
  }
  Result<std::string> Version(const std::string& path) override {
    auto it = versions.find(path);
    if (it == versions.end()) return MakeError("no version");
    return it->second;
  }
  std::optional<FileId> Socket(const std::string& /*path*/) override { return std::nullopt; }
  std::vector<RunningProcess> ProcessesNamed(const std::string& /*comm*/) override { return {}; }
  std::optional<int64_t> ModifiedAt(const std::string& path) override {
    auto it = mtimes.find(path);
    if (it == mtimes.end()) return std::nullopt;
    return it->second;
  }
  void Program(const std::string& path, const std::string& version = "") {
    executables.insert(path);
    if (!version.empty()) versions[path] = version;
  }
};

// A CRI-O node after `install.sh --uninstall`: the handler's drop-in and
// the record are gone; crio.conf.d changed at 2000.
EngineNode CrioAfterUninstall() {
  EngineNode n;
  n.Program("/usr/sbin/runc", "runc version 1.1.5\n");
  n.Program("/usr/bin/crun", "crun version 1.8.1\n");
  n.Program("/usr/bin/crio", "crio version 1.31.13\n");
  n.files["/etc/crio/crio.conf"] = "";
  n.files["/etc/crio/crio.conf.d/10-runc.conf"] =
      "[crio.runtime]\ndefault_runtime = 'runc'\n"
      "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\n";
  n.files["/proc/self/status"] = "CapEff:\t000001ffffffffff\n";
  n.mtimes = {{"/etc/crio/crio.conf", 100},
              {"/etc/crio/crio.conf.d", 2000},
              {"/etc/crio/crio.conf.d/10-runc.conf", 100}};
  return n;
}

DoctorOptions StartedAt(int64_t start) {
  DoctorOptions o;
  o.engine_starts = [start](const std::string&) { return std::vector<int64_t>{start}; };
  return o;
}

std::vector<std::string> Lines(const DoctorReport& r, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& c : r.checks) {
    if (c.what.find(needle) != std::string::npos) {
      out.push_back(std::string(StatusName(c.status)) + " " + c.area + " " + c.what + " @" +
                    c.path + " fix: " + c.advice);
    }
  }
  return out;
}

TEST(EngineState, AfterAnUninstallCrioStillServesTheRemovedHandlerUntilItRestarts) {
  EngineNode n = CrioAfterUninstall();
  const DoctorReport r = RunDoctor(n, StartedAt(1500));
  EXPECT_FALSE(r.ok()) << DoctorText(r);
  EXPECT_EQ(Lines(r, "before its config last changed"),
            std::vector<std::string>{
                "FAIL CRI-O crio started at 1970-01-01 00:25:00 UTC, before its config last "
                "changed (1970-01-01 00:33:20 UTC): until it restarts it serves the handlers it "
                "read then, so a handler removed since (as by oci-rlimit's uninstall) still "
                "takes pods, which fail, and one added since takes none; the checks below read "
                "the files, not what it runs @/etc/crio/crio.conf.d fix: systemctl restart crio"})
      << DoctorText(r);
}

TEST(EngineState, AnEngineStartedAfterTheChangeRunsItsFiles) {
  EngineNode n = CrioAfterUninstall();
  for (int64_t start : {2000, 2500}) {
    const DoctorReport r = RunDoctor(n, StartedAt(start));
    EXPECT_TRUE(r.ok()) << start << "\n" << DoctorText(r);
    EXPECT_TRUE(Lines(r, "before its config last changed").empty()) << start;
  }
}

// An engine doctor cannot see (not running, or its start unreadable) or a
// copy under --root says nothing.
TEST(EngineState, NoRunningEngineSaysNothing) {
  EngineNode n = CrioAfterUninstall();
  EXPECT_TRUE(
      RunDoctor(n, DoctorOptions{.engine_starts =
                                     [](const std::string&) { return std::vector<int64_t>{}; }})
          .ok());
  EXPECT_TRUE(RunDoctor(n, StartedAt(-1)).ok());
  EXPECT_TRUE(RunDoctor(n, DoctorOptions{.rooted = true}).ok());
}

// While the installer's record names the pending restart, its own line says it.
TEST(EngineState, TheInstallersPendingRestartIsSaidOnce) {
  EngineNode n = CrioAfterUninstall();
  n.files["/var/lib/oci-rlimit/node-install/restart"] = "crio 1800\n";
  const DoctorReport r = RunDoctor(n, StartedAt(1500));
  EXPECT_TRUE(Lines(r, "before its config last changed").empty()) << DoctorText(r);
  EXPECT_EQ(Lines(r, "restart pending").size(), 1U) << DoctorText(r);
}

TEST(EngineState, ContainerdStartedBeforeItsConfigWasRewritten) {
  EngineNode n;
  n.Program("/usr/sbin/runc", "runc version 1.1.5\n");
  n.Program("/usr/bin/containerd", "containerd github.com/containerd/containerd/v2 v2.1.9 x\n");
  n.files["/etc/containerd/config.toml"] = "version = 3\n";
  n.files["/proc/self/status"] = "CapEff:\t000001ffffffffff\n";
  n.mtimes = {{"/etc/containerd/config.toml", 3000}};
  const DoctorReport r = RunDoctor(n, StartedAt(2999));
  ASSERT_EQ(Lines(r, "before its config last changed").size(), 1U) << DoctorText(r);
  EXPECT_NE(Lines(r, "before its config last changed")[0].find(
                "@/etc/containerd/config.toml fix: systemctl restart containerd"),
            std::string::npos);
}

// The --nvidia handler after NVIDIA's toolkit was removed: its FAIL names
// the pods that still run and the way out.
TEST(EngineState, ABrokenChainsFailNamesItsRunningPods) {
  EngineNode n = CrioAfterUninstall();
  n.Program("/usr/bin/oci-rlimit-runtime");
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlock=unlimited']\n";
  n.files["/etc/oci-rlimit/config.d/50-installer.toml"] =
      "[runtime]\nruntimes = ['/usr/local/nvidia/toolkit/nvidia-container-runtime']\n";
  n.files["/etc/crio/crio.conf.d/99-oci-rlimit.conf"] =
      "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = '/usr/bin/oci-rlimit-runtime'\n";
  DoctorOptions o = StartedAt(2500);
  o.handler_pods = [](const std::string& area, const std::string& handler) {
    if (area != "CRI-O" || handler != "oci-rlimit") return std::vector<std::string>{};
    return std::vector<std::string>{"default/gpu (0123456789ab)"};
  };
  const DoctorReport r = RunDoctor(n, o);
  const auto lines = Lines(r, "fail to start");
  ASSERT_EQ(lines.size(), 1U) << DoctorText(r);
  EXPECT_NE(lines[0].find("pods with runtimeClassName oci-rlimit fail to start; 1 still run "
                          "(default/gpu (0123456789ab)): oci-rlimit-runtime stops and removes "
                          "them through runc or crun, so drain them (kubectl delete pod), or put "
                          "the missing runtime back (or rerun oci-rlimit node install "
                          "--no-nvidia) to exec into them"),
            std::string::npos)
      << lines[0];
  o.handler_pods = [](const std::string&, const std::string&) {
    return std::vector<std::string>{};
  };
  const auto none = Lines(RunDoctor(n, o), "fail to start");
  ASSERT_EQ(none.size(), 1U);
  EXPECT_EQ(none[0].find("still run"), std::string::npos) << none[0];
}

}  // namespace
}  // namespace ocirlimit
