#include "nri/metrics/metrics_server_linux.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "formats/text.h"

namespace ocirlimit::nri {
namespace {

// Connections served at once; past it, a new one takes the place of the
// oldest still sending its request. Each has kClientTimeoutMs from accept
// to send its request and take its reply, then it is dropped.
constexpr size_t kMaxClients = 64;
constexpr int kClientTimeoutMs = 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Client {
  int fd = -1;
  int64_t deadline = 0;
  std::string in = {};   // the request head so far
  std::string out = {};  // the reply, once the head is read
  size_t sent = 0;
  bool done = false;  // answered, closed by its peer, or failed
};

// One poll() loop on one thread: every connection at once, none waited on.
class LinuxMetricsServer : public MetricsServer {
 public:
  LinuxMetricsServer(int listen_fd, int stop_read, int stop_write,
                     std::function<std::string()> metrics, std::function<bool()> ready)
      : listen_(listen_fd),
        stop_read_(stop_read),
        stop_write_(stop_write),
        metrics_(std::move(metrics)),
        ready_(std::move(ready)),
        thread_([this] { Loop(); }) {}
  ~LinuxMetricsServer() override {
    const char c = 's';
    while (write(stop_write_, &c, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    for (const auto& c : clients_) close(c.fd);
    close(listen_);
    close(stop_read_);
    close(stop_write_);
  }
  LinuxMetricsServer(const LinuxMetricsServer&) = delete;
  LinuxMetricsServer& operator=(const LinuxMetricsServer&) = delete;

 private:
  void Loop() {
    std::vector<pollfd> p;
    for (;;) {
      p.assign({pollfd{.fd = stop_read_, .events = POLLIN, .revents = 0},
                pollfd{.fd = listen_, .events = POLLIN, .revents = 0}});
      int64_t first = -1;
      for (const auto& c : clients_) {
        const short want = c.out.empty() ? POLLIN : POLLOUT;
        p.push_back(pollfd{.fd = c.fd, .events = want, .revents = 0});
        first = first < 0 ? c.deadline : std::min(first, c.deadline);
      }
      const int wait = first < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, first - NowMs()));
      if (poll(p.data(), p.size(), wait) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[0].revents != 0) return;
      for (size_t i = 0; i < clients_.size(); ++i) {
        if (p[i + 2].revents != 0) Serve(clients_[i]);
      }
      Drop(NowMs());
      if (p[1].revents != 0) Accept();
    }
  }

  // Reads what is there; once the head is whole, sends what the socket takes.
  void Serve(Client& c) {
    std::array<char, 1024> buf{};
    while (c.out.empty()) {
      const ssize_t n = read(c.fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {
        c.done = true;
        return;
      }
      c.in.append(buf.data(), static_cast<size_t>(n));
      const HeadState st = RequestHeadState(c.in);
      if (st == HeadState::kComplete) c.out = HttpReply(c.in, metrics_, ready_);
      if (st == HeadState::kTooLong) c.out = HeadTooLongReply();
    }
    while (c.sent < c.out.size()) {
      const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) break;
      c.sent += static_cast<size_t>(n);
    }
    if (c.sent == c.out.size()) shutdown(c.fd, SHUT_WR);
    c.done = true;
  }

  // Closes the answered, the failed and those past their deadline.
  void Drop(int64_t now) {
    std::erase_if(clients_, [now](const Client& c) {
      if (!c.done && c.deadline > now) return false;
      close(c.fd);
      return true;
    });
  }

  // Takes every waiting connection; each is served at once (a scraper's
  // request is usually there already). When full, the oldest connection
  // still sending its request makes room; with none, the new one is closed.
  void Accept() {
    for (size_t n = 0; n < kMaxClients; ++n) {
      const int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      Client c{.fd = fd, .deadline = NowMs() + kClientTimeoutMs};
      Serve(c);
      if (c.done) {
        close(fd);
        continue;
      }
      if (clients_.size() >= kMaxClients && !Evict()) {
        close(fd);
        continue;
      }
      clients_.push_back(std::move(c));
    }
  }

  bool Evict() {
    auto oldest = clients_.end();
    for (auto it = clients_.begin(); it != clients_.end(); ++it) {
      if (it->out.empty() && (oldest == clients_.end() || it->deadline < oldest->deadline)) {
        oldest = it;
      }
    }
    if (oldest == clients_.end()) return false;
    close(oldest->fd);
    clients_.erase(oldest);
    return true;
  }

  int listen_;
  int stop_read_;
  int stop_write_;
  std::function<std::string()> metrics_;
  std::function<bool()> ready_;
  std::vector<Client> clients_;  // the loop's own; the destructor's after join
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
                                                          std::function<std::string()> metrics,
                                                          std::function<bool()> ready) {
  auto fd = addr.kind == MetricsAddress::Kind::kUnix ? BindUnix(addr.path) : BindTcp(addr);
  if (!fd) return fd.error().Wrap("--metrics-address");
  constexpr int kBacklog = 16;
  std::array<int, 2> stop{-1, -1};
  if (listen(*fd, kBacklog) != 0 || pipe2(stop.data(), O_CLOEXEC) != 0) {
    const int err = errno;
    close(*fd);
    return MakeError("--metrics-address: listen", err);
  }
  return std::unique_ptr<MetricsServer>(std::make_unique<LinuxMetricsServer>(
      *fd, stop[0], stop[1], std::move(metrics), std::move(ready)));
}

}  // namespace ocirlimit::nri
