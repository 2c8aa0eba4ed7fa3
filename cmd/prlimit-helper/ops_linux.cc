#include <unistd.h>

#include <iostream>

#include "effects/files.h"
#include "prlimit-helper/ops.h"

namespace ocirlimit {
namespace {

class Linux : public HelperOps {
 public:
  Result<std::string> ReadStdin(size_t max_bytes, int timeout_ms) override {
    return ReadFdBounded(STDIN_FILENO, max_bytes, timeout_ms);
  }
  Result<std::string> ReadProc(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }
  CapOps& Caps() override { return LinuxCapOps(); }
  ProcessOps& Processes() override { return LinuxProcessOps(); }
  ProcessOps& ApplyProcesses(const HelperArgs& /*args*/) override { return LinuxProcessOps(); }
  pid_t Self() override { return getpid(); }
  void Out(const std::string& text) override { std::cout << text << std::flush; }
  void Err(const std::string& line) override { std::cerr << line << "\n"; }
};

}  // namespace

HelperOps& LinuxHelperOps() {
  static Linux ops;
  return ops;
}

}  // namespace ocirlimit
