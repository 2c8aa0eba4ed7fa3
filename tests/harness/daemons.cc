#include "daemons.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

namespace ocirlimit::itest {
namespace fs = std::filesystem;

namespace {

constexpr auto kStopTimeout = std::chrono::seconds(60);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

constexpr const char* kShimSocketDir = "/run/containerd/s";
constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

// Paths the daemons create outside the dirs we give them, in removal order:
// files first, then directories deepest first.
const std::vector<std::string>& WatchedHostPaths() {
  static const std::vector<std::string> paths = {
      "/etc/docker/key.json",                                 // dockerd 20.10's libtrust key
      "/var/lib/containers/cache/blob-info-cache-v1.boltdb",  // podman import
      "/run/docker/plugins",
      "/run/docker",
      "/run/containerd/s",
      "/run/containerd/fifo",
      "/run/containerd/runc/default",
      "/run/containerd/runc/moby",
      "/run/containerd/runc",
      "/run/containerd",
      "/run/runc",            // podman's cleanup runs `runc delete` without --root
      "/opt/containerd/bin",  // containerd's opt plugin (dockerd's own containerd)
      "/opt/containerd/lib",
      "/opt/containerd",
      "/var/lib/containers/cache",
      "/var/lib/containers",
  };
  return paths;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A process we did not start (dockerd's containerd): SIGTERM and wait.
void StopForeign(pid_t pid, const std::string& must_mention) {
  if (pid <= 0) return;
  std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  if (cmdline.find(must_mention) == std::string::npos) return;  // gone, or someone else's
  kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  while (kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string TarRootfs(const TempDir& dir, std::string* error) {
  MakeRootfs(dir.path());
  std::string tar = dir / "rootfs.tar";
  CmdResult r = RunCmd({"tar", "-C", dir / "rootfs", "-cf", tar, "."});
  if (r.status != 0) *error = "tar rootfs: " + r.err;
  return tar;
}

}  // namespace

std::string Tail(const std::string& text, size_t max) {
  return text.size() <= max ? text : "..." + text.substr(text.size() - max);
}

std::string DescribeExit(const std::vector<std::string>& argv, const CmdResult& r) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd + " exited " + std::to_string(r.status) + ": " + Tail(r.err + r.out);
}

std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().string());
  return out;
}

std::optional<bool> SocketListens(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return std::nullopt;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  bool listening = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return listening;
}

std::vector<pid_t> ProcessesMentioning(const std::string& text) {
  std::vector<pid_t> out;
  for (const auto& entry : DirEntries("/proc")) {
    std::string name = fs::path(entry).filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFile(entry + "/cmdline");
    if (cmdline.find(text) != std::string::npos) out.push_back(std::atoi(name.c_str()));
  }
  return out;
}

bool WaitNoneMentions(const std::string& text, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ProcessesMentioning(text).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

// ---------------------------------------------------------------------------

std::optional<std::string> BackgroundProcess::Start(const std::vector<std::string>& argv,
                                                    const DaemonOptions& opts,
                                                    const std::string& log_path) {
  std::vector<std::string> full = Concat(opts.prefix, argv);
  std::vector<std::string> env_store;
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/sbin:/usr/bin:/sbin:/bin";
  for (auto it = opts.path_dirs.rbegin(); it != opts.path_dirs.rend(); ++it) {
    path = *it + ":" + path;
  }
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("PATH=")) env_store.emplace_back(*e);
  }
  env_store.push_back("PATH=" + path);
  for (const auto& e : opts.env) {
    std::string key = e.substr(0, e.find('=') + 1);
    std::erase_if(env_store, [&](const std::string& s) { return s.starts_with(key); });
    env_store.push_back(e);
  }
  std::vector<char*> cargv, cenv;
  for (const auto& a : full) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env_store) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return "open " + log_path + ": " + std::strerror(errno);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return std::string("fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    // A test binary that dies (ctest timeout, crash) takes its daemon along.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(log, 1);
    dup2(log, 2);
    execvpe(cargv[0], cargv.data(), cenv.data());
    dprintf(2, "exec %s: %s\n", cargv[0], strerror(errno));
    _exit(127);
  }
  close(log);
  pid_ = pid;
  log_path_ = log_path;
  started_ = Clock::now();
  return std::nullopt;
}

