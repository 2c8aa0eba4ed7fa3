// The NRI plugin's output, off the request path: lines for stderr and for
// the config's log-file go into a bounded queue that a thread of its own
// writes, so a stderr pipe nobody reads (measured: the plugin answered 800
// CreateContainer calls, then stalled in write(2)) or a slow disk never
// delays a reply past the runtime's deadline. A line that finds the queue
// full is dropped and counted; the next line written to the same place
// ends with ` dropped=N`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "formats/error.h"

namespace ocirlimit::nri {

// Where a queued line goes, written by the queue's thread (and by a fake in
// tests). May block: only the writer thread calls it.
class LineWriter {
 public:
  virtual ~LineWriter() = default;
  // `line` has no newline. `file` empty: stderr; else the log-file path.
  virtual Status Write(const std::string& file, const std::string& line) = 0;
};

struct LogQueueLimits {
  size_t max_lines = 4096;
  size_t max_bytes = size_t{4} << 20;
};

class LogQueue {
 public:
  LogQueue(std::unique_ptr<LineWriter> writer, LogQueueLimits limits = {});
  // Waits up to about a second for the queue to drain, then leaves the
  // writer to finish alone (a blocked stderr must not keep the plugin from
  // exiting).
  ~LogQueue();
  LogQueue(const LogQueue&) = delete;
  LogQueue& operator=(const LogQueue&) = delete;

  // Never blocks on the writer: queued, or dropped and counted.
  void Push(const std::string& file, std::string line);
  // Lines dropped so far (queue full, or the writer failed), all places.
  [[nodiscard]] uint64_t dropped() const;
  // Waits until every queued line was handed to the writer, up to timeout_ms;
  // true when it was (tests, and the destructor).
  bool Drain(int timeout_ms);

 private:
  struct Shared;
  static void Run(const std::shared_ptr<Shared>& s);
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace ocirlimit::nri
