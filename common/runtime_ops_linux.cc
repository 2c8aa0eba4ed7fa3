#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "files.h"
#include "runtime_ops.h"

extern char** environ;

namespace ocirlimit {
namespace {

// `runc state` and `--version` answer at once; this only bounds a wedged runtime.
constexpr int kOutputTimeoutMs = 30000;
constexpr size_t kMaxOutputBytes = 4 << 20;

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string CommandText(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return "`" + out + "`";
}

std::optional<FileId> IdOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "(no message)" : line;
}

class Pipe {
 public:
  Pipe() {
    if (pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
  }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool ok() const { return fds_[0] >= 0; }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void CloseRead() { Close(fds_[0]); }
  void CloseWrite() { Close(fds_[1]); }

 private:
  static void Close(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

class LinuxOps final : public RuntimeOps {
 public:
  Result<Config> LoadConfig() override { return ocirlimit::LoadConfig(std::nullopt, ProcessEnv()); }

  std::optional<std::string> Getenv(std::string_view name) override {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }

  std::optional<FileId> Probe(const std::string& path) override {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (access(path.c_str(), X_OK) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
  }

  Result<FileId> Self() override {
    auto id = IdOf("/proc/self/exe");
    if (!id) return MakeError("stat \"/proc/self/exe\"", errno);
    return *id;
  }

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }

  Status ReplaceFile(const std::string& path, const std::string& content) override {
    return AtomicWriteFile(path, content);
  }

  Status AppendLine(const std::string& path, const std::string& line) override {
    return ocirlimit::AppendLine(path, line);
  }

  Result<std::string> Output(const std::vector<std::string>& argv) override {
    Pipe out, err;
    if (!out.ok() || !err.ok()) return MakeError("pipe", errno);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out.write_end(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.write_end(), STDERR_FILENO);
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return MakeError("run " + CommandText(argv), rc);
    out.CloseWrite();
    err.CloseWrite();

    std::string stdout_text, stderr_text;
    bool timed_out = false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kOutputTimeoutMs);
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
      pollfd fds[2] = {{out_open ? out.read_end() : -1, POLLIN, 0},
                       {err_open ? err.read_end() : -1, POLLIN, 0}};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        kill(pid, SIGKILL);
        break;
      }
      if (poll(fds, 2, static_cast<int>(left.count())) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[65536];
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        std::string& sink = i == 0 ? stdout_text : stderr_text;
        if (n > 0 && sink.size() < kMaxOutputBytes) sink.append(buf, static_cast<size_t>(n));
        if (n <= 0) (i == 0 ? out_open : err_open) = false;
      }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return MakeError(CommandText(argv) + " gave no answer within " +
                       std::to_string(kOutputTimeoutMs / 1000) + " s");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::string how = WIFEXITED(status)
                            ? "exited with status " + std::to_string(WEXITSTATUS(status))
                            : "was killed by signal " + std::to_string(WTERMSIG(status));
      return MakeError(CommandText(argv) + " " + how + ": " + FirstLine(stderr_text));
    }
    return stdout_text;
  }

  std::string Now() override {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
  }

  void Stderr(const std::string& line) override { WriteAll(STDERR_FILENO, line + "\n"); }

  Error Exec(const std::string& path, const std::vector<std::string>& argv) override {
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(path.c_str(), cargv.data());
    return MakeError("exec " + Quote(path), errno);
  }
};

}  // namespace

RuntimeOps& LinuxRuntimeOps() {
  static LinuxOps ops;
  return ops;
}

}  // namespace ocirlimit
