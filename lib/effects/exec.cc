#include "effects/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "core/text.h"

namespace ocirlimit {

Result<std::string> RunCaptured(const std::vector<std::string>& argv, int timeout_ms,
                                size_t max_bytes) {
  if (argv.empty()) return MakeError("run: no program");
  const std::string what = "run " + Quote(argv[0]);
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return MakeError(what + ": pipe", errno);
  const pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(out[0]);
    close(out[1]);
    return MakeError(what + ": fork", err);
  }
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDERR_FILENO);
    }
    dup2(out[1], STDOUT_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(out[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string text;
  std::string failure;
  int failure_errno = 0;
  char buf[8192];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      failure = "no exit after " + std::to_string(timeout_ms) + " ms";
      break;
    }
    struct pollfd p {
      out[0], POLLIN, 0
    };
    int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      failure = "poll";
      failure_errno = errno;
      break;
    }
    if (r == 0) continue;
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      failure = "read";
      failure_errno = errno;
      break;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      failure = "output larger than " + std::to_string(max_bytes) + " bytes";
      break;
    }
  }
  close(out[0]);
  if (!failure.empty()) kill(pid, SIGKILL);
  int status = 0;
  // EOF came or the child was killed: it exits promptly either way (a child
  // that closed stdout but keeps running is killed at the deadline).
  for (;;) {
    pid_t w = waitpid(pid, &status, failure.empty() ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return MakeError(what + ": waitpid", errno);
    if (Clock::now() >= deadline) {
      kill(pid, SIGKILL);
      failure = "no exit after " + std::to_string(timeout_ms) + " ms";
      continue;
    }
    usleep(1000);
  }
  if (!failure.empty()) return MakeError(what + ": " + failure, failure_errno);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return text;
  if (WIFEXITED(status)) {
    return MakeError(what + ": exit status " + std::to_string(WEXITSTATUS(status)));
  }
  return MakeError(what + ": killed by signal " + std::to_string(WTERMSIG(status)));
}

}  // namespace ocirlimit
