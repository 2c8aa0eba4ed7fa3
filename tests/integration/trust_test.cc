// Root trusts only root (docs/audit.md, "Whom audit trusts"), against the
// real programs: a state root that the unprivileged test user
// (oci-rlimit-test) made with setpriv never steers `audit --heal` at root's
// process, never makes root follow a symlink, and never supplies node facts;
// a sandbox mark that two keys dispute does not hide a real runc container.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kM = uint64_t{1} << 20;

std::string StartTime(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && in >> field; ++i) {
  }
  return field;
}

std::optional<Limit> MemlockOf(pid_t pid) {
  return LimitRow(ReadFile("/proc/" + std::to_string(pid) + "/limits"), kMemlock);
}

class UserRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("setpriv", "prlimit");
    const passwd* pw = getpwnam("oci-rlimit-test");
    if (pw == nullptr || geteuid() != 0) GTEST_SKIP() << "needs root and the user oci-rlimit-test";
    uid_ = pw->pw_uid;
    ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
    Sh("mkdir -p " + root() + " && chown " + std::to_string(uid_) + " " + root());
    WriteFile(config(),
              "rlimits = [\"memlock=4M\"]\n[[rule]]\nname = \"gpu\"\n"
              "rlimits = [\"memlock=64M\"]\n[rule.match]\ndevices = [\"/dev/nvidia*\"]\n");
  }
  void TearDown() override {
    for (pid_t p : pids_) kill(p, SIGKILL);
  }
  std::string root() const { return dir_ / "userroot"; }
  std::string config() const { return dir_ / "config.toml"; }
  // `script` as the test user, its groups cleared.
  CmdResult AsUser(const std::string& script) {
    const std::string id = std::to_string(uid_);
    return RunCmd(
        {"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "sh", "-c", script});
  }
  // A sleeping process under `prefix` (e.g. setpriv ... or prlimit ...).
  pid_t Sleeper(const std::string& prefix) {
    CmdResult r = Sh(prefix + " sleep 1000 >/dev/null 2>&1 & echo $!");
    const pid_t pid = std::stoi(r.out);
    pids_.push_back(pid);
    for (int i = 0; i < 100 && ReadFile("/proc/" + std::to_string(pid) + "/comm") != "sleep\n";
         ++i) {
      usleep(10000);
    }
    return pid;
  }
  // The user's forged runc state naming `pid`, and a bundle of theirs.
  void Forge(const std::string& id, pid_t pid, const std::string& config_json) {
    const std::string dir = root() + "/" + id;
    const std::string state = R"({"id":")" + id + R"(","init_process_pid":)" + std::to_string(pid) +
                              R"(,"init_process_start":)" + StartTime(pid) +
                              R"(,"config":{"labels":["bundle=)" + dir + R"("]}})";
    CmdResult r = AsUser("mkdir -p " + dir + " && printf '%s' '" + state + "' > " + dir +
                         "/state.json && " + config_json);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  CmdResult Audit(bool heal) {
    std::vector<std::string> argv = {
        OurBinary("oci-rlimit"), "audit",          "--config", config(),
        "--no-default-roots",    "--runtime-root", root()};
    if (heal) argv.push_back("--heal");
    return RunCmd(argv);
  }

  TempDir dir_;
  uid_t uid_ = 0;
  std::vector<pid_t> pids_;
};

// HIGH: a user's state names root's process; --heal never touches it.
TEST_F(UserRoot, NeverStearsTheHealAtRootsProcess) {
  const pid_t victim = Sleeper("prlimit --memlock=8388608:8388608");
  ASSERT_EQ(MemlockOf(victim), (Limit{8 * kM, 8 * kM}));
  const std::string spec = R"({"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]}})";
  Forge("innocent", victim, "printf '%s' '" + spec + "' > " + root() + "/innocent/config.json");
  CmdResult r = Audit(true);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("unproven: its state is uid " + std::to_string(uid_)), std::string::npos)
      << r.out;
  EXPECT_EQ(MemlockOf(victim), (Limit{8 * kM, 8 * kM}));
}

