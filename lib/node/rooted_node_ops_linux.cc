#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <vector>

#include "effects/files.h"
#include "effects/heal.h"
#include "formats/text.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxFileBytes = 4 << 20;
constexpr int kVersionTimeoutMs = 5000;
constexpr int kMaxSymlinkHops = 40;
constexpr size_t kMaxCommBytes = 64;
constexpr size_t kMaxCmdlineBytes = 64 << 10;
constexpr const char* kStandardPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class Rooted : public NodeOps {
 public:
  explicit Rooted(std::string root) : root_(root == "/" ? "" : std::move(root)) {}

  Result<std::string> ReadFile(const std::string& path) override {
    auto real = Resolve(path);
    return ReadFileBounded(Host(real.value_or(path)), kMaxFileBytes);
  }

  std::vector<std::string> ListDir(const std::string& path) override {
    std::vector<std::string> out;
    DIR* d = opendir(Host(Resolve(path).value_or(path)).c_str());
    if (d == nullptr) return out;
    while (const dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::optional<std::string> Which(const std::string& name) override {
    // This node's own PATH; a fixture root gets the standard directories.
    const char* env = root_.empty() ? std::getenv("PATH") : nullptr;
    return WhichIn(name, env != nullptr ? env : kStandardPath);
  }

  std::optional<std::string> WhichIn(const std::string& name,
                                     const std::string& path_list) override {
    if (name.find('/') != std::string::npos) {
      if (!name.starts_with("/") || !Executable(name)) return std::nullopt;
      return name;
    }
    std::istringstream dirs(path_list);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.starts_with("/")) continue;
      const std::string candidate = Cat(dir, "/", name);
      if (Executable(candidate)) return candidate;
    }
    return std::nullopt;
  }

  std::optional<std::string> Resolve(const std::string& path) override {
    std::string p = path;
    for (int hop = 0; hop < kMaxSymlinkHops; ++hop) {
      struct stat st {};
      if (lstat(Host(p).c_str(), &st) != 0) return std::nullopt;
      if (!S_ISLNK(st.st_mode)) return p;
      std::vector<char> buf(4096);
      ssize_t n = readlink(Host(p).c_str(), buf.data(), buf.size() - 1);
      if (n < 0) return std::nullopt;
      std::string target(buf.data(), static_cast<size_t>(n));
      p = target.starts_with("/") ? target : Cat(p.substr(0, p.rfind('/') + 1), target);
    }
    return std::nullopt;
  }

  std::optional<FileId> Socket(const std::string& path) override {
    auto id = StatFollow(Host(Resolve(path).value_or(path)));
    if (!id || !S_ISSOCK(id->mode)) return std::nullopt;
    return *id;
  }

  std::optional<int64_t> ModifiedAt(const std::string& path) override {
    struct stat st {};
    if (stat(Host(path).c_str(), &st) != 0) return std::nullopt;
    return static_cast<int64_t>(st.st_mtim.tv_sec);
  }

  std::vector<RunningProcess> ProcessesNamed(const std::string& comm) override {
    std::vector<RunningProcess> out;
    DIR* d = opendir(Host("/proc").c_str());
    if (d == nullptr) return out;
    while (const dirent* e = readdir(d)) {
      const std::string pid = e->d_name;
      if (pid.empty() || pid.size() > 9 ||
          !std::all_of(pid.begin(), pid.end(),
                       [](unsigned char c) { return c >= '0' && c <= '9'; })) {
        continue;
      }
      // A process may exit between readdir and read: then it is not running.
      auto name = ReadFileBounded(Host("/proc/" + pid + "/comm"), kMaxCommBytes);
      if (!name || Trim(*name) != comm) continue;
      RunningProcess p;
      p.pid = std::atoi(pid.c_str());
      if (auto cmdline = ReadFileBounded(Host("/proc/" + pid + "/cmdline"), kMaxCmdlineBytes)) {
        std::string_view rest = *cmdline;
        while (!rest.empty()) {
          const size_t nul = rest.find('\0');
          p.argv.emplace_back(rest.substr(0, nul));
          if (nul == std::string_view::npos) break;
          rest.remove_prefix(nul + 1);
        }
      }
      // /proc/PID/stat: "PID (COMM) STATE PPID ...", COMM may hold ") ".
      if (auto stat = ReadFileBounded(Host("/proc/" + pid + "/stat"), kMaxCmdlineBytes)) {
        const size_t close = stat->rfind(')');
        std::istringstream fields(close == std::string::npos ? "" : stat->substr(close + 1));
        std::string state;
        long ppid = 0;
        if (fields >> state >> ppid && ppid > 0) {
          auto parent =
              ReadFileBounded(Host("/proc/" + std::to_string(ppid) + "/comm"), kMaxCommBytes);
          if (parent) p.parent = std::string(Trim(*parent));
        }
      }
      Identify(p, pid);
      out.push_back(std::move(p));
    }
    closedir(d);
    std::sort(out.begin(), out.end(),
              [](const RunningProcess& a, const RunningProcess& b) { return a.pid < b.pid; });
    return out;
  }

  // What the process is (RunningProcess::exe and the rest): seen through
  // this node's /proc, compared with this process's own namespaces.
  void Identify(RunningProcess& p, const std::string& pid) {
    const std::string proc = Host("/proc/" + pid);
    p.exe = ReadLink(proc + "/exe");
    p.exe_root_owned = RootsAlone(proc + "/exe", S_IFREG) && !p.exe.empty();
    const size_t slash = p.exe.rfind('/');
    p.exe_dir_root_owned = slash != std::string::npos &&
                           RootsAlone(proc + "/root" + p.exe.substr(0, slash + 1), S_IFDIR);
    auto status = ReadFileBounded(proc + "/status", kMaxCmdlineBytes);
    p.root_uid = status && StatusUidsAre(*status, 0);
    const std::string pid_ns = ReadLink(proc + "/ns/pid");
    p.host_pid_namespace =
        InNamespace(pid_ns, NodePidNamespace(ReadLink(Host("/proc/1/ns/pid")),
                                             ReadLink("/proc/self/ns/pid"), root_.empty()));
    p.node_mount_namespace =
        NodeMountNamespace(ReadLink(proc + "/ns/mnt"), ReadLink(Host("/proc/1/ns/mnt")));
    p.host_namespaces = true;
    for (const char* ns : {"pid", "mnt"}) {
      const std::string theirs = ReadLink(proc + "/ns/" + ns);
      if (theirs.empty() || theirs != ReadLink(Cat("/proc/self/ns/", ns))) {
        p.host_namespaces = false;
      }
    }
  }

  // Whether `path` (followed) is a `kind` root owns and no one else may write.
  static bool RootsAlone(const std::string& path, mode_t kind) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind && st.st_uid == 0 &&
           (st.st_mode & 022) == 0;
  }

  static std::string ReadLink(const std::string& path) {
    char buf[4096];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    return n <= 0 || static_cast<size_t>(n) >= sizeof buf ? "" : std::string(buf, n);
  }

  Result<std::string> Version(const std::string& path) override {
    auto real = Resolve(path);
    if (!real) return MakeError("cannot resolve " + path);
    const std::string exe = Host(*real);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return MakeError("pipe", errno);
    pid_t pid = fork();
    if (pid < 0) return MakeError("fork", errno);
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      dup2(fds[1], STDERR_FILENO);
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, STDIN_FILENO);
      const char* argv[] = {exe.c_str(), "--version", nullptr};
      execv(exe.c_str(), const_cast<char* const*>(argv));
      _exit(127);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    const long deadline = Millis() + kVersionTimeoutMs;
    bool timed_out = false;
    for (;;) {
      long left = deadline - Millis();
      pollfd pfd{fds[0], POLLIN, 0};
      if (left <= 0 || poll(&pfd, 1, static_cast<int>(left)) == 0) {
        timed_out = true;
        break;
      }
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (out.size() < kMaxFileBytes) out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) return MakeError(path + " --version: no answer in 5 s");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return MakeError(path + " --version failed");
    }
    return out;
  }

 private:
  bool Executable(const std::string& node_path) {
    auto real = Resolve(node_path);
    struct stat st {};
    return real && stat(Host(*real).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           access(Host(*real).c_str(), X_OK) == 0;
  }

  static long Millis() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  }
  std::string Host(const std::string& node_path) const { return root_ + node_path; }

  std::string root_;
};

}  // namespace

std::unique_ptr<NodeOps> RootedNodeOps(const std::string& root) {
  return std::make_unique<Rooted>(root);
}

}  // namespace ocirlimit