std::optional<std::string> BackgroundProcess::WaitReady(const std::string& what,
                                                        const NotReady& not_ready,
                                                        Clock::time_point deadline) {
  for (;;) {
    std::optional<std::string> why = not_ready();
    if (!why) return std::nullopt;
    std::string failed;
    if (!Running()) {
      failed = what + " exited during start-up";
    } else if (Clock::now() > deadline) {
      auto waited = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_);
      failed = what + " not ready " + std::to_string(waited.count()) + " s after its start";
    }
    if (!failed.empty()) {
      return failed + (why->empty() ? "" : ": " + *why) + "\n" + Tail(Log());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::optional<std::string> BackgroundProcess::WaitListening(const std::string& what,
                                                            const std::string& socket,
                                                            Clock::time_point deadline) {
  return WaitReady(
      what,
      [&]() -> std::optional<std::string> {
        if (SocketListens(socket).value_or(false)) return std::nullopt;
        return "nothing listens on " + socket;
      },
      deadline);
}

std::optional<std::string> BackgroundProcess::WaitForLog(const std::string& what,
                                                         const std::string& needle,
                                                         Clock::time_point deadline) {
  return WaitReady(
      what,
      [&]() -> std::optional<std::string> {
        if (Log().find(needle) != std::string::npos) return std::nullopt;
        return "no \"" + needle + "\" in its output";
      },
      deadline);
}

std::string BackgroundProcess::Log() const {
  return log_path_.empty() ? std::string() : ReadFile(log_path_);
}

bool BackgroundProcess::Running() {
  if (pid_ < 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;
  return false;
}

void BackgroundProcess::Stop() {
  if (!Running()) return;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  pid_ = -1;
}

// ---------------------------------------------------------------------------

HostLeftovers::HostLeftovers() {
  std::vector<std::string> watched = WatchedHostPaths();
  // Parent cgroups the daemons create in every hierarchy: docker's /docker,
  // ctr's /default (namespace), podman's /libpod_parent.
  for (const auto& hierarchy : DirEntries(kCgroupRoot)) {
    for (const char* sub : {"/docker", "/default", "/libpod_parent/conmon", "/libpod_parent"}) {
      watched.push_back(hierarchy + sub);
    }
  }
  for (const auto& p : watched) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(p, ec))) absent_.push_back(p);
  }
  shim_sockets_ = DirEntries(kShimSocketDir);
}

HostLeftovers::~HostLeftovers() {
  // Shim sockets of shims that are gone; a live shim (someone else's) listens.
  for (const auto& s : DirEntries(kShimSocketDir)) {
    if (std::find(shim_sockets_.begin(), shim_sockets_.end(), s) != shim_sockets_.end()) continue;
    if (!SocketListens(s).value_or(true)) unlink(s.c_str());  // unsure: keep it
  }
  for (const auto& p : absent_) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      rmdir(p.c_str());  // only when empty (a cgroup: no children, no tasks)
    } else {
      unlink(p.c_str());
    }
  }
}

// ---------------------------------------------------------------------------

