// oci-rlimit audit under real runc: two containers under one state root,
// one started with the hook and one without. audit names the second, --heal
// gives its init the policy's limit (as the container itself reads it), and
// audit is then clean. A container whose init exited, and a state file whose
// PID now belongs to another process, are unknown and never touched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;
// The runtime starts under memlock 1M:8M, so a container without the hook
// has a soft limit lower than the policy's 4M and a hard one higher: missing.
// The heal raises the soft limit up to the hard one and lowers the hard one,
// which needs no CAP_SYS_RESOURCE.
const std::vector<std::string> kLowSoft = {"prlimit", "--memlock=1048576:8388608"};

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc", "prlimit");
    WriteFile(config(), "rlimits = [\"memlock=4M:4M\"]\nlog-file = \"" + log() + "\"\n");
  }
  void TearDown() override {
    for (const auto& id : ids_) RunCmd({"runc", "--root", root(), "delete", "-f", id});
  }
  std::string root() const { return dir_ / "state"; }
  std::string config() const { return dir_ / "config.toml"; }
  std::string log() const { return dir_ / "audit.log"; }

  // Starts `args` detached under runc (stdio on /dev/null, so nothing waits
  // on the container); with_hook adds oci-rlimit-hook at createRuntime.
  std::string Start(const std::string& name, const std::vector<std::string>& args, bool with_hook) {
    const std::string bundle = dir_ / name;
    Json spec = MakeBundle(bundle, args);
    if (with_hook) {
      spec["hooks"]["createRuntime"] =
          Json::array({HookEntry(OurBinary("oci-rlimit-hook"),
                                 {"oci-rlimit-hook", "--config", config(), "createRuntime"})});
    }
    WriteSpec(bundle, spec);
    const std::string id = UniqueId(name);
    ids_.push_back(id);
    std::string cmd;
    for (const auto& a : kLowSoft) cmd += a + " ";
    cmd += "runc --root " + root() + " run -d --bundle " + bundle + " " + id +
           " </dev/null >/dev/null 2>" + bundle + "/run.err";
    CmdResult r = Sh(cmd);
    EXPECT_EQ(r.status, 0) << ReadFile(bundle + "/run.err");
    return id;
  }

  // What the container's own processes read of its init's limits.
  std::optional<Limit> InitMemlockSeenInside(const std::string& id) {
    CmdResult r = RunCmd({"runc", "--root", root(), "exec", id, "cat", "/proc/1/limits"});
    EXPECT_EQ(r.status, 0) << r.err;
    return LimitRow(r.out, kMemlock);
  }

  CmdResult Audit(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        OurBinary("oci-rlimit"), "audit", "--config",          config(),
        "--runtime-root",        root(),  "--no-default-roots"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCmd(argv);
  }

  static const Json* Entry(const Json& report, const std::string& id) {
    for (const auto& c : report["containers"]) {
      if (c["id"] == id) return &c;
    }
    return nullptr;
  }

  TempDir dir_;
  std::vector<std::string> ids_;
};

