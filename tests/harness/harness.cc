#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ocirlimit::itest {
namespace fs = std::filesystem;

namespace {

void SetCloexec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

}  // namespace

CmdResult RunCmd(const std::vector<std::string>& argv, const RunOptions& opts) {
  CmdResult res;
  int in[2], out[2], err[2];
  // Atomically close-on-exec: tests that call RunCmd from several threads
  // must not hand one child's pipes to another (a stray write end held by a
  // sibling delays EOF and shows up as a leaked fd).
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
    res.err = "pipe failed";
    return res;
  }
  for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) SetCloexec(fd);
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
  for (const auto& e : opts.env) {
    std::string key = e.substr(0, e.find('='));
    std::erase_if(env_store, [&](const std::string& s) { return s.starts_with(key + "="); });
    env_store.push_back(e);
  }
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env_store) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (!opts.cwd.empty() && chdir(opts.cwd.c_str()) != 0) _exit(126);
    execvpe(cargv[0], cargv.data(), cenv.data());
    dprintf(2, "exec %s: %s\n", cargv[0], strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  signal(SIGPIPE, SIG_IGN);
  size_t written = 0;
  if (opts.stdin_data.empty()) {
    close(in[1]);
    in[1] = -1;
  } else {
    fcntl(in[1], F_SETFL, O_NONBLOCK);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opts.timeout_s);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out[0], POLLIN, 0});
    if (err_open) fds.push_back({err[0], POLLIN, 0});
    if (in[1] >= 0) fds.push_back({in[1], POLLOUT, 0});
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) {
      kill(-pid, SIGKILL);
      res.err += "\n[harness: timed out after " + std::to_string(opts.timeout_s) + " s]";
      break;
    }
    if (poll(fds.data(), fds.size(), left) < 0 && errno != EINTR) break;
    for (const auto& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in[1]) {
        ssize_t n =
            write(in[1], opts.stdin_data.data() + written, opts.stdin_data.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 || written == opts.stdin_data.size()) {
          close(in[1]);
          in[1] = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t n = read(p.fd, buf, sizeof buf);
      std::string& sink = p.fd == out[0] ? res.out : res.err;
      if (n > 0) {
        sink.append(buf, static_cast<size_t>(n));
      } else {
        (p.fd == out[0] ? out_open : err_open) = false;
      }
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  res.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return res;
}

CmdResult Sh(const std::string& script, const RunOptions& opts) {
  return RunCmd({"/bin/sh", "-c", script}, opts);
}

TempDir::~TempDir() {
  // Unmounted here; the base then removes the tree.
  const std::string& dir = path();
  std::vector<std::string> mounts;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    std::istringstream ls(line);
    std::string id, parent, devno, root, point;
    ls >> id >> parent >> devno >> root >> point;
    if (point.starts_with(dir + "/") || point == dir) mounts.push_back(point);
  }
  std::sort(mounts.rbegin(), mounts.rend());
  for (const auto& m : mounts) umount2(m.c_str(), MNT_DETACH);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content, mode_t mode) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << content;
  }
  chmod(path.c_str(), mode);
}

std::string OurBinary(const std::string& name) {
  // The same tests against another build of the programs: the portable ones
  // (scripts/build-node.sh). Test-only programs (oci-prlimit-helper-testing,
  // probes) are not part of that build and come from this one.
  const char* other = std::getenv("OCI_RLIMIT_TEST_BIN_DIR");
  if (other != nullptr && *other != '\0') {
    std::string there = std::string(other) + "/" + name;
    if (access(there.c_str(), X_OK) == 0) return there;
  }
  return std::string(OCI_RLIMIT_BIN_DIR) + "/" + name;
}

std::optional<std::string> Which(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? std::optional(program) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');) {
    std::string full = dir + "/" + program;
    if (access(full.c_str(), X_OK) == 0) return full;
  }
  return std::nullopt;
}

