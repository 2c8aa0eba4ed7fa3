#include "prlimit-helper/test_pause.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "formats/text.h"

namespace ocirlimit {

Result<int> PauseAfterPidfdOps::OpenPidfd(pid_t pid) {
  auto fd = real_.OpenPidfd(pid);
  if (!fd) return fd;
  // open(2) of a FIFO for reading blocks until a writer comes: that is the
  // test's signal that the pidfd is open; the byte (or EOF) is its go-ahead.
  int fifo = open(fifo_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fifo < 0) {
    int err = errno;
    real_.ClosePidfd(*fd);
    return MakeError("test pause: open " + Quote(fifo_), err);
  }
  char byte = 0;
  ssize_t n = 0;
  do {
    n = read(fifo, &byte, 1);
  } while (n < 0 && errno == EINTR);
  close(fifo);
  return fd;
}

namespace {

class Testing final : public HelperOps {
 public:
  Result<std::string> ReadStdin(size_t max_bytes, int timeout_ms) override {
    return real().ReadStdin(max_bytes, timeout_ms);
  }
  Result<std::string> ReadProc(const std::string& path, size_t max_bytes) override {
    return real().ReadProc(path, max_bytes);
  }
  CapOps& Caps() override { return real().Caps(); }
  ProcessOps& Processes() override { return real().Processes(); }
  ProcessOps& ApplyProcesses(const HelperArgs& args) override {
    if (!args.test_pause_fifo) return real().ApplyProcesses(args);
    paused_.emplace(real().Processes(), *args.test_pause_fifo);
    return *paused_;
  }
  pid_t Self() override { return real().Self(); }
  void Out(const std::string& text) override { real().Out(text); }
  void Err(const std::string& line) override { real().Err(line); }

 private:
  static HelperOps& real() { return LinuxHelperOps(); }
  std::optional<PauseAfterPidfdOps> paused_;
};

}  // namespace

HelperOps& TestingHelperOps() {
  static Testing ops;
  return ops;
}

}  // namespace ocirlimit