TEST_F(AuditTest, NamesTheContainerWithoutTheHookAndHealsIt) {
  const std::string hooked = Start("hooked", {"sleep", "1000"}, true);
  const std::string plain = Start("plain", {"sleep", "1000"}, false);
  ASSERT_EQ(InitMemlockSeenInside(hooked), (Limit{4 * kM, 4 * kM}));
  ASSERT_EQ(InitMemlockSeenInside(plain), (Limit{1 * kM, 8 * kM}));

  CmdResult before = Audit({"--json"});
  EXPECT_EQ(before.status, 1) << before.out << before.err;
  Json report = Json::parse(before.out);
  ASSERT_EQ(report["containers"].size(), 2u) << before.out;
  ASSERT_NE(Entry(report, hooked), nullptr);
  ASSERT_NE(Entry(report, plain), nullptr);
  EXPECT_EQ((*Entry(report, hooked))["status"], "ok") << before.out;
  EXPECT_EQ((*Entry(report, plain))["status"], "missing") << before.out;
  EXPECT_EQ((*Entry(report, plain))["runtime"], "runc");

  CmdResult table = Audit();
  EXPECT_EQ(table.status, 1);
  EXPECT_NE(table.out.find("missing  " + plain.substr(0, 12) + " "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("ok       " + hooked.substr(0, 12) + " "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("scope: every container: no installer record"), std::string::npos)
      << "this machine has no installer record: " << table.out;
  CmdResult whole = Audit({"--no-trunc"});
  EXPECT_NE(whole.out.find("missing  " + plain + " "), std::string::npos) << whole.out;

  CmdResult heal = Audit({"--heal"});
  EXPECT_EQ(heal.status, 0) << heal.out << heal.err;
  EXPECT_NE(heal.out.find("exec sessions started later"), std::string::npos) << heal.out;
  EXPECT_EQ(InitMemlockSeenInside(plain), (Limit{4 * kM, 4 * kM}));
  EXPECT_EQ(InitMemlockSeenInside(hooked), (Limit{4 * kM, 4 * kM}));
  const std::string logged = ReadFile(log());
  EXPECT_NE(logged.find("id=\"" + plain + "\""), std::string::npos) << logged;
  EXPECT_NE(logged.find("via=\"audit\" memlock 1048576:8388608->4194304:4194304"),
            std::string::npos)
      << logged;
  // The hook logged the hooked one's start; audit logged only the heal.
  size_t audit_lines = 0;
  for (size_t at = 0; (at = logged.find("via=\"audit\"", at)) != std::string::npos; ++at) {
    ++audit_lines;
  }
  EXPECT_EQ(audit_lines, 1u) << logged;

  CmdResult after = Audit();
  EXPECT_EQ(after.status, 0) << after.out << after.err;
}

TEST_F(AuditTest, InitExitedIsUnknownAndAReusedPidIsNeverTouched) {
  const std::string exited = Start("exited", {"true"}, false);
  // runc keeps a stopped container's state until `runc delete`.
  for (int i = 0; i < 100; ++i) {
    CmdResult st = RunCmd({"runc", "--root", root(), "state", exited});
    if (st.out.find("\"stopped\"") != std::string::npos) break;
    usleep(20000);
  }
  // A second state dir copied from it, whose PID now names another live
  // process (started later, so with another start time): a reused PID.
  CmdResult other =
      Sh("prlimit --memlock=1048576:8388608 sleep 1000 </dev/null >/dev/null 2>&1 & echo $!");
  ASSERT_EQ(other.status, 0);
  const std::string other_pid = other.out.substr(0, other.out.find('\n'));
  // `$!` names prlimit, which sets its limit and then execs sleep: wait until
  // the limit is in place, so the process audit meets is the one asserted on.
  const std::string other_limits = "/proc/" + other_pid + "/limits";
  for (int i = 0; i < 250; ++i) {
    if (LimitRow(ReadFile(other_limits), kMemlock) == (Limit{1 * kM, 8 * kM})) break;
    usleep(20000);
  }
  Json state = Json::parse(ReadFile(root() + "/" + exited + "/state.json"));
  state["init_process_pid"] = std::stoi(other_pid);
  ASSERT_EQ(RunCmd({"mkdir", root() + "/reused"}).status, 0);
  WriteFile(root() + "/reused/state.json", state.dump());

  CmdResult heal = Audit({"--json", "--heal"});
  // Read before the kill: once it exits, its /proc entry goes with it.
  const std::string limits_after = ReadFile(other_limits);
  RunCmd({"kill", other_pid});
  EXPECT_EQ(heal.status, 1) << heal.out << heal.err;
  Json report = Json::parse(heal.out);
  const Json* gone = Entry(report, exited);
  const Json* reused = Entry(report, "reused");
  ASSERT_NE(gone, nullptr) << heal.out;
  ASSERT_NE(reused, nullptr) << heal.out;
  EXPECT_EQ((*gone)["status"], "unknown");
  EXPECT_NE((*gone)["why"].get<std::string>().find("gone: pid "), std::string::npos) << heal.out;
  EXPECT_TRUE((*gone)["heal"].is_null());
  EXPECT_EQ((*reused)["status"], "unknown");
  EXPECT_NE((*reused)["why"].get<std::string>().find("the PID was reused"), std::string::npos)
      << heal.out;
  EXPECT_TRUE((*reused)["heal"].is_null());
  // The process that reused the PID keeps its own limits.
  EXPECT_EQ(LimitRow(limits_after, kMemlock), (Limit{1 * kM, 8 * kM})) << limits_after;
}

// Issue 39 "Docs": the namespace hint's commands run as a shell reads them
// (an unquoted DIR/* became extra arguments): each of its two forms, pasted
// after `audit --no-default-roots`, audits without a usage error.
TEST_F(AuditTest, TheNamespaceHintRunsAsWritten) {
  const std::string ctd = dir_ / "ctd";
  for (const char* ns : {"default", "k8s.io"}) {
    Sh("mkdir -p " + ctd + "/" + ns + "/c1");
    WriteFile(ctd + "/" + ns + "/c1/state.json", "{}");
  }
  CmdResult r = RunCmd({OurBinary("oci-rlimit"), "audit", "--config", config(), "--runtime-root",
                        ctd, "--no-default-roots"});
  const size_t give = r.out.find("--runtime-root " + ctd + "/default (or ");
  ASSERT_NE(give, std::string::npos) << r.out << r.err;
  const size_t open = r.out.find(" (or ", give);
  const size_t close = r.out.find(", quoted, for every namespace)", open);
  ASSERT_NE(close, std::string::npos) << r.out;
  for (const std::string& form :
       {r.out.substr(give, open - give), r.out.substr(open + 5, close - open - 5)}) {
    CmdResult run =
        Sh(OurBinary("oci-rlimit") + " audit --config " + config() + " --no-default-roots " + form);
    EXPECT_NE(run.status, 2) << form << ": " << run.err;
    EXPECT_EQ(run.err.find("usage"), std::string::npos) << form << ": " << run.err;
  }
}

TEST_F(AuditTest, UsageAndConfigErrorsExitTwo) {
  CmdResult missing_root = RunCmd(
      {OurBinary("oci-rlimit"), "audit", "--config", config(), "--runtime-root", dir_ / "nope"});
  EXPECT_EQ(missing_root.status, 2) << missing_root.err;
  EXPECT_NE(missing_root.err.find("--runtime-root"), std::string::npos) << missing_root.err;
  WriteFile(dir_ / "bad.toml", "rlimits = [\"memlock=lots\"]\n");
  CmdResult bad = RunCmd({OurBinary("oci-rlimit"), "audit", "--config", dir_ / "bad.toml"});
  EXPECT_EQ(bad.status, 2) << bad.err;
  CmdResult flag = RunCmd({OurBinary("oci-rlimit"), "audit", "--bogus"});
  EXPECT_EQ(flag.status, 2) << flag.err;
}

}  // namespace
}  // namespace ocirlimit::itest
