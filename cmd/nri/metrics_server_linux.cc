#include "nri/metrics_server_linux.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "formats/text.h"

namespace ocirlimit::nri {
namespace {

constexpr int kClientTimeoutMs = 2000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFor(int fd, short events, int64_t deadline) {
  for (;;) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) return false;
    pollfd p{.fd = fd, .events = events, .revents = 0};
    const int n = poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

// Reads one request head, answers it, closes.
void ServeClient(int fd, const std::function<std::string()>& metrics) {
  const int64_t deadline = NowMs() + kClientTimeoutMs;
  std::string head;
  std::array<char, 1024> buf{};
  while (!RequestHeadComplete(head) && head.size() < kMaxRequestHead) {
    if (!WaitFor(fd, POLLIN, deadline)) return;
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;
    head.append(buf.data(), static_cast<size_t>(n));
  }
  const std::string reply = HttpReply(head, metrics);
  size_t sent = 0;
  while (sent < reply.size()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return;
    const ssize_t n = send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
}

class LinuxMetricsServer : public MetricsServer {
 public:
  LinuxMetricsServer(int listen_fd, int stop_read, int stop_write,
                     std::function<std::string()> metrics)
      : listen_(listen_fd),
        stop_read_(stop_read),
        stop_write_(stop_write),
        metrics_(std::move(metrics)),
        thread_([this] { Loop(); }) {}
  ~LinuxMetricsServer() override {
    const char c = 's';
    while (write(stop_write_, &c, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    close(listen_);
    close(stop_read_);
    close(stop_write_);
  }
  LinuxMetricsServer(const LinuxMetricsServer&) = delete;
  LinuxMetricsServer& operator=(const LinuxMetricsServer&) = delete;

 private:
  void Loop() {
    for (;;) {
      std::array<pollfd, 2> p{pollfd{.fd = listen_, .events = POLLIN, .revents = 0},
                              pollfd{.fd = stop_read_, .events = POLLIN, .revents = 0}};
      if (poll(p.data(), p.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      const int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      ServeClient(fd, metrics_);
      close(fd);
    }
  }

  int listen_;
  int stop_read_;
  int stop_write_;
  std::function<std::string()> metrics_;
  std::thread thread_;
};

Result<int> BindUnix(const std::string& path) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size());
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return MakeError("socket", errno);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    const int err = errno;
    close(fd);
    return MakeError("bind " + Quote(path), err);
  }
  constexpr mode_t kMode = 0660;
  chmod(path.c_str(), kMode);
  return fd;
}

Result<int> BindTcp(const MetricsAddress& addr) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  const bool v6 = addr.host.find(':') != std::string::npos;
  if (v6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&ss);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(addr.port);
    inet_pton(AF_INET6, addr.host.c_str(), &sa->sin6_addr);
    len = sizeof *sa;
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(addr.port);
    inet_pton(AF_INET, addr.host.c_str(), &sa->sin_addr);
    len = sizeof *sa;
  }
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return MakeError("socket", errno);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&ss), len) != 0) {
    const int err = errno;
    close(fd);
    return MakeError("bind " + addr.host + ":" + std::to_string(addr.port), err);
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> StartMetricsServer(const MetricsAddress& addr,
                                                          std::function<std::string()> metrics) {
  auto fd = addr.kind == MetricsAddress::Kind::kUnix ? BindUnix(addr.path) : BindTcp(addr);
  if (!fd) return fd.error().Wrap("--metrics-address");
  constexpr int kBacklog = 16;
  std::array<int, 2> stop{-1, -1};
  if (listen(*fd, kBacklog) != 0 || pipe2(stop.data(), O_CLOEXEC) != 0) {
    const int err = errno;
    close(*fd);
    return MakeError("--metrics-address: listen", err);
  }
  return std::unique_ptr<MetricsServer>(
      std::make_unique<LinuxMetricsServer>(*fd, stop[0], stop[1], std::move(metrics)));
}

}  // namespace ocirlimit::nri
