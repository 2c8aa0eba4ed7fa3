#include "prlimit-helper/test_pause.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/text.h"

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

}  // namespace ocirlimit
