#include "prlimit-helper/read_limits.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <map>

namespace ocirlimit {
namespace {

// Every limit reads as (resource, resource + 100), unless told otherwise.
class FakeOps final : public ProcessOps {
 public:
  int open_err = 0;
  int get_err_at = -1;  // resource whose read fails
  int get_err = 0;
  int alive_err = 0;
  int opened = 0;
  int closed = 0;

  Result<int> OpenPidfd(pid_t) override {
    if (open_err != 0) return MakeError("pidfd_open", open_err);
    ++opened;
    return 77;
  }
  Status CheckAlive(int) override {
    if (alive_err != 0) return MakeError("pidfd_send_signal", alive_err);
    return Ok{};
  }
  void ClosePidfd(int fd) override {
    EXPECT_EQ(fd, 77);
    ++closed;
  }
  Result<LimitPair> GetLimit(pid_t, int resource) override {
    if (resource == get_err_at) return MakeError("prlimit", get_err);
    return LimitPair{static_cast<uint64_t>(resource), static_cast<uint64_t>(resource) + 100};
  }
  Result<LimitPair> SetLimit(pid_t, int, LimitPair) override {
    ADD_FAILURE() << "--get must never set a limit";
    return MakeError("prlimit", EINVAL);
  }
  bool HasSysResource() override { return false; }
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
  EXPECT_EQ(ops.opened, 1);
  EXPECT_EQ(ops.closed, 1);
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
  ops.alive_err = c.alive_err;
  ReadOutcome r = ReadRlimits(ops, c.pid);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure, c.failure);
  EXPECT_EQ(r.error->Text(), c.message);
  EXPECT_TRUE(r.limits.empty()) << "no values from a process we could not pin";
  EXPECT_EQ(ops.opened, ops.closed) << "pidfd leaked";
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
