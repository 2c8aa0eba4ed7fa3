// The syscalls that touch another process, behind a small interface so the
// apply logic can be tested with a fake.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

class ProcessOps {
 public:
  virtual ~ProcessOps() = default;
  // A pidfd pins the identity of `pid`: while it reports the process alive,
  // `pid` cannot have been reused by another process.
  virtual Result<int> OpenPidfd(pid_t pid) = 0;
  virtual Status CheckAlive(int pidfd) = 0;  // err ESRCH once the process has exited
  virtual void ClosePidfd(int pidfd) = 0;
  virtual Result<LimitPair> GetLimit(pid_t pid, int resource) = 0;
  // Sets and returns the previous value, in one prlimit(2) call.
  virtual Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) = 0;
  virtual bool HasSysResource() = 0;  // CAP_SYS_RESOURCE in our effective set
  // Whether we run in the initial user namespace: /proc/self/uid_map is the
  // identity map (core/unprivileged.h). A rootless engine's hooks do not.
  // Unreadable counts as initial, so that case stays strict.
  virtual bool InInitialUserNamespace() = 0;
};

// /proc/self/uid_map read and checked (IsInitialUidMap), for every ops
// implementation that runs here.
bool ThisProcessInInitialUserNamespace();

// The real thing: pidfd_open(2), pidfd_send_signal(2), prlimit(2).
ProcessOps& LinuxProcessOps();

}  // namespace ocirlimit