Dockerd::Dockerd(const Options& opts) {
  client_ = Which("/usr/bin/docker").value_or("docker");  // docker.io's, matching dockerd
  fs::create_directories(dir_ / "docker-config");
  std::string tar = TarRootfs(dir_, &error_);
  if (!error_.empty()) return;
  WriteFile(dir_ / "daemon.json", opts.daemon_json.empty() ? "{}\n" : opts.daemon_json);
  std::vector<std::string> argv = {"dockerd",
                                   "--data-root",
                                   dir_ / "data",
                                   "--exec-root",
                                   dir_ / "exec",
                                   "--pidfile",
                                   dir_ / "dockerd.pid",
                                   "-H",
                                   "unix://" + (dir_ / "docker.sock"),
                                   "--config-file",
                                   dir_ / "daemon.json",
                                   "--iptables=false",
                                   "--ip-masq=false",
                                   "--ip-forward=false",
                                   "--bridge=none"};
  if (auto err = proc_.Start(argv, opts, dir_ / "dockerd.log")) {
    error_ = *err;
    return;
  }
  auto answers_info = [&]() -> std::optional<std::string> {
    if (CmdResult r = Docker({"info"}); r.status != 0) return "docker info: " + Tail(r.err, 500);
    return std::nullopt;
  };
  if (auto err = proc_.WaitReady("dockerd", answers_info)) {
    error_ = *err;
    return;
  }
  std::vector<std::string> import = {"import", tar, kBusyboxImage};
  if (CmdResult r = Docker(import); r.status != 0) error_ = DescribeExit(import, r);
}

Dockerd::~Dockerd() {
  if (proc_.Running()) {
    CmdResult ids = Docker({"ps", "-aq"});
    std::istringstream ss(ids.out);
    std::vector<std::string> rm = {"rm", "-f"};
    for (std::string id; ss >> id;) rm.push_back(id);
    if (rm.size() > 2) Docker(rm);
  }
  std::string containerd_pid = ReadFile(dir_ / "exec/containerd/containerd.pid");
  proc_.Stop();
  // dockerd stops the containerd it started; make sure, without waitpid rights.
  StopForeign(std::atoi(containerd_pid.c_str()), dir_.path());
}

CmdResult Dockerd::Docker(const std::vector<std::string>& args, const RunOptions& opts) {
  RunOptions o = opts;
  o.env.push_back("DOCKER_CONFIG=" + (dir_ / "docker-config"));
  return RunCmd(Concat({client_, "-H", "unix://" + (dir_ / "docker.sock")}, args), o);
}

CmdResult Dockerd::Run(const std::vector<std::string>& flags, const std::vector<std::string>& cmd) {
  std::vector<std::string> args = Concat({"run", "--rm", "--network", "none"}, flags);
  args.push_back(kBusyboxImage);
  return Docker(Concat(args, cmd));
}

std::string Dockerd::Log() const { return ReadFile(dir_ / "dockerd.log"); }

// ---------------------------------------------------------------------------

Containerd::Containerd(const DaemonOptions& opts) {
  rootfs_ = MakeRootfs(dir_.path());
  fs::create_directories(dir_ / "fifo");
  const std::string& d = dir_.path();
  WriteFile(dir_ / "containerd.toml",
            "version = 2\n"
            "root = \"" +
                d +
                "/root\"\n"
                "state = \"" +
                d +
                "/state\"\n"
                "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"
                "[grpc]\n"
                "  address = \"" +
                d +
                "/containerd.sock\"\n"
                "[ttrpc]\n"
                "  address = \"" +
                d +
                "/containerd.sock.ttrpc\"\n"
                "[debug]\n"
                "  address = \"" +
                d +
                "/debug.sock\"\n"
                "[plugins.\"io.containerd.internal.v1.opt\"]\n"
                "  path = \"" +
                d + "/opt\"\n");
  if (auto err = proc_.Start({"containerd", "--config", dir_ / "containerd.toml"}, opts,
                             dir_ / "containerd.log")) {
    error_ = *err;
    return;
  }
  auto answers_version = [&]() -> std::optional<std::string> {
    if (CmdResult r = Ctr({"version"}); r.status != 0) return "ctr version: " + Tail(r.err, 500);
    return std::nullopt;
  };
  if (auto err = proc_.WaitReady("containerd", answers_version)) error_ = *err;
}

