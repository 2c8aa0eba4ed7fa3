// Whether anything opened a FIFO to read while a piece of code ran: a
// writer waits in open(2) until a reader comes, so a writer thread parked
// there before the code runs is let through by any open for reading
// (O_NONBLOCK or not), and by nothing else (an O_PATH open, a stat).
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace ocirlimit::testsupport {

inline bool OpenedToRead(const std::string& fifo, const std::function<void()>& run) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> through{false};
  std::thread writer([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    through = true;
    if (fd >= 0) close(fd);
  });
  // Parked: the thread sleeps (state S), and it does nothing but open.
  const auto parked = [&] {
    if (tid == 0) return false;
    std::ifstream stat("/proc/self/task/" + std::to_string(tid.load()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S';
  };
  for (int i = 0; i < 2000 && !parked(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run();
  for (int i = 0; i < 200 && !through; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool opened = through;
  // Let the writer go.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  writer.join();
  if (reader >= 0) close(reader);
  return opened;
}

}  // namespace ocirlimit::testsupport
