// Inside effects only: a file descriptor closed when it goes out of scope.
#pragma once

#include <unistd.h>

namespace ocirlimit {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Gives the fd up: the caller closes it.
  [[nodiscard]] int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  // Closes the one held and holds `f`.
  void reset(int f) {
    if (fd_ >= 0) close(fd_);
    fd_ = f;
  }

 private:
  int fd_;
};

}  // namespace ocirlimit
