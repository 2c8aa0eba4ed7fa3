// Everything oci-rlimit-runtime does to the outside world, behind one
// interface, so the wrapper's flow (fail closed, never half-done) can be
// tested with a fake.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "effects/config_loader.h"
#include "effects/decisions.h"
#include "effects/files.h"
#include "formats/error.h"

namespace ocirlimit {

class RuntimeOps {
 public:
  virtual ~RuntimeOps() = default;
  // --config PATH, else OCI_RLIMIT_CONFIG, else the default path, with the
  // environment overrides; outside the initial user namespace an EACCES file
  // is none (LoadConfigAs).
  virtual Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) = 0;
  // Not in the initial user namespace means a rootless engine called us.
  virtual bool InInitialUserNamespace() = 0;
  // Our own soft and hard limit of `resource`: the ceiling the runtime we
  // exec inherits, and so what it can set in the container.
  virtual Result<Rlimit> OwnLimit(int resource) = 0;
  // CAP_SYS_RESOURCE in our effective set: without it, neither we nor the
  // runtime we exec can raise a hard limit above OwnLimit's.
  virtual bool HasSysResource() = 0;
  virtual std::optional<std::string> Getenv(std::string_view name) = 0;
  // setenv(3), for the runtime it execs.
  virtual void Setenv(std::string_view name, const std::string& value) = 0;
  virtual std::optional<FileId> Probe(const std::string& path) = 0;  // see ProbeExecutable
  virtual Result<FileId> Self() = 0;                                 // /proc/self/exe
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;
  virtual Status ReplaceFile(const std::string& path, const std::string& content) = 0;
  virtual Status AppendLine(const std::string& path, const std::string& line) = 0;
  virtual std::string Now() = 0;  // RFC 3339, UTC
  virtual void Stderr(const std::string& line) = 0;
  // Runs argv (argv[0] a path) and returns its stdout; see RunCaptured.
  virtual Result<std::string> RunCaptured(const std::vector<std::string>& argv, int timeout_ms,
                                          size_t max_bytes) = 0;
  // Unbuffered, so it lands before the output of a runtime exec'd next.
  virtual void Stdout(const std::string& text) = 0;
  // Where decisions are recorded (effects/decisions.h); nullptr where the
  // wrapper cannot keep them (a rootless engine cannot write root's /run).
  virtual DecisionStore* Decisions() { return nullptr; }
  // execv(2); returns only when it failed.
  virtual Error Exec(const std::string& path, const std::vector<std::string>& argv) = 0;
};

// The real thing.
RuntimeOps& LinuxRuntimeOps();

}  // namespace ocirlimit
