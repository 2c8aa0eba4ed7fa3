#include "nri/serve_linux.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "effects/files.h"
#include "formats/log_line.h"
#include "formats/text.h"

namespace ocirlimit::nri {
namespace {

constexpr const char* kName = "oci-rlimit-nri";

int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_reload = 0;
volatile sig_atomic_t g_stop = 0;

void OnSignal(int sig) {
  int saved = errno;
  (sig == SIGHUP ? g_reload : g_stop) = 1;
  char c = 0;
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &c, 1);
  errno = saved;
}

// Polls fd (if >= 0) for `events` and the signal pipe.
Result<Wake> PollWith(int fd, short events, int timeout_ms) {
  std::array<pollfd, 2> p{};
  p[0] = {g_pipe[0], POLLIN, 0};
  p[1] = {fd, events, 0};
  int n = poll(p.data(), fd >= 0 ? 2 : 1, timeout_ms);
  if (n < 0 && errno == EINTR) return Wake::kSignal;
  if (n < 0) return MakeError("poll", errno);
  if (n == 0) return Wake::kTimeout;
  if ((p[0].revents & POLLIN) != 0) return Wake::kSignal;
  return Wake::kReadable;
}

class FdConn : public Conn {
 public:
  explicit FdConn(int fd) : fd_(fd) {}
  ~FdConn() override { close(fd_); }
  FdConn(const FdConn&) = delete;
  FdConn& operator=(const FdConn&) = delete;

  Result<Wake> Wait(int timeout_ms) override { return PollWith(fd_, POLLIN, timeout_ms); }
  std::optional<PeerCred> Peer() const override {
    ucred c{};
    socklen_t len = sizeof(c);
    if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) return std::nullopt;
    return PeerCred{c.pid, c.uid};
  }

  Result<ReadResult> Read() override {
    ReadResult r;
    r.data.resize(size_t{16} * 1024);  // a CreateContainer is ~1 KiB: little heap kept touched
    ssize_t n = read(fd_, r.data.data(), r.data.size());
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      n = 0;  // nothing after all; the loop polls again
    } else if (n < 0) {
      return MakeError("read from the runtime", errno);
    } else if (n == 0) {
      r.eof = true;
    }
    r.data.resize(static_cast<size_t>(n));
    return r;
  }

  Status Write(std::string_view data, int timeout_ms) override {
    // One deadline for the whole reply, not per partial write.
    auto left = timeout_ms;
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return MakeError("write to the runtime", errno);
      std::array<pollfd, 1> p{{{fd_, POLLOUT, 0}}};
      struct timespec t0 {};
      clock_gettime(CLOCK_MONOTONIC, &t0);
      int got = poll(p.data(), 1, left);
      if (got < 0 && errno != EINTR) return MakeError("poll", errno);
      struct timespec t1 {};
      clock_gettime(CLOCK_MONOTONIC, &t1);
      left -=
          static_cast<int>((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
      if (got == 0 || left <= 0) {
        return MakeError("the runtime stopped reading (no progress within " +
                         std::to_string(timeout_ms) + " ms)");
      }
    }
    return Ok{};
  }

 private:
  int fd_;
};

class UnixConnectorImpl : public Connector {
 public:
  explicit UnixConnectorImpl(std::string path) : path_(std::move(path)) {}

  Result<std::unique_ptr<Conn>> Connect() override {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) {
      return MakeError("socket " + Quote(path_) + ": path too long");
    }
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return MakeError("socket", errno);
    // A unix connect completes at once or fails (EAGAIN: backlog full, retried later).
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      int err = errno;
      close(fd);
      return MakeError("connect to " + Quote(path_), err);
    }
    return std::unique_ptr<Conn>(new FdConn(fd));
  }

  Wake Sleep(int ms) override {
    auto w = PollWith(-1, 0, ms);
    return w ? *w : Wake::kTimeout;
  }

 private:
  std::string path_;
};

class InheritedConnectorImpl : public Connector {
 public:
  explicit InheritedConnectorImpl(int fd) : fd_(fd) {}

  Result<std::unique_ptr<Conn>> Connect() override {
    if (fd_ < 0) return MakeError("the runtime's socket (NRI_PLUGIN_SOCKET) is closed");
    int fd = fd_;
    fd_ = -1;
    int type = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
      return MakeError("NRI_PLUGIN_SOCKET=" + std::to_string(fd) + ": not a socket", errno);
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      return MakeError("NRI_PLUGIN_SOCKET=" + std::to_string(fd) + ": fcntl", errno);
    }
    return std::unique_ptr<Conn>(new FdConn(fd));
  }

  Wake Sleep(int ms) override {
    auto w = PollWith(-1, 0, ms);
    return w ? *w : Wake::kTimeout;
  }

 private:
  int fd_;
};

