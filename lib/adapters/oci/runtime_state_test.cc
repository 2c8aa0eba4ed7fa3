// runc's state.json and crun's status file, as the runtimes here write them
// (runc 1.1.5, crun 1.8.1), and what is refused.
#include "adapters/oci/runtime_state.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

// runc 1.1.5's state.json for `runc run -d` of a `runc spec` bundle with one
// annotation, cut to the fields around the ones read (the real one is 5.9 KiB).
constexpr const char* kRunc =
    R"({"id":"c1","init_process_pid":11761,"init_process_start":187384,)"
    R"("created":"2026-12-01T22:02:00.579535604Z","config":{"no_pivot_root":false,)"
    R"("parent_death_signal":0,"rootfs":"/tmp/audit24probe/rootfs","umask":null,)"
    R"("readonlyfs":true,"mounts":[{"source":"proc","destination":"/proc","device":"proc"}],)"
    R"("labels":["oci-rlimit.io/rlimits=memlock=1M","bundle=/tmp/audit24probe"],)"
    R"("no_new_keyring":false},"rootless":false,"cgroup_paths":{"memory":"/sys/fs/cgroup/memory/c1"},)"
    R"("namespace_paths":{"NEWPID":"/proc/11761/ns/pid"},"external_descriptors":["/dev/null"],)"
    R"("intel_rdt_path":""})";

// crun 1.8.1's status file, verbatim.
constexpr const char* kCrun = R"({
    "pid": 10547,
    "process-start-time": 42063,
    "cgroup-path": "/c2",
    "scope": "",
    "rootfs": "rootfs",
    "systemd-cgroup": false,
    "bundle": "/tmp/audit24probe",
    "created": "2026-12-01T21:37:47.364342Z",
    "owner": "root",
    "detached": true,
    "external_descriptors": "[\"/dev/null\"]"
}
)";

TEST(RuntimeState, Runc) {
  auto s = ParseRuncState(kRunc, "state.json");
  ASSERT_TRUE(s) << s.error().Text();
  EXPECT_EQ(s->runtime, "runc");
  EXPECT_EQ(s->pid, 11761);
  EXPECT_EQ(s->start_time, 187384u);
  EXPECT_EQ(s->bundle, "/tmp/audit24probe");
}

TEST(RuntimeState, Crun) {
  auto s = ParseCrunStatus(kCrun, "status");
  ASSERT_TRUE(s) << s.error().Text();
  EXPECT_EQ(s->runtime, "crun");
  EXPECT_EQ(s->pid, 10547);
  EXPECT_EQ(s->start_time, 42063u);
  EXPECT_EQ(s->bundle, "/tmp/audit24probe");
}

struct Bad {
  const char* name;
  bool crun;
  const char* text;
  const char* error;  // exact
};

class RuntimeStateBad : public testing::TestWithParam<Bad> {};

TEST_P(RuntimeStateBad, Refuses) {
  const Bad& b = GetParam();
  auto s = b.crun ? ParseCrunStatus(b.text, "F") : ParseRuncState(b.text, "F");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().Text(), b.error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RuntimeStateBad,
    testing::Values(Bad{"RuncNoPid", false, R"({"id":"c"})", "F: no \"init_process_pid\""},
                    Bad{"RuncPidZero", false, R"({"init_process_pid":0})",
                        "F: init_process_pid: 0 is not a PID"},
                    Bad{"RuncPidNegative", false, R"({"init_process_pid":-5})",
                        "F: init_process_pid: -5 is not a PID"},
                    Bad{"RuncPidTooBig", false, R"({"init_process_pid":99999999999})",
                        "F: init_process_pid: 99999999999 is not a PID"},
                    Bad{"RuncStartNotANumber", false,
                        R"({"init_process_pid":5,"init_process_start":"x"})",
                        "F: init_process_start: \"x\" is not a start time"},
                    Bad{"CrunPidString", true, R"({"pid":"12"})", "F: pid: \"12\" is not a PID"},
                    Bad{"CrunStartNegative", true, R"({"pid":12,"process-start-time":-1})",
                        "F: process-start-time: -1 is not a start time"}),
    CaseName{});

TEST(RuntimeState, NoBundleOrStartRecorded) {
  auto s = ParseRuncState(R"({"init_process_pid":5,"config":{"labels":["a=b"]}})", "F");
  ASSERT_TRUE(s) << s.error().Text();
  EXPECT_EQ(s->bundle, "");
  EXPECT_FALSE(s->start_time);
  auto c = ParseCrunStatus(R"({"pid":5})", "F");
  ASSERT_TRUE(c) << c.error().Text();
  EXPECT_EQ(c->bundle, "");
  EXPECT_FALSE(c->start_time);
}

TEST(RuntimeState, NotJson) {
  EXPECT_FALSE(ParseRuncState("{", "F"));
  EXPECT_FALSE(ParseCrunStatus("[]", "F"));
}

struct BundleCase {
  const char* name;
  std::string text;
  std::optional<std::string> bundle;
};

class RecordedBundleTable : public testing::TestWithParam<BundleCase> {};

TEST_P(RecordedBundleTable, OnlyTheBundle) {
  EXPECT_EQ(RecordedBundle(GetParam().text), GetParam().bundle);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RecordedBundleTable,
    testing::Values(
        BundleCase{"Runc", kRunc, "/tmp/audit24probe"},
        BundleCase{"Crun", kCrun, "/tmp/audit24probe"},
        // What the parsers refuse still names its bundle.
        BundleCase{"RuncWithoutPid", R"({"config":{"labels":["bundle=/run/b1"]}})", "/run/b1"},
        BundleCase{"NoBundle", R"({"init_process_pid":5,"config":{"labels":["a=b"]}})",
                   std::nullopt},
        BundleCase{"EmptyBundle", R"({"bundle":""})", std::nullopt},
        BundleCase{"LabelsNotAList", R"({"config":{"labels":"bundle=/x"}})", std::nullopt},
        BundleCase{"NotAnObject", "[]", std::nullopt}, BundleCase{"NotJson", "{", std::nullopt}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
