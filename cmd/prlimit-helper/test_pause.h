// TEST-ONLY. The PID-safety test must kill (and recycle) the target after
// the helper has pinned it with a pidfd and before it applies anything.
// This ProcessOps wraps the real one and, right after a successful
// OpenPidfd, blocks until a test opens the FIFO and writes a byte (or
// closes it). It is reached only through --test-only-pause-after-pidfd,
// which --help does not list; nothing else changes.
#pragma once

#include <string>

#include "effects/process_ops.h"
#include "prlimit-helper/ops.h"

namespace ocirlimit {

class PauseAfterPidfdOps final : public ProcessOps {
 public:
  PauseAfterPidfdOps(ProcessOps& real, std::string fifo) : real_(real), fifo_(std::move(fifo)) {}

  Result<int> OpenPidfd(pid_t pid) override;
  Status CheckAlive(int pidfd) override { return real_.CheckAlive(pidfd); }
  void ClosePidfd(int pidfd) override { real_.ClosePidfd(pidfd); }
  Result<LimitPair> GetLimit(pid_t pid, int resource) override {
    return real_.GetLimit(pid, resource);
  }
  Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) override {
    return real_.SetLimit(pid, resource, value);
  }
  bool HasSysResource() override { return real_.HasSysResource(); }
  bool InInitialUserNamespace() override { return real_.InInitialUserNamespace(); }

 private:
  ProcessOps& real_;
  std::string fifo_;
};

// The test build's ops: the installed helper's, except that the read or the
// apply go through PauseAfterPidfdOps when --test-only-pause-after-pidfd
// names a FIFO.
HelperOps& TestingHelperOps();

}  // namespace ocirlimit
