#include "prlimit-helper/read_limits.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <map>

#include "tests/testing/case_name.h"
#include "tests/testing/fake_process_ops.h"

namespace ocirlimit {
namespace {

// Every limit reads as (resource, resource + 100).
struct FakeOps : testsupport::FakeProcessOps {
  FakeOps() {
    for (const RlimitInfo& r : AllRlimits()) {
      limits[r.resource] = {static_cast<uint64_t>(r.resource),
                            static_cast<uint64_t>(r.resource) + 100};
    }
  }
};

TEST(ReadRlimits, ReadsAllSixteenInOrder) {
  FakeOps ops;
  ReadOutcome r = ReadRlimits(ops, 42);
  ASSERT_TRUE(r.ok()) << r.error->Text();
  ASSERT_EQ(r.limits.size(), AllRlimits().size());
  for (size_t i = 0; i < r.limits.size(); ++i) {
    EXPECT_EQ(r.limits[i].resource, AllRlimits()[i].resource);
    EXPECT_EQ(r.limits[i].soft, static_cast<uint64_t>(AllRlimits()[i].resource));
    EXPECT_EQ(r.limits[i].hard, static_cast<uint64_t>(AllRlimits()[i].resource) + 100);
  }
  EXPECT_EQ(ops.opens, 1);
  EXPECT_EQ(ops.closes, 1);
  EXPECT_TRUE(ops.set_calls.empty()) << "--get must never set a limit";
}

struct FailCase {
  const char* name;
  pid_t pid;
  int open_err;
  int get_err;
  int alive_err;
  ApplyFailure failure;
  const char* message;
};

class ReadRlimitsFails : public ::testing::TestWithParam<FailCase> {};

TEST_P(ReadRlimitsFails, Classifies) {
  const FailCase& c = GetParam();
  FakeOps ops;
  ops.open_err = c.open_err;
  if (c.get_err != 0) {
    ops.get_err_at = RLIMIT_MEMLOCK;
    ops.get_err = c.get_err;
  }
  if (c.alive_err != 0) {
    ops.alive_checks = 0;
    ops.alive_err = c.alive_err;
  }
  ReadOutcome r = ReadRlimits(ops, c.pid);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure, c.failure);
  EXPECT_EQ(r.error->Text(), c.message);
  EXPECT_TRUE(r.limits.empty()) << "no values from a process we could not pin";
  EXPECT_EQ(ops.open_fds, 0) << "pidfd leaked";
  EXPECT_TRUE(ops.set_calls.empty()) << "--get must never set a limit";
}

INSTANTIATE_TEST_SUITE_P(
    Failures, ReadRlimitsFails,
    ::testing::Values(
        FailCase{"PidOne", 1, 0, 0, 0, ApplyFailure::kInvalidTarget,
                 "pid 1: refusing to touch pid 0 or 1"},
        FailCase{"Missing", 42, ESRCH, 0, 0, ApplyFailure::kTargetGone, "pid 42: no such process"},
        FailCase{"OpenOther", 42, EMFILE, 0, 0, ApplyFailure::kOther,
                 "pid 42: pidfd_open: Too many open files"},
        FailCase{"ReadPermission", 42, 0, EPERM, 0, ApplyFailure::kPermission,
                 "pid 42: memlock: prlimit: Operation not permitted"},
        FailCase{"ReadGone", 42, 0, ESRCH, 0, ApplyFailure::kTargetGone, "pid 42: process exited"},
        FailCase{"ExitedWhileReading", 42, 0, 0, ESRCH, ApplyFailure::kTargetGone,
                 "pid 42: process exited while its limits were being read"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
