#include "nri/serve.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <deque>
#include <string>
#include <vector>

#include "tests/testing/nri_peer.h"

namespace ocirlimit::nri {
namespace {

using testsupport::ParseSent;
using testsupport::RawFrame;
using testsupport::RuntimeCall;
using testsupport::RuntimeReply;

// One scripted step of the runtime's side.
struct Step {
  enum Kind { kBytes, kEof, kTimeout, kSignal, kReadError } kind;
  std::string bytes;
};

class FakeConn : public Conn {
 public:
  explicit FakeConn(std::deque<Step> steps, std::string* written)
      : steps_(std::move(steps)), written_(written) {}
  Result<Wake> Wait(int) override {
    if (steps_.empty()) return Wake::kSignal;  // the script is over: stop
    switch (steps_.front().kind) {
      case Step::kTimeout:
        steps_.pop_front();
        return Wake::kTimeout;
      case Step::kSignal:
        steps_.pop_front();
        return Wake::kSignal;
      default:
        return Wake::kReadable;
    }
  }
  Result<ReadResult> Read() override {
    Step s = steps_.front();
    steps_.pop_front();
    if (s.kind == Step::kReadError) return MakeError("read from the runtime", 104);
    ReadResult r;
    r.eof = s.kind == Step::kEof;
    r.data = s.bytes;
    return r;
  }
  Status Write(std::string_view data, int) override {
    written_->append(data);
    return Ok{};
  }

 private:
  std::deque<Step> steps_;
  std::string* written_;
};

class EchoService : public PluginService {
 public:
  Reply Call(std::string_view method, std::string_view) override {
    return {std::string(method), {}};
  }
};

// Hands out one scripted connection per Connect (an empty script: refused).
class FakeConnector : public Connector {
 public:
  explicit FakeConnector(std::vector<std::deque<Step>> scripts) : scripts_(std::move(scripts)) {
    written.resize(scripts_.size());
  }
  Result<std::unique_ptr<Conn>> Connect() override {
    ++connects;
    if (next_ == scripts_.size()) return MakeError("connect: no more scripts");
    size_t i = next_++;
    if (scripts_[i].empty()) return MakeError("connect to \"/x\"", 111);
    return std::unique_ptr<Conn>(new FakeConn(scripts_[i], &written[i]));
  }
  Wake Sleep(int ms) override {
    slept.push_back(ms);
    // Out of scripts: stop the loop through a signal.
    return next_ == scripts_.size() ? Wake::kSignal : Wake::kTimeout;
  }
  std::vector<std::string> written;
  std::vector<int> slept;
  int connects = 0;

