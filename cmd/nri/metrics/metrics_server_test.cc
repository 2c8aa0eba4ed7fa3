// The metrics endpoint's request-head bound and the real server under idle
// peers (docs/nri.md, "Metrics").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nri/metrics/metrics_http.h"
#include "nri/metrics/metrics_server_linux.h"

namespace ocirlimit::nri {
namespace {

// The bound is on the head with its blank line: one that ends at
// kMaxRequestHead is read, one a byte past it is too long, and so are
// kMaxRequestHead bytes without a blank line (never waited on).
TEST(RequestHeadState, AtAndOverTheLimit) {
  const std::string start = "GET /metrics HTTP/1.1\r\nX: ";
  const std::string at = start + std::string(kMaxRequestHead - start.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(at.size(), kMaxRequestHead);
  EXPECT_EQ(RequestHeadState(at), HeadState::kComplete);
  EXPECT_EQ(RequestHeadState(at + "trailing body"), HeadState::kComplete);
  const std::string over =
      start + std::string(kMaxRequestHead - start.size() - 3, 'a') + "\r\n\r\n";
  ASSERT_EQ(over.size(), kMaxRequestHead + 1);
  EXPECT_EQ(RequestHeadState(over), HeadState::kTooLong);
  EXPECT_EQ(RequestHeadState(std::string(kMaxRequestHead, 'a')), HeadState::kTooLong);
  EXPECT_EQ(RequestHeadState(std::string(kMaxRequestHead - 1, 'a')), HeadState::kPartial);
  EXPECT_EQ(RequestHeadState("GET /metrics HTTP/1.1\r\n"), HeadState::kPartial);
  const std::string reply = HeadTooLongReply();
  EXPECT_EQ(reply.substr(0, reply.find("\r\n")), "HTTP/1.1 431 Request Header Fields Too Large");
}

class Server : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(mkdtemp(dir_), nullptr);
    path_ = std::string(dir_) + "/m.sock";
    auto s =
        StartMetricsServer({MetricsAddress::Kind::kUnix, "", 0, path_}, [this] { return body_; });
    ASSERT_TRUE(s.ok()) << s.error().Text();
    server_ = std::move(*s);
  }
  void TearDown() override {
    for (int fd : idle_) close(fd);
    server_.reset();
    unlink(path_.c_str());
    rmdir(dir_);
  }

  // A connected socket, or -1. Non-blocking, so a full backlog is retried
  // for up to 10 s (generous: the server accepts at once) rather than waited
  // on without end.
  int Connect() const {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, path_.c_str(), path_.size());
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
      close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return -1;
  }

  // Sends `request` and reads the reply to its end, within 10 s (generous:
  // this is no timing test); "" when it did not come.
  // With `split`, the first `split` bytes go first and the rest 50 ms later,
  // so that the server most likely takes the connection before the request
  // is whole (the outcome never depends on it).
  std::string Ask(const std::string& request, size_t split = 0) const {
    const int fd = Connect();
    if (fd < 0) return "";
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    std::string got;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    const auto part = [&](size_t from, size_t to) {
      return send(fd, request.data() + from, to - from, MSG_NOSIGNAL) ==
             static_cast<ssize_t>(to - from);
    };
    const bool sent = split == 0 || part(0, split);
    if (split != 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (sent && part(split, request.size())) {
      char buf[512];
      for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              end - std::chrono::steady_clock::now())
                              .count();
        pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
        if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) {
          got.clear();
          break;
        }
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
    }
    close(fd);
    return got;
  }

  char dir_[32] = "/tmp/nri-metrics-XXXXXX";
  std::string body_ = "x 1\n";  // what /metrics serves; set before SetUp
  std::string path_;
  std::unique_ptr<MetricsServer> server_;
  std::vector<int> idle_;
};

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

std::string StatusLine(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }

// Finding 3: idle peers held the port, one at a time for 2 s each.
TEST_F(Server, AScrapeCompletesWhile32IdleConnectionsAreHeldOpen) {
  for (int i = 0; i < 32; ++i) {
    const int fd = Connect();
    ASSERT_GE(fd, 0) << "connection " << i;
    idle_.push_back(fd);
  }
  const std::string got = Ask(kGet);
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
  EXPECT_EQ(got.substr(got.size() - 4), "x 1\n");
}

