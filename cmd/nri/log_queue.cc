#include "nri/log_queue.h"

#include <chrono>
#include <map>
#include <utility>

namespace ocirlimit::nri {

struct LogQueue::Shared {
  struct Item {
    std::string file;
    std::string line;
  };
  std::unique_ptr<LineWriter> writer;
  LogQueueLimits limits;
  std::mutex mu;
  std::condition_variable wake;     // a line came, or stop
  std::condition_variable drained;  // the queue emptied
  std::deque<Item> items;
  size_t bytes = 0;
  bool busy = false;  // the writer holds an item
  bool stop = false;
  uint64_t dropped_total = 0;
  std::map<std::string, uint64_t> dropped_per_file;  // not yet reported
};

LogQueue::LogQueue(std::unique_ptr<LineWriter> writer, LogQueueLimits limits)
    : shared_(std::make_shared<Shared>()) {
  shared_->writer = std::move(writer);
  shared_->limits = limits;
  thread_ = std::thread(Run, shared_);
}

LogQueue::~LogQueue() {
  Drain(1000);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop = true;
  }
  shared_->wake.notify_all();
  // The thread owns its share of the state: when stderr never drains, it
  // may stay blocked in the writer until the process exits.
  thread_.detach();
}

void LogQueue::Push(const std::string& file, std::string line) {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    Shared& s = *shared_;
    if (s.items.size() >= s.limits.max_lines || s.bytes + line.size() > s.limits.max_bytes) {
      ++s.dropped_total;
      ++s.dropped_per_file[file];
      return;
    }
    s.bytes += line.size();
    s.items.push_back({file, std::move(line)});
  }
  shared_->wake.notify_one();
}

uint64_t LogQueue::dropped() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->dropped_total;
}

bool LogQueue::Drain(int timeout_ms) {
  std::unique_lock<std::mutex> lock(shared_->mu);
  return shared_->drained.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                   [&] { return shared_->items.empty() && !shared_->busy; });
}

void LogQueue::Run(const std::shared_ptr<Shared>& s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->wake.wait(lock, [&] { return s->stop || !s->items.empty(); });
    if (s->items.empty()) return;  // stopped, and nothing left
    Shared::Item item = std::move(s->items.front());
    s->items.pop_front();
    s->bytes -= item.line.size();
    // The count of what this place lost so far ends the next line it gets.
    if (uint64_t& lost = s->dropped_per_file[item.file]; lost > 0) {
      item.line += " dropped=" + std::to_string(lost);
      lost = 0;
    }
    s->busy = true;
    lock.unlock();
    Status st = s->writer->Write(item.file, item.line);
    lock.lock();
    s->busy = false;
    if (!st) {
      ++s->dropped_total;
      ++s->dropped_per_file[item.file];
    }
    if (s->items.empty()) s->drained.notify_all();
  }
}

}  // namespace ocirlimit::nri