 private:
  std::vector<std::deque<Step>> scripts_;
  size_t next_ = 0;
};

struct Loop {
  EchoService svc;
  std::vector<std::string> said;
  int signals = 0;
  ServeOptions opt;
  Loop() {
    opt.on_signal = [this] { return ++signals > 0; };
    opt.new_session = [this] { return std::make_unique<Session>(svc, "reg"); };
    opt.say = [this](const std::string& m) { said.push_back(m); };
    opt.tick_ms = 1000;
    opt.backoff_min_ms = 100;
    opt.backoff_max_ms = 400;
  }
  std::string Said() const {
    std::string all;
    for (const auto& s : said) all += s + "\n";
    return all;
  }
};

Step Bytes(std::string b) { return {Step::kBytes, std::move(b)}; }
const Step kEofStep{Step::kEof, ""};
std::string Registered() { return RuntimeReply(1, {}); }
std::string Garbage() { return RawFrame(1, 0xffffffff); }

// Each scripted connection's written bytes: a RegisterPlugin, then answers.
size_t Registers(const std::string& written) {
  size_t n = 0;
  for (const auto& s : ParseSent(written)) n += s.conn == kRuntimeConn ? 1 : 0;
  return n;
}

struct ReconnectCase {
  std::string name;
  std::deque<Step> first;  // what the runtime does on the first connection
  std::string why;         // in the "disconnected:" line
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const ReconnectCase& c, std::ostream* os) { *os << c.name; }

class ReconnectTable : public ::testing::TestWithParam<ReconnectCase> {};

TEST_P(ReconnectTable, CleanDisconnectThenReconnectAndRegisterAgain) {
  Loop l;
  FakeConnector c(
      {GetParam().first, {Bytes(Registered()), Bytes(RuntimeCall(1, "Configure", ""))}});
  EXPECT_EQ(Serve(c, l.opt), 0);
  EXPECT_EQ(c.connects, 2);
  EXPECT_EQ(Registers(c.written[0]), 1u);
  EXPECT_EQ(Registers(c.written[1]), 1u);
  auto second = ParseSent(c.written[1]);
  ASSERT_EQ(second.size(), 2u);  // RegisterPlugin and the Configure answer
  EXPECT_EQ(second[1].conn, kPluginConn);
  EXPECT_NE(l.Said().find("disconnected: " + GetParam().why), std::string::npos) << l.Said();
  EXPECT_EQ(c.slept, (std::vector<int>{100}));
}

INSTANTIATE_TEST_SUITE_P(
    Serve, ReconnectTable,
    ::testing::Values(
        ReconnectCase{"GarbageFrameLength",
                      {Bytes(Registered()), Bytes(Garbage())},
                      "multiplexer frame for connection 1 is 4294967295 bytes long"},
        ReconnectCase{
            "TruncatedFrame",
            {Bytes(Registered()), Bytes(RuntimeCall(1, "Configure", "").substr(0, 9)), kEofStep},
            "the runtime closed the connection in the middle of a frame"},
        ReconnectCase{"TtrpcOverFourMiB",
                      {Bytes(Registered()),
                       Bytes(RawFrame(1, 10, std::string("\x00\x40\x00\x01\0\0\0\x01\x01\0", 10)))},
                      "connection 1: ttrpc message length 4194305 is over the limit"},
        ReconnectCase{
            "CleanEof", {Bytes(Registered()), kEofStep}, "the runtime closed the connection"},
        ReconnectCase{
            "ReadError", {Bytes(Registered()), {Step::kReadError, ""}}, "read from the runtime"},
        ReconnectCase{"RegistrationRefused",
                      {Bytes(RuntimeReply(1, {{2, "no"}, ""}))},
                      "the runtime refused RegisterPlugin: code 2: no"},
        ReconnectCase{"NoRegistrationReply",
                      {{Step::kTimeout, ""},
                       {Step::kTimeout, ""},
                       {Step::kTimeout, ""},
                       {Step::kTimeout, ""},
                       {Step::kTimeout, ""}},
                      "no reply to RegisterPlugin within 5 s"}),
    [](const auto& info) { return info.param.name; });

TEST(Serve, BackOffDoublesUpToTheMaximumWhileTheSocketIsAbsent) {
  Loop l;
  FakeConnector c({{}, {}, {}, {}, {}});
  EXPECT_EQ(Serve(c, l.opt), 0);
  EXPECT_EQ(c.slept, (std::vector<int>{100, 200, 400, 400, 400}));
  // Said once, not once per attempt.
  EXPECT_EQ(l.said.size(), 1u) << l.Said();
}

TEST(Serve, BackOffResetsAfterARegisteredConnection) {
  Loop l;
  FakeConnector c({{}, {}, {Bytes(Registered()), kEofStep}, {}});
  EXPECT_EQ(Serve(c, l.opt), 0);
  EXPECT_EQ(c.slept, (std::vector<int>{100, 200, 100, 200}));
}

TEST(Serve, PreRegisteredDoesNotReconnect) {
  Loop l;
  l.opt.reconnect = false;
  FakeConnector c({{Bytes(Registered()), kEofStep}, {Bytes(Registered())}});
  EXPECT_EQ(Serve(c, l.opt), 1);
  EXPECT_EQ(c.connects, 1);
  EXPECT_NE(l.Said().find("cannot reconnect"), std::string::npos);
}

TEST(Serve, SignalThatIsNotStopKeepsServing) {
  Loop l;
  l.opt.on_signal = [&] { return ++l.signals > 1; };  // the first is a reload
  FakeConnector c({{Bytes(Registered()), {Step::kSignal, ""}, Bytes(RuntimeCall(3, "X", ""))}});
  EXPECT_EQ(Serve(c, l.opt), 0);
  EXPECT_EQ(l.signals, 2);
  EXPECT_EQ(ParseSent(c.written[0]).size(), 2u);
}

// The config watch's tick: after each wake of a connection but a signal's (a timeout, calls
// read), and after each back-off sleep while no runtime is there, so a ConfigMap update is seen
// connected or not.
TEST(Serve, TicksConnectedAndWhileBackingOffButNotOnASignal) {
  Loop l;
  int ticks = 0;
  l.opt.on_tick = [&] { ++ticks; };
  l.opt.on_signal = [&] { return ++l.signals > 1; };
  FakeConnector c({{Bytes(Registered()),
                    {Step::kTimeout, ""},
                    {Step::kSignal, ""},
                    Bytes(RuntimeCall(3, "X", "")),
                    kEofStep},
                   {}});
  EXPECT_EQ(Serve(c, l.opt), 0);
  // connected: Registered, the timeout, the call, the EOF; then one back-off sleep that timed
  // out (the next, out of scripts, is a signal)
  EXPECT_EQ(ticks, 5);
}

// --- the fate of each batch's replies (logged lines wait for it) ---

// Fails every write after the first (the RegisterPlugin), as a runtime that
// dropped the plugin and closed the socket does.
class ClosingConn : public FakeConn {
 public:
  using FakeConn::FakeConn;
  Status Write(std::string_view data, int timeout_ms) override {
    if (writes_++ == 0) return FakeConn::Write(data, timeout_ms);
    return MakeError("write to the runtime", EPIPE);
  }

