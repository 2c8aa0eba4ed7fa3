#include "cli/doctor/doctor_nri_status.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr const char* kPath = "/run/oci-rlimit/nri.status";

std::string Status(const std::string& synchronized, int containers, int healed, int unhealed,
                   int total, bool report_only = false, int refused = 0) {
  return "# comment\nconnected=2026-12-01T22:00:00Z\nsynchronized=" + synchronized +
         "\ncontainers=" + std::to_string(containers) + "\nhealed=" + std::to_string(healed) +
         "\nunhealed=" + std::to_string(unhealed) + "\nhealed-total=" + std::to_string(total) +
         "\nreport-only=" + (report_only ? "yes" : "no") +
         (refused != 0 ? "\nrefused=" + std::to_string(refused) : std::string()) +
         "\nwriter-pid=77\nwriter-start=500\n";
}

// Only pid 77, started at 500, runs.
bool Runs(uint64_t pid, uint64_t start) { return pid == 77 && start == 500; }

struct StatusCase {
  std::string name;
  std::optional<std::string> text;
  bool running;
  std::string line;         // "STATUS what", "" for no line
  std::string advice = "";  // part of the advice
};

class NriStatusTable : public ::testing::TestWithParam<StatusCase> {};

TEST_P(NriStatusTable, SaysTheLastConnectAndItsHeals) {
  const StatusCase& c = GetParam();
  const std::vector<Check> checks = NriStatusChecks(c.text, kPath, c.running, Runs);
  if (c.line.empty()) {
    EXPECT_TRUE(checks.empty()) << checks[0].what;
    return;
  }
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(std::string(StatusName(checks[0].status)) + " " + checks[0].what, c.line);
  EXPECT_EQ(checks[0].area, "nri");
  EXPECT_EQ(checks[0].path, kPath);
  EXPECT_NE(checks[0].advice.find(c.advice), std::string::npos) << checks[0].advice;
}

TEST(NriStatusChecks, RefusedButRunningIsItsOwnWarning) {
  const std::vector<Check> checks =
      NriStatusChecks(Status("2026-12-01T22:00:01Z", 3, 1, 0, 1, false, 2), kPath, true, Runs);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, CheckStatus::kOk);
  EXPECT_EQ(checks[1].status, CheckStatus::kWarn);
  EXPECT_EQ(checks[1].what.rfind("2 containers run though the policy refuses", 0), 0u)
      << checks[1].what;
  EXPECT_NE(checks[1].advice.find("oci-rlimit audit"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Doctor, NriStatusTable,
    ::testing::Values(
        StatusCase{"NoFileNoPlugin", std::nullopt, false, ""},
        StatusCase{"NoFileButRunning", std::nullopt, true,
                   "info oci-rlimit-nri has written no status file: not connected since it "
                   "started, or started with another --status-file"},
        StatusCase{"Healed", Status("2026-12-01T22:00:01Z", 7, 6, 0, 9), true,
                   "ok oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z and healed 6 "
                   "of 7 containers then (9 since it started)"},
        StatusCase{"NothingToHealOneContainer", Status("2026-12-01T22:00:01Z", 1, 0, 0, 0), true,
                   "ok oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z and healed 0 "
                   "of 1 container then (0 since it started)"},
        StatusCase{"NotRunningNow", Status("2026-12-01T22:00:01Z", 2, 2, 0, 2), false,
                   "ok oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z (not running "
                   "now) and healed 2 of 2 containers then (2 since it started)"},
        StatusCase{"SomeCouldNotBeHealed", Status("2026-12-01T22:00:01Z", 5, 3, 2, 3), true,
                   "warn oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z and healed 3 "
                   "of 5 containers then (3 since it started); 2 containers it could not heal "
                   "(its log-file says why)",
                   "oci-rlimit audit"},
        StatusCase{"ReportOnly", Status("2026-12-01T22:00:01Z", 4, 0, 4, 0, true), true,
                   "warn oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z and healed 0 "
                   "of 4 containers then (0 since it started); it can only report: it does not "
                   "see the host's PIDs, and 4 containers were not checked",
                   "hostPID: true"},
        StatusCase{"NoSynchronizeYet", Status("", 0, 0, 0, 0), true,
                   "info oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z; the runtime "
                   "sent no Synchronize since, so it healed nothing (containerd 1.7 sends none "
                   "to a pre-registered plugin)",
                   "external plugin"},
        StatusCase{"Unreadable", std::string("healed=many\n"), true,
                   "warn oci-rlimit-nri's status file is unreadable: not a status file "
                   "oci-rlimit-nri wrote"},
        // Not a line of another file is ever printed (a root-only file named
        // by an impostor's --status-file).
        StatusCase{"NeverQuotesAFileItCannotParse", std::string("root:SECRET:0:0\n"), true,
                   "warn oci-rlimit-nri's status file is unreadable: not a status file "
                   "oci-rlimit-nri wrote"},
        // A restarted plugin that never connected leaves the old file.
        StatusCase{"StaleWriterGone",
                   "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\n"
                   "writer-pid=78\nwriter-start=500\n",
                   true,
                   "warn oci-rlimit-nri's status file was written by pid 78, which no longer "
                   "runs: stale, not believed",
                   "only when it connects"},
        StatusCase{"StalePidReused",
                   "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\n"
                   "writer-pid=77\nwriter-start=499\n",
                   true,
                   "warn oci-rlimit-nri's status file was written by pid 77, which no longer "
                   "runs: stale, not believed"},
        StatusCase{"NamesNoWriter",
                   "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\n", true,
                   "warn oci-rlimit-nri's status file names no writer (an older plugin's): not "
                   "believed"}),
    CaseName{});

// doctor identifies the plugin by what it is, not by its name.
TEST(NotInstalled, WhatThePluginIs) {
  RunningProcess p{.pid = 42, .argv = {"oci-rlimit-nri"}, .exe = "/usr/bin/oci-rlimit-nri"};
  p.exe_root_owned = p.root_uid = p.host_namespaces = true;
  EXPECT_EQ(NotInstalled(p, "oci-rlimit-nri"), "");
  RunningProcess upgraded = p;
  upgraded.exe += " (deleted)";
  EXPECT_EQ(NotInstalled(upgraded, "oci-rlimit-nri"), "");
  RunningProcess renamed = p;
  renamed.exe = "/usr/bin/sleep";  // exec -a oci-rlimit-nri sleep
  EXPECT_NE(NotInstalled(renamed, "oci-rlimit-nri").find("not oci-rlimit-nri"), std::string::npos);
  RunningProcess unreadable = p;
  unreadable.exe = "";
  EXPECT_NE(NotInstalled(unreadable, "oci-rlimit-nri"), "");
  RunningProcess users = p;
  users.exe_root_owned = false;
  EXPECT_NE(NotInstalled(users, "oci-rlimit-nri").find("not root's"), std::string::npos);
  RunningProcess nobody = p;
  nobody.root_uid = false;
  EXPECT_EQ(NotInstalled(nobody, "oci-rlimit-nri"), "it does not run as root");
  RunningProcess own_ns = p;
  own_ns.host_namespaces = false;
  EXPECT_NE(NotInstalled(own_ns, "oci-rlimit-nri").find("own PID or mount"), std::string::npos);
}

}  // namespace
}  // namespace ocirlimit
