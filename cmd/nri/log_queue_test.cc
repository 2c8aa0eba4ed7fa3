// The plugin's output queue against a fake writer: order, a writer that
// blocks (a stderr pipe nobody reads), failures, and the count of dropped
// lines in the next line written; and the output's hold of container lines
// until their reply's fate is known.
#include "nri/log_queue.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nri/serve_linux.h"

namespace ocirlimit::nri {
namespace {

// Records what it is asked to write. While `gate` is closed, Write waits
// (as write(2) on a full pipe does); `fail_next` fails that many writes.
struct Record {
  std::mutex mu;
  std::condition_variable cv;
  bool gate_open = true;
  bool waiting = false;
  int fail_next = 0;
  std::vector<std::pair<std::string, std::string>> lines;
};

class FakeWriter : public LineWriter {
 public:
  explicit FakeWriter(Record& r) : r_(r) {}
  Status Write(const std::string& file, const std::string& line) override {
    std::unique_lock<std::mutex> lock(r_.mu);
    r_.waiting = true;
    r_.cv.notify_all();
    r_.cv.wait(lock, [&] { return r_.gate_open; });
    r_.waiting = false;
    if (r_.fail_next > 0) {
      --r_.fail_next;
      return MakeError("write: No space left on device");
    }
    r_.lines.emplace_back(file, line);
    return Ok{};
  }

 private:
  Record& r_;
};

TEST(LogQueue, WritesEveryLineInOrderToItsPlace) {
  Record rec;
  LogQueue q(std::make_unique<FakeWriter>(rec));
  for (int i = 0; i < 50; ++i) q.Push(i % 2 ? "/log" : "", "line " + std::to_string(i));
  ASSERT_TRUE(q.Drain(5000));
  ASSERT_EQ(rec.lines.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(rec.lines[i].first, i % 2 ? "/log" : "");
    EXPECT_EQ(rec.lines[i].second, "line " + std::to_string(i));
  }
  EXPECT_EQ(q.dropped(), 0u);
}

TEST(LogQueue, ABlockedWriterNeverBlocksPushAndTheDropsAreCounted) {
  Record rec;
  rec.gate_open = false;
  LogQueue q(std::make_unique<FakeWriter>(rec), {100, size_t{1} << 20});
  q.Push("", "first");
  {
    std::unique_lock<std::mutex> lock(rec.mu);
    rec.cv.wait(lock, [&] { return rec.waiting; });  // the writer holds "first"
  }
  // 2,000 more while the writer is stuck: 100 fit, the rest are dropped.
  for (int i = 0; i < 2000; ++i) q.Push("", "line " + std::to_string(i));
  EXPECT_EQ(q.dropped(), 1900u);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.gate_open = true;
  }
  rec.cv.notify_all();
  ASSERT_TRUE(q.Drain(5000));
  ASSERT_EQ(rec.lines.size(), 101u);
  EXPECT_EQ(rec.lines[0].second, "first");
  EXPECT_EQ(rec.lines[1].second, "line 0 dropped=1900") << "the next line counts the loss";
  EXPECT_EQ(rec.lines[2].second, "line 1");
  EXPECT_EQ(rec.lines[100].second, "line 99");
}

TEST(LogQueue, AByteBoundToo) {
  Record rec;
  rec.gate_open = false;
  LogQueue q(std::make_unique<FakeWriter>(rec), {1000, 100});
  q.Push("", "held");
  {
    std::unique_lock<std::mutex> lock(rec.mu);
    rec.cv.wait(lock, [&] { return rec.waiting; });
  }
  q.Push("", std::string(60, 'a'));
  q.Push("", std::string(60, 'b'));  // 120 bytes queued would pass the bound
  EXPECT_EQ(q.dropped(), 1u);
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.gate_open = true;
  }
  rec.cv.notify_all();
  ASSERT_TRUE(q.Drain(5000));
  ASSERT_EQ(rec.lines.size(), 2u);
  EXPECT_EQ(rec.lines[1].second, std::string(60, 'a') + " dropped=1");
}