bool StderrIsDevNull() {
  struct stat err {};
  struct stat null {};
  if (fstat(STDERR_FILENO, &err) != 0) return true;  // closed
  if (stat("/dev/null", &null) != 0) return false;
  return S_ISCHR(err.st_mode) && err.st_rdev == null.st_rdev;
}

// The queue's writer: stderr with a plain (blocking: this is the writer's
// own thread) write, the log-file with AppendLine. A FIFO or a device as the
// log-file is refused, never waited on; what cannot be written is said on
// stderr.
class FdLineWriter : public LineWriter {
 public:
  Status Write(const std::string& file, const std::string& line) override {
    if (file.empty()) return WriteAll(STDERR_FILENO, line + "\n");
    struct stat st {};
    Status logged = Ok{};
    if (lstat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      logged = MakeError("log-file " + Quote(file) + " is not a regular file; not written");
    } else {
      logged = AppendLine(file, line);
    }
    if (!logged) {
      [[maybe_unused]] auto said = WriteAll(
          STDERR_FILENO, std::string(kName) + ": warning: " + logged.error().Text() + "\n");
    }
    return logged;
  }
};

}  // namespace

Status InstallSignals() {
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return MakeError("pipe2", errno);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGHUP, SIGTERM, SIGINT}) {
    if (sigaction(sig, &sa, nullptr) != 0) return MakeError("sigaction", errno);
  }
  signal(SIGPIPE, SIG_IGN);
  return Ok{};
}

PendingSignals TakeSignals() {
  std::array<char, 64> buf{};
  while (read(g_pipe[0], buf.data(), buf.size()) > 0) {
  }
  PendingSignals p;
  p.reload = g_reload != 0;
  p.stop = g_stop != 0;
  g_reload = 0;
  return p;
}

std::unique_ptr<Connector> UnixConnector(const std::string& path) {
  return std::make_unique<UnixConnectorImpl>(path);
}

std::unique_ptr<Connector> InheritedConnector(int fd) {
  return std::make_unique<InheritedConnectorImpl>(fd);
}

StderrOutput::StderrOutput()
    : StderrOutput(std::make_unique<FdLineWriter>(), std::make_unique<FdLineWriter>(),
                   StderrIsDevNull()) {}

StderrOutput::StderrOutput(std::unique_ptr<LineWriter> err_writer,
                           std::unique_ptr<LineWriter> file_writer, bool quiet)
    : quiet_(quiet), err_(std::move(err_writer)), files_(std::move(file_writer)) {}

void StderrOutput::Say(const std::string& msg) {
  if (!quiet_) err_.Push("", std::string(kName) + ": " + OneLine(msg));
}

void StderrOutput::Emit(const std::string& file, const std::string& line) {
  if (!file.empty()) files_.Push(file, line);
  if (!quiet_) err_.Push("", line);
}

void StderrOutput::LogLine(const Config& cfg, const std::string& line) {
  if (holding_) {
    held_.emplace_back(cfg.log_file, line);
    return;
  }
  Emit(cfg.log_file, line);
}

void StderrOutput::HoldLogLines() { holding_ = true; }

void StderrOutput::ReleaseLogLines(const ReplyFate& fate) {
  holding_ = false;
  std::vector<std::pair<std::string, std::string>> held;
  held.swap(held_);
  if (fate.sent && !fate.late) {
    for (const auto& [file, line] : held) Emit(file, line);
    return;
  }
  const std::string why = !fate.sent
                              ? "the reply was not written (" + fate.why + ")"
                              : "the reply was written " + std::to_string(fate.elapsed_us / 1000) +
                                    " ms after the request, past the runtime's " +
                                    std::to_string(fate.deadline_us / 1000) + " ms deadline";
  Say("warning: " + why + "; the runtime may have created the " + std::to_string(fate.answered) +
      " container(s) of that batch unadjusted");
  for (const auto& [file, line] : held) {
    Emit(file, line.find(" via=\"nri\" ") == std::string::npos ? line : NotAppliedLine(line, why));
  }
}

}  // namespace ocirlimit::nri
