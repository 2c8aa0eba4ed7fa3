#include <unistd.h>

#include <iostream>

#include "effects/config_loader.h"
#include "effects/files.h"
#include "effects/process_ops.h"
#include "hook/chain_exec.h"
#include "hook/ops.h"

namespace ocirlimit {
namespace {

// Well under the shortest runtime hook timeout we know of (podman's 60 s).
constexpr int kStdinTimeoutMs = 10000;

class LinuxOps final : public HookOps {
 public:
  Result<LoadedConfig> LoadConfig(const std::optional<std::string>& flag) override {
    return LoadConfigAs(flag, ProcessEnv(), !LinuxProcessOps().InInitialUserNamespace());
  }
  Result<std::string> ReadStdin(size_t max_bytes) override {
    return ReadFdBounded(STDIN_FILENO, max_bytes, kStdinTimeoutMs);
  }
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }
  ProcessOps& Process() override { return LinuxProcessOps(); }
  pid_t OwnPid() override { return getpid(); }
  Result<FileId> Stat(const std::string& path) override { return StatFollow(path); }
  Result<FileId> Self() override { return StatFollow("/proc/self/exe"); }
  Status AppendLine(const std::string& path, const std::string& line) override {
    return ocirlimit::AppendLine(path, line);
  }
  std::string Now() override { return Rfc3339Now(); }
  void Stderr(const std::string& line) override { std::cerr << line << "\n" << std::flush; }
  Status Stdout(const std::string& data) override {
    std::cout << std::flush;
    return WriteAll(STDOUT_FILENO, data);
  }
  Error ExecChain(const std::string& path, const std::vector<std::string>& argv,
                  const std::string& stdin_bytes) override {
    std::vector<char*> raw;
    raw.reserve(argv.size() + 1);
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    return ExecWithStdin(path, raw.data(), stdin_bytes);
  }
};

}  // namespace

HookOps& LinuxHookOps() {
  static LinuxOps ops;
  return ops;
}

}  // namespace ocirlimit
