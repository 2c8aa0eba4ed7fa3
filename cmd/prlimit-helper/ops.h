// What oci-prlimit-helper's flow (flow.h) does to the world, behind one
// interface: a Linux implementation (ops_linux.cc) and a fake in
// flow_test.cc.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "effects/process_ops.h"
#include "formats/error.h"
#include "prlimit-helper/args.h"
#include "prlimit-helper/privileges.h"

namespace ocirlimit {

class HelperOps {
 public:
  virtual ~HelperOps() = default;
  // Stdin, bounded in size and time (the state of a hook).
  virtual Result<std::string> ReadStdin(size_t max_bytes, int timeout_ms) = 0;
  // A file under /proc: /proc/self/status, /proc/PID/stat.
  virtual Result<std::string> ReadProc(const std::string& path, size_t max_bytes) = 0;
  virtual CapOps& Caps() = 0;
  // The process calls that check the target (never paused).
  virtual ProcessOps& Processes() = 0;
  // The process calls the read or the apply make: in the test build, with
  // --test-only-pause-after-pidfd, they wait on a FIFO after the pidfd opens.
  virtual ProcessOps& ApplyProcesses(const HelperArgs& args) = 0;
  virtual pid_t Self() = 0;
  virtual void Out(const std::string& text) = 0;  // stdout, flushed
  virtual void Err(const std::string& line) = 0;  // one stderr line, newline added
};

// The installed helper's.
HelperOps& LinuxHelperOps();

}  // namespace ocirlimit
