// One scripted ProcessOps for every unit test (effects, the hook, the
// helper): the target's limits live in a map, the process "exits" once
// CheckAlive has been asked alive_checks times, and every call is recorded.
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <climits>
#include <map>
#include <string>
#include <vector>

#include "effects/process_ops.h"

namespace ocirlimit::testsupport {

class FakeProcessOps : public ProcessOps {
 public:
  static constexpr int kPidfd = 77;

  Result<int> OpenPidfd(pid_t pid) override {
    opened_pid = pid;
    ++opens;
    if (open_err != 0) return MakeError("pidfd_open", open_err);
    ++open_fds;
    return kPidfd;
  }
  Status CheckAlive(int pidfd) override {
    EXPECT_EQ(pidfd, kPidfd);
    if (checks++ >= alive_checks) return MakeError("pidfd_send_signal", alive_err);
    return Ok{};
  }
  void ClosePidfd(int pidfd) override {
    EXPECT_EQ(pidfd, kPidfd);
    --open_fds;
    ++closes;
  }
  Result<LimitPair> GetLimit(pid_t pid, int resource) override {
    EXPECT_EQ(pid, opened_pid);
    if (resource == get_err_at) return MakeError("prlimit", get_err);
    return limits[resource];
  }
  Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) override {
    EXPECT_EQ(pid, opened_pid);
    set_calls.push_back(resource);
    if (auto it = set_errs.find(resource); it != set_errs.end()) {
      return MakeError("prlimit", it->second);
    }
    sets.push_back(std::to_string(pid) + " " + std::to_string(resource) + " " +
                   std::to_string(value.soft) + ":" + std::to_string(value.hard));
    LimitPair old = limits[resource];
    limits[resource] = value;
    return old;
  }
  bool HasSysResource() override { return has_cap; }
  bool InInitialUserNamespace() override { return initial_userns; }

  // Script.
  int open_err = 0;
  int alive_checks = INT_MAX;
  int alive_err = ESRCH;
  int get_err_at = -1;  // the resource whose read fails with get_err
  int get_err = 0;
  std::map<int, int> set_errs;  // resource -> errno
  bool has_cap = false;
  bool initial_userns = true;
  std::map<int, LimitPair> limits = {{RLIMIT_MEMLOCK, {8 << 20, 8 << 20}},
                                     {RLIMIT_NOFILE, {1024, 4096}},
                                     {RLIMIT_CORE, {0, RLIM_INFINITY}}};
  // Record.
  pid_t opened_pid = 0;
  int opens = 0;
  int open_fds = 0;
  int closes = 0;
  int checks = 0;
  std::vector<int> set_calls;
  std::vector<std::string> sets;  // "pid resource soft:hard", the successful ones in order
};

}  // namespace ocirlimit::testsupport