std::optional<std::string> MissingPrerequisite(const std::vector<std::string>& programs) {
  if (geteuid() != 0) return "integration tests need root";
  for (const auto& p : programs) {
    if (!Which(p)) return p + " is not installed";
  }
  return std::nullopt;
}

bool RuntimesRequired() {
  const char* v = std::getenv("OCI_RLIMIT_REQUIRE_RUNTIMES");
  return v != nullptr && std::string(v) == "1";
}

std::string MakeRootfs(const std::string& dir) {
  std::string rootfs = dir + "/rootfs";
  for (const char* sub : {"", "/bin", "/proc", "/sys", "/dev", "/tmp", "/etc"}) {
    fs::create_directories(rootfs + sub);
  }
  fs::copy_file("/bin/busybox", rootfs + "/bin/busybox", fs::copy_options::overwrite_existing);
  for (const char* applet : {"sh", "cat", "grep", "sleep", "true", "echo", "ls", "head", "env",
                             "id", "sed", "awk", "wc", "tr", "cut", "ps"}) {
    std::error_code ec;
    fs::create_symlink("busybox", rootfs + "/bin/" + applet, ec);
  }
  WriteFile(rootfs + "/etc/passwd", "root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n");
  WriteFile(rootfs + "/etc/group", "root:x:0:\nnogroup:x:65534:\n");
  return rootfs;
}

Json MakeBundle(const std::string& dir, const std::vector<std::string>& args) {
  MakeRootfs(dir);
  std::error_code ec;
  fs::remove(dir + "/config.json", ec);
  CmdResult spec = RunCmd({"runc", "spec", "--bundle", dir});
  if (spec.status != 0) {
    ADD_FAILURE() << "runc spec failed: " << spec.err;
    return Json::object();
  }
  Json j = ReadSpec(dir);
  j["process"]["terminal"] = false;
  j["process"]["args"] = args;
  j["root"]["path"] = "rootfs";
  WriteSpec(dir, j);
  return j;
}

void WriteSpec(const std::string& bundle, const Json& spec) {
  WriteFile(bundle + "/config.json", spec.dump(2));
}

Json ReadSpec(const std::string& bundle) { return Json::parse(ReadFile(bundle + "/config.json")); }

Json HookEntry(const std::string& path, const std::vector<std::string>& args,
               const std::vector<std::string>& env) {
  Json h = {{"path", path}, {"args", args}};
  if (!env.empty()) h["env"] = env;
  return h;
}

std::string CrunCommand(const std::string& dir) {
  std::string script = dir + "/crun-here.sh";
  WriteFile(script,
            "#!/bin/sh\n"
            "# crun refuses this sandbox's hybrid cgroup layout; hide cgroup2 from it.\n"
            "if [ -d /sys/fs/cgroup/unified ] && mountpoint -q /sys/fs/cgroup/unified; then\n"
            "  exec unshare -m sh -c 'umount /sys/fs/cgroup/unified && exec crun \"$@\"' crun "
            "\"$@\"\n"
            "fi\n"
            "exec crun \"$@\"\n",
            0755);
  return script;
}

std::string Unescaped(std::string text) {
  for (size_t at; (at = text.find("\\\"")) != std::string::npos;) text.replace(at, 2, "\"");
  return text;
}

std::optional<Limit> LimitRow(const std::string& text, const std::string& row) {
  std::istringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (!line.starts_with(row)) continue;
    std::istringstream ls(line.substr(row.size()));
    std::string soft, hard;
    ls >> soft >> hard;
    auto value = [](const std::string& s) {
      return s == "unlimited" ? UINT64_MAX : std::stoull(s);
    };
    return Limit{value(soft), value(hard)};
  }
  return std::nullopt;
}

std::optional<Limit> MemlockOf(const CmdResult& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  return LimitRow(r.out, kMemlock);
}

std::string FormatLimit(const std::optional<Limit>& l) {
  if (!l) return "(none)";
  std::ostringstream os;
  os << *l;
  return os.str();
}

std::string UniqueId(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace ocirlimit::itest
