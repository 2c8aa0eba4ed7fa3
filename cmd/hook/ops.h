// Everything oci-rlimit-hook does to the outside world, behind one
// interface, so the hook's flow (on-error, chain mode, precreate) can be
// unit-tested with a fake (hook/flow_test.cc).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "effects/config_loader.h"
#include "effects/files.h"
#include "effects/process_ops.h"
#include "formats/error.h"

namespace ocirlimit {

class HookOps {
 public:
  virtual ~HookOps() = default;
  // --config PATH, else OCI_RLIMIT_CONFIG, else the default, with the
  // environment overrides; outside the initial user namespace an EACCES file
  // is none (LoadConfigAs).
  virtual Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) = 0;
  // All of stdin, bounded in size and in time (a runtime that never closes it).
  virtual Result<std::string> ReadStdin(size_t max_bytes) = 0;
  // A regular file, bounded (the bundle's config.json).
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;
  // pidfd + prlimit, for FitForCaller and ApplyRlimits on the container.
  virtual ProcessOps& Process() = 0;
  virtual pid_t OwnPid() = 0;  // getpid(2): precreate fits to our own limits
  virtual Result<FileId> Stat(const std::string& path) = 0;  // stat(2), following symlinks
  virtual Result<FileId> Self() = 0;                         // /proc/self/exe
  virtual Status AppendLine(const std::string& path, const std::string& line) = 0;
  virtual std::string Now() = 0;  // RFC 3339, UTC
  virtual void Stderr(const std::string& line) = 0;
  virtual Status Stdout(const std::string& data) = 0;  // all of it, unbuffered
  // Execs `path` with `argv` and our environment, `stdin_bytes` on its stdin
  // (hook/chain_exec.h). Returns only on failure.
  virtual Error ExecChain(const std::string& path, const std::vector<std::string>& argv,
                          const std::string& stdin_bytes) = 0;
};

// The real thing.
HookOps& LinuxHookOps();

}  // namespace ocirlimit