 private:
  int writes_ = 0;
};

std::vector<ReplyFate> Fates(Conn& conn, ServeOptions opt, EchoService& svc) {
  std::vector<ReplyFate> fates;
  int held = 0;
  opt.before_replies = [&] { ++held; };
  opt.after_replies = [&](const ReplyFate& f) {
    EXPECT_EQ(held--, 1) << "after_replies follows its before_replies";
    if (f.answered > 0) fates.push_back(f);
  };
  Session session(svc, "reg");
  (void)ServeConnection(conn, session, opt);
  return fates;
}

TEST(ServeFate, AReplyNotWrittenIsSaidSo) {
  Loop l;
  std::string written;
  ClosingConn conn({Bytes(Registered()), Bytes(RuntimeCall(1, "CreateContainer", ""))}, &written);
  auto fates = Fates(conn, l.opt, l.svc);
  ASSERT_EQ(fates.size(), 1u);
  EXPECT_FALSE(fates[0].sent);
  EXPECT_EQ(fates[0].answered, 1);
  EXPECT_NE(fates[0].why.find("write to the runtime: Broken pipe"), std::string::npos)
      << fates[0].why;
}

TEST(ServeFate, AReplyPastTheCallsDeadlineIsLate) {
  Loop l;
  std::string written;
  // Every reading of the clock is 2.5 s after the one before.
  int64_t t = 0;
  l.opt.now_us = [&] { return t += 2500000; };
  FakeConn conn({Bytes(Registered()), Bytes(RuntimeCall(1, "CreateContainer", "") +
                                            RuntimeCall(3, "CreateContainer", ""))},
                &written);
  auto fates = Fates(conn, l.opt, l.svc);
  ASSERT_EQ(fates.size(), 1u);
  EXPECT_TRUE(fates[0].sent);
  EXPECT_TRUE(fates[0].late);
  EXPECT_EQ(fates[0].answered, 2);
  EXPECT_EQ(fates[0].deadline_us, 2000000) << "timeout_nano of the calls (RuntimeCall: 2 s)";
  EXPECT_EQ(fates[0].elapsed_us, 2500000);
}

TEST(ServeFate, AReplyWithinTheDeadlineIsOnTime) {
  Loop l;
  std::string written;
  int64_t t = 0;
  l.opt.now_us = [&] { return t += 1000; };
  FakeConn conn({Bytes(Registered()), Bytes(RuntimeCall(1, "CreateContainer", ""))}, &written);
  auto fates = Fates(conn, l.opt, l.svc);
  ASSERT_EQ(fates.size(), 1u);
  EXPECT_TRUE(fates[0].sent);
  EXPECT_FALSE(fates[0].late);
}

}  // namespace
}  // namespace ocirlimit::nri