TEST(LogQueue, AFailedWriteIsCountedInThatPlacesNextLine) {
  Record rec;
  rec.fail_next = 1;
  LogQueue q(std::make_unique<FakeWriter>(rec));
  q.Push("/log", "lost");
  ASSERT_TRUE(q.Drain(5000));
  q.Push("", "to stderr");
  q.Push("/log", "kept");
  ASSERT_TRUE(q.Drain(5000));
  ASSERT_EQ(rec.lines.size(), 2u);
  EXPECT_EQ(rec.lines[0], (std::pair<std::string, std::string>{"", "to stderr"}));
  EXPECT_EQ(rec.lines[1], (std::pair<std::string, std::string>{"/log", "kept dropped=1"}));
  EXPECT_EQ(q.dropped(), 1u);
}

// --- the output: container lines wait for their reply's fate ---

struct FateCase {
  const char* name;
  ReplyFate fate;
  std::string log_line;  // what reaches the log-file
  std::string said;      // the stderr warning ("" for none)
};

void PrintTo(const FateCase& c, std::ostream* os) { *os << c.name; }

class HeldLines : public ::testing::TestWithParam<FateCase> {};

constexpr const char* kSet = "T id=\"c1\" via=\"nri\" set memlock=unreported->8388608:8388608";

TEST_P(HeldLines, AreWrittenAsTheReplysFateSays) {
  Record rec;
  Config cfg;
  cfg.log_file = "/log";
  {
    StderrOutput out(std::make_unique<FakeWriter>(rec), std::make_unique<FakeWriter>(rec), false);
    out.HoldLogLines();
    out.LogLine(cfg, kSet);
    ASSERT_TRUE(out.Drain(5000));
    EXPECT_TRUE(rec.lines.empty()) << "held until the reply went out";
    out.ReleaseLogLines(GetParam().fate);
    ASSERT_TRUE(out.Drain(5000));
  }
  std::vector<std::string> log, err;
  for (const auto& [file, line] : rec.lines) (file.empty() ? err : log).push_back(line);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], GetParam().log_line);
  if (GetParam().said.empty()) {
    EXPECT_EQ(err, std::vector<std::string>{kSet});
  } else {
    ASSERT_EQ(err.size(), 2u);
    EXPECT_EQ(err[0], GetParam().said);
    EXPECT_EQ(err[1], GetParam().log_line);
  }
}

ReplyFate Fate(bool sent, bool late, const std::string& why = "") {
  ReplyFate f;
  f.answered = 1;
  f.sent = sent;
  f.late = late;
  f.elapsed_us = 2345000;
  f.deadline_us = 2000000;
  f.why = why;
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    Output, HeldLines,
    ::testing::Values(
        FateCase{"OnTime", Fate(true, false), kSet, ""},
        FateCase{
            "Late", Fate(true, true),
            "T id=\"c1\" via=\"nri\" unapplied error=\"the reply was written 2345 ms after the "
            "request, past the runtime's 2000 ms deadline; the runtime may have created "
            "container \\\"c1\\\" unadjusted\" verdict=\"set "
            "memlock=unreported->8388608:8388608\"",
            "oci-rlimit-nri: warning: the reply was written 2345 ms after the request, past "
            "the runtime's 2000 ms deadline; the runtime may have created the 1 container(s) "
            "of that batch unadjusted"},
        FateCase{"NotWritten", Fate(false, false, "write to the runtime: Broken pipe"),
                 "T id=\"c1\" via=\"nri\" unapplied error=\"the reply was not written (write to "
                 "the runtime: Broken pipe); the runtime may have created container \\\"c1\\\" "
                 "unadjusted\" verdict=\"set memlock=unreported->8388608:8388608\"",
                 "oci-rlimit-nri: warning: the reply was not written (write to the runtime: "
                 "Broken pipe); the runtime may have created the 1 container(s) of that batch "
                 "unadjusted"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit::nri