// Past the budget (64 at once), a new connection takes the place of the
// oldest one still sending its request: a scrape whose request comes in
// two parts is kept.
TEST_F(Server, AScrapeCompletesPastTheBudgetOfIdleConnections) {
  for (int i = 0; i < 200; ++i) {
    const int fd = Connect();
    ASSERT_GE(fd, 0) << "connection " << i;
    idle_.push_back(fd);
  }
  EXPECT_EQ(StatusLine(Ask(kGet, 10)), "HTTP/1.1 200 OK");
}

// A head that does not fit is answered at once, not waited on.
TEST_F(Server, AHeadOverTheLimitIs431AndOneAtItIsServed) {
  const std::string start = "GET /metrics HTTP/1.1\r\nX: ";
  const std::string at = start + std::string(kMaxRequestHead - start.size() - 4, 'a') + "\r\n\r\n";
  EXPECT_EQ(StatusLine(Ask(at)), "HTTP/1.1 200 OK");
  EXPECT_EQ(StatusLine(Ask(std::string(kMaxRequestHead, 'a'))),
            "HTTP/1.1 431 Request Header Fields Too Large");
}

// How long until the server closes `fd` (EOF or a reset), in ms; -1 when
// it stays open for `wait_ms`.
int64_t MsUntilClosed(int fd, int wait_ms) {
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::milliseconds(wait_ms);
  char buf[4096];
  for (;;) {
    const auto left = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                               end - std::chrono::steady_clock::now())
                                               .count());
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return -1;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0 && !(n < 0 && errno == EAGAIN)) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start)
          .count();
    }
    if (left == 0) return -1;
  }
}

// Each connection gets 1 s from accept: one that never sends is closed then,
// not held (nor after 30 s).
TEST_F(Server, AnIdleConnectionIsClosedAfterItsSecond) {
  const int fd = Connect();
  ASSERT_GE(fd, 0);
  idle_.push_back(fd);
  const int64_t ms = MsUntilClosed(fd, 5000);
  EXPECT_GE(ms, 0) << "still open after 5 s";
  EXPECT_LT(ms, 3000);
}

// 64 idle connections are all kept; the 65th takes the place of the oldest
// at once, long before the oldest's second is up.
TEST_F(Server, PastSixtyFourTheOldestIdleConnectionMakesRoom) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 64; ++i) {
    const int fd = Connect();
    ASSERT_GE(fd, 0) << "connection " << i;
    idle_.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(MsUntilClosed(idle_.front(), 0), -1) << "closed with 64 connections open";
  EXPECT_EQ(MsUntilClosed(idle_.back(), 0), -1) << "closed with 64 connections open";
  const int extra = Connect();
  ASSERT_GE(extra, 0);
  idle_.push_back(extra);
  EXPECT_GE(MsUntilClosed(idle_.front(), 2000), 0);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  EXPECT_LT(took, 900) << "closed by its deadline, not to make room";
  EXPECT_EQ(MsUntilClosed(extra, 0), -1);
}

// A reply larger than the socket takes at once is in progress: a new
// connection past the cap never evicts it, only one still sending its request.
class BigReplyServer : public Server {
 protected:
  BigReplyServer() { body_ = std::string(size_t{4} << 20, 'x'); }
};

TEST_F(BigReplyServer, AReplyInProgressIsNeverEvicted) {
  const int fd = Connect();
  ASSERT_GE(fd, 0);
  idle_.push_back(fd);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 65; ++i) {
    const int other = Connect();
    ASSERT_GE(other, 0) << "connection " << i;
    idle_.push_back(other);
  }
  std::string got;
  char buf[65536];
  for (;;) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(StatusLine(got), "HTTP/1.1 200 OK");
  EXPECT_GE(got.size(), body_.size()) << "the reply was cut short";
}

}  // namespace
}  // namespace ocirlimit::nri