Containerd::~Containerd() {
  if (proc_.Running()) {
    CmdResult ids = Ctr({"containers", "list", "-q"});
    std::istringstream ss(ids.out);
    for (std::string id; ss >> id;) Remove(id);
  }
  proc_.Stop();
}

CmdResult Containerd::Ctr(const std::vector<std::string>& args, const RunOptions& opts) {
  return RunCmd(Concat({"ctr", "-a", dir_ / "containerd.sock"}, args), opts);
}

CmdResult Containerd::Run(const std::string& id, const std::vector<std::string>& flags,
                          const std::vector<std::string>& cmd) {
  bool detach = std::find(flags.begin(), flags.end(), "-d") != flags.end();
  std::vector<std::string> args = {"run"};
  if (!detach) args.push_back("--rm");
  // --rootfs is a switch: the rootfs directory takes the image's place.
  args = Concat(args, {"--rootfs", "--fifo-dir", dir_ / "fifo", "--runc-root", dir_ / "runc"});
  args = Concat(args, flags);
  args.push_back(rootfs_);
  args.push_back(id);
  return Ctr(Concat(args, cmd));
}

CmdResult Containerd::Exec(const std::string& id, const std::string& exec_id,
                           const std::vector<std::string>& cmd) {
  return Ctr(Concat({"task", "exec", "--fifo-dir", dir_ / "fifo", "--exec-id", exec_id, id}, cmd));
}

void Containerd::Remove(const std::string& id) {
  Ctr({"task", "delete", "--force", id});
  Ctr({"containers", "delete", id});
}

std::string Containerd::Log() const { return ReadFile(dir_ / "containerd.log"); }

// ---------------------------------------------------------------------------

Podman::Podman(const Options& opts) {
  const std::string& d = dir_.path();
  base_ = {"podman",       "--root",           d + "/root", "--runroot",
           d + "/runroot", "--tmpdir",         d + "/tmp",  "--network-config-dir",
           d + "/net",     "--storage-driver", "vfs",       "--cgroup-manager",
           "cgroupfs",     "--events-backend", "file"};
  if (!opts.conmon_env.empty()) {
    const char* path = std::getenv("PATH");
    std::string vars =
        "\"PATH=" + std::string(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin") + "\"";
    for (const auto& e : opts.conmon_env) vars += ", \"" + e + "\"";
    WriteFile(dir_ / "containers.conf", "[engine]\nconmon_env_vars = [" + vars + "]\n");
    env_.push_back("CONTAINERS_CONF=" + (dir_ / "containers.conf"));
  }
  std::string tar = TarRootfs(dir_, &error_);
  if (!error_.empty()) return;
  std::vector<std::string> import = {"import", tar, std::string("localhost/") + kBusyboxImage};
  if (CmdResult r = Cmd(import); r.status != 0) error_ = DescribeExit(import, r);
}

Podman::~Podman() {
  Cmd({"rm", "--all", "--force", "--time", "0"});
  // conmon's exit command (`podman container cleanup`, then `runc delete`)
  // runs after `podman run --rm` returns; let it finish before the clean-up.
  (void)WaitNoneMentions(dir_.path(), kStopTimeout);
}

CmdResult Podman::Cmd(const std::vector<std::string>& args, const RunOptions& opts) {
  RunOptions o = opts;
  o.env.insert(o.env.end(), env_.begin(), env_.end());
  return RunCmd(Concat(base_, args), o);
}

CmdResult Podman::Run(const std::vector<std::string>& global, const std::vector<std::string>& flags,
                      const std::vector<std::string>& cmd) {
  std::vector<std::string> args = global;
  args = Concat(args, {"run", "--rm", "--network", "none", "--ulimit", "nofile=20000:20000",
                       "--ulimit", "nproc=32768:32768"});
  args = Concat(args, flags);
  args.push_back(std::string("localhost/") + kBusyboxImage);
  return Cmd(Concat(args, cmd));
}

}  // namespace ocirlimit::itest
