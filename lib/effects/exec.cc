#include "effects/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "formats/text.h"

namespace ocirlimit {

namespace {

using Clock = std::chrono::steady_clock;

// Why a run failed before its exit status counts: a step and its errno.
struct Failure {
  std::string what;  // "" while nothing failed
  int err = 0;
};

std::string NoExit(int timeout_ms) { return "no exit after " + std::to_string(timeout_ms) + " ms"; }

// Starts argv[0] with stdin /dev/null, stderr discarded and stdout into a
// pipe: its pid, and the pipe's read end in *stdout_fd.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& what, int* stdout_fd) {
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
  *stdout_fd = out[0];
  return pid;
}

// Reads `fd` into *text until EOF, the deadline, or more than max_bytes.
Failure ReadUntilEof(int fd, Clock::time_point deadline, int timeout_ms, size_t max_bytes,
                     std::string* text) {
  char buf[8192];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return {NoExit(timeout_ms)};
    struct pollfd p {
      fd, POLLIN, 0
    };
    int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return {"poll", errno};
    if (r == 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return {"read", errno};
    if (n == 0) return {};
    text->append(buf, static_cast<size_t>(n));
    if (text->size() > max_bytes) {
      return {"output larger than " + std::to_string(max_bytes) + " bytes"};
    }
  }
}

// Waits for `pid` (killed already when *failure is set) and returns its
// wait status; kills it, and sets *failure, when it outlives the deadline.
Result<int> Reap(pid_t pid, Clock::time_point deadline, int timeout_ms, const std::string& what,
                 Failure* failure) {
  int status = 0;
  // EOF came or the child was killed: it exits promptly either way (a child
  // that closed stdout but keeps running is killed at the deadline).
  for (;;) {
    pid_t w = waitpid(pid, &status, failure->what.empty() ? WNOHANG : 0);
    if (w == pid) return status;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return MakeError(what + ": waitpid", errno);
    if (Clock::now() >= deadline) {
      kill(pid, SIGKILL);
      failure->what = NoExit(timeout_ms);
      continue;
    }
    usleep(1000);
  }
}

}  // namespace

Result<std::string> RunCaptured(const std::vector<std::string>& argv, int timeout_ms,
                                size_t max_bytes) {
  if (argv.empty()) return MakeError("run: no program");
  const std::string what = "run " + Quote(argv[0]);
  int out = -1;
  auto pid = Spawn(argv, what, &out);
  if (!pid) return pid.error();
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string text;
  Failure failure = ReadUntilEof(out, deadline, timeout_ms, max_bytes, &text);
  close(out);
  if (!failure.what.empty()) kill(*pid, SIGKILL);
  auto status = Reap(*pid, deadline, timeout_ms, what, &failure);
  if (!status) return status.error();
  if (!failure.what.empty()) return MakeError(what + ": " + failure.what, failure.err);
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return text;
  if (WIFEXITED(*status)) {
    return MakeError(what + ": exit status " + std::to_string(WEXITSTATUS(*status)));
  }
  return MakeError(what + ": killed by signal " + std::to_string(WTERMSIG(*status)));
}

}  // namespace ocirlimit