// HIGH: forged node facts (a GPU device) are not believed for the user's own
// process, and a user's state proves nothing to root: not judged, no heal.
TEST_F(UserRoot, ForgedNodeFactsAreNotBelieved) {
  const std::string id = std::to_string(uid_);
  const pid_t own = Sleeper("setpriv --reuid=" + id + " --regid=" + id +
                            " --clear-groups prlimit --memlock=1048576:8388608");
  const std::string spec =
      R"({"ociVersion":"1.0.2","linux":{"devices":[{"path":"/dev/nvidia0","type":"c","major":195,"minor":0}]}})";
  Forge("gpu", own, "printf '%s' '" + spec + "' > " + root() + "/gpu/config.json");
  CmdResult r = Audit(true);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("67108864"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unproven"), std::string::npos) << r.out;
  EXPECT_EQ(MemlockOf(own), (Limit{1 * kM, 8 * kM}));
}

// HIGH: the review's forgery. The user's own sleep, its state named after
// the sleep's own cgroup (a component the user's process is in, here
// /process_api/... under cgroup v1's memory hierarchy), the shim's
// options.json in its bundle a FIFO with the user's writer parked on it:
// root's audit --heal makes no prlimit(2) call that sets a limit on it
// (strace: root here lacks CAP_SYS_RESOURCE, so only the attempt can show),
// gives no verdict as a container, and never opens the FIFO.
TEST_F(UserRoot, ACgroupNamedAfterTheIdProvesNothing) {
  OCI_RLIMIT_REQUIRE("strace");
  const std::string id = std::to_string(uid_);
  const pid_t own = Sleeper("setpriv --reuid=" + id + " --regid=" + id +
                            " --clear-groups prlimit --memlock=1048576:8388608");
  std::string cg;
  for (std::istringstream lines(ReadFile("/proc/" + std::to_string(own) + "/cgroup"));
       std::getline(lines, cg);) {
    if (cg.find(":memory:") != std::string::npos || cg.starts_with("0::")) break;
  }
  std::string name = cg.substr(cg.rfind('/') + 1);
  if (name.empty()) name = "sleeper";
  const std::string dir = root() + "/" + name;
  const std::string spec = R"({"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]}})";
  Forge(name, own,
        "printf '%s' '" + spec + "' > " + dir + "/config.json && mkfifo " + dir +
            "/options.json && { (echo '{}' > " + dir + "/options.json; touch " + root() +
            "/opened) >/dev/null 2>&1 & }");
  const std::string trace = dir_ / "strace.txt";
  std::vector<std::string> argv = {"strace",          "-f",       "-qq",    "-e",
                                   "trace=prlimit64", "-o",       trace,    OurBinary("oci-rlimit"),
                                   "audit",           "--config", config(), "--no-default-roots",
                                   "--runtime-root",  root(),     "--heal"};
  CmdResult r = RunCmd(argv);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("unproven: its state is uid " + id), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("heal failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("missing"), std::string::npos) << r.out;
  const std::string calls = ReadFile(trace);
  EXPECT_EQ(calls.find("prlimit64(" + std::to_string(own) + ", RLIMIT_MEMLOCK, {"),
            std::string::npos)
      << calls;
  EXPECT_FALSE(fs::exists(root() + "/opened")) << "root opened the user's FIFO";
  EXPECT_EQ(MemlockOf(own), (Limit{1 * kM, 8 * kM}));
  // Let the parked writer go.
  const int release = open((dir + "/options.json").c_str(), O_RDONLY | O_NONBLOCK);
  if (release >= 0) close(release);
}

// HIGH: root never follows the user's symlinked config.json into a
// root-only file.
TEST_F(UserRoot, NeverFollowsASymlinkedConfig) {
  const std::string secret = dir_ / "secret.json";
  WriteFile(secret, R"({"ociVersion":"1.0.2","annotations":{"s":"ROOT-ONLY-SECRET"}})");
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const pid_t victim = Sleeper("prlimit --memlock=8388608:8388608");
  Forge("linked", victim, "ln -s " + secret + " " + root() + "/linked/config.json");
  CmdResult r = Audit(false);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unproven"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ROOT-ONLY-SECRET"), std::string::npos) << r.out;
}

// MEDIUM: under runc with a root of its own (either key counts there), a
// container whose two sandbox keys disagree is a workload: judged, healed.
TEST(SandboxMark, DisagreeingKeysDoNotHideARuncContainer) {
  OCI_RLIMIT_REQUIRE("runc", "prlimit");
  TempDir dir;
  const std::string root = dir / "state", bundle = dir / "b", cfg = dir / "config.toml";
  WriteFile(cfg, "rlimits = [\"memlock=4M:4M\"]\n");
  Json spec = MakeBundle(bundle, {"sleep", "1000"});
  spec["annotations"] = Json{{"io.kubernetes.cri.container-type", "container"},
                             {"io.kubernetes.cri-o.ContainerType", "sandbox"}};
  WriteSpec(bundle, spec);
  const std::string id = UniqueId("forged");
  CmdResult run = Sh("prlimit --memlock=1048576:8388608 runc --root " + root + " run -d --bundle " +
                     bundle + " " + id + " </dev/null >/dev/null 2>&1");
  ASSERT_EQ(run.status, 0) << run.err;
  CmdResult r = RunCmd({OurBinary("oci-rlimit"), "audit", "--config", cfg, "--no-default-roots",
                        "--runtime-root", root, "--heal", "--no-trunc"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("missing  " + id), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pod sandbox"), std::string::npos) << r.out;
  CmdResult inside = RunCmd({"runc", "--root", root, "exec", id, "cat", "/proc/1/limits"});
  EXPECT_EQ(LimitRow(inside.out, kMemlock), (Limit{4 * kM, 4 * kM})) << inside.out;
  RunCmd({"runc", "--root", root, "delete", "-f", id});
}

}  // namespace
}  // namespace ocirlimit::itest
