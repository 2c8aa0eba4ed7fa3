#include "rootless.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

namespace ocirlimit::itest {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

void Chown(const std::string& path, uid_t uid, gid_t gid) {
  if (chown(path.c_str(), uid, gid) != 0) ADD_FAILURE() << "chown " << path;
}

}  // namespace

std::string EnsureRootlessUser() {
  if (getpwnam(kRootlessUser) == nullptr) {
    CmdResult r = RunCmd({"useradd", "-m", "-s", "/bin/sh", kRootlessUser});
    if (r.status != 0) return "useradd " + std::string(kRootlessUser) + ": " + r.err;
  }
  std::string subuid = ReadFile("/etc/subuid");
  if (subuid.find(std::string(kRootlessUser) + ":") == std::string::npos) {
    return std::string(kRootlessUser) + " has no /etc/subuid range";
  }
  return "";
}

std::string MakeShareDir(const std::string& dir) {
  fs::create_directories(dir + "/oci/hooks.d");
  for (const char* f : {"containers.conf", "seccomp.json"}) {
    std::error_code ec;
    fs::copy_file(std::string("/usr/share/containers/") + f, dir + "/" + f, ec);
  }
  return dir;
}

std::string RootlessCrunCommand(const std::string& dir) {
  std::string script = dir + "/crun-rootless.sh";
  WriteFile(script,
            "#!/bin/sh\n"
            "if [ -d /sys/fs/cgroup/unified ] && mountpoint -q /sys/fs/cgroup/unified; then\n"
            "  exec unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup/unified; exec crun "
            "\"$@\"' crun \"$@\"\n"
            "fi\n"
            "exec crun \"$@\"\n",
            0755);
  return script;
}

std::string MakeEtcDir(const std::string& dir) {
  fs::create_directories(dir);
  std::error_code ec;
  fs::copy("/etc/containers", dir, fs::copy_options::recursive, ec);
  fs::create_directories(dir + "/oci/hooks.d");
  return dir;
}

PodmanAs::PodmanAs(const Options& opts) : opts_(opts) {
  const std::string& d = dir_.path();
  chmod(d.c_str(), 0755);
  home_ = d + "/home";
  xdg_ = d + "/xdg";
  state_ = d + "/state";
  for (const auto& p : {home_, xdg_, state_}) fs::create_directories(p);
  chmod(xdg_.c_str(), 0700);
  if (opts_.rootless) {
    if (std::string why = EnsureRootlessUser(); !why.empty()) {
      error_ = why;
      return;
    }
    const passwd* pw = getpwnam(kRootlessUser);
    for (const auto& p : {home_, xdg_, state_}) Chown(p, pw->pw_uid, pw->pw_gid);
  }
  base_ = {"podman",
           "--root",
           state_ + "/root",
           "--runroot",
           state_ + "/runroot",
           "--tmpdir",
           state_ + "/tmp",
           "--storage-driver",
           "vfs",
           "--cgroup-manager",
           "cgroupfs",
           "--events-backend",
           "file"};
  if (!opts_.conmon_env.empty()) {
    std::string vars = std::string("\"PATH=") + kPath + "\"";
    for (const auto& e : opts_.conmon_env) vars += ", \"" + e + "\"";
    WriteFile(d + "/containers.conf", "[engine]\nconmon_env_vars = [" + vars + "]\n");
  }
  MakeRootfs(d);
  std::string tar = d + "/rootfs.tar";
  if (CmdResult r = RunCmd({"tar", "-C", d + "/rootfs", "-cf", tar, "."}); r.status != 0) {
    error_ = "tar: " + r.err;
    return;
  }
  chmod(tar.c_str(), 0644);
  CmdResult r = Cmd({"import", tar, "localhost/bb:latest"});
  if (r.status != 0) error_ = "podman import: " + r.err;
}

PodmanAs::~PodmanAs() {
  Cmd({"rm", "--all", "--force", "--time", "0"});
  // The rootless pause process holds the user namespace; it is ours.
  std::string pid_text = ReadFile(state_ + "/tmp/pause.pid");
  if (!pid_text.empty()) {
    pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid > 1) kill(pid, SIGKILL);
  }
  // conmon's cleanup (`podman container cleanup`) runs after `run --rm` returns.
  for (int i = 0; i < 100; ++i) {
    CmdResult r = RunCmd({"pgrep", "-f", dir_.path()});
    if (r.out.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Still there after 5 s (a failed test can leave conmon and a `crun create`
  // waiting for a start that never comes): these processes name our own
  // TempDir, so they are ours; end them by pid.
  std::istringstream pids(RunCmd({"pgrep", "-f", dir_.path()}).out);
  for (std::string line; std::getline(pids, line);) {
    pid_t pid = static_cast<pid_t>(std::stol(line));
    if (pid > 1 && pid != getpid()) kill(pid, SIGKILL);
  }
}

CmdResult PodmanAs::Cmd(const std::vector<std::string>& args) {
  // unshare -m: a private mount namespace for this podman and its children,
  // with the share dir on /usr/share/containers; then prlimit, then (rootless)
  // runuser with a clean environment.
  std::string mounts;
  if (!opts_.share_dir.empty()) {
    mounts += "mount --bind '" + opts_.share_dir + "' /usr/share/containers && ";
  }
  if (!opts_.etc_dir.empty()) mounts += "mount --bind '" + opts_.etc_dir + "' /etc/containers && ";
  std::vector<std::string> argv = {"unshare", "-m",         "--propagation",        "private",
                                   "sh",      "-c",         mounts + "exec \"$@\"", "sh",
                                   "prlimit", opts_.prlimit};
  std::vector<std::string> env = {"HOME=" + home_, "XDG_RUNTIME_DIR=" + xdg_,
                                  std::string("PATH=") + kPath};
  if (!opts_.conmon_env.empty()) env.push_back("CONTAINERS_CONF=" + (dir_ / "containers.conf"));
  if (opts_.rootless) {
    argv.insert(argv.end(), {"runuser", "-u", kRootlessUser, "--"});
  }
  argv.insert(argv.end(), "env");
  argv.insert(argv.end(), "-i");
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), base_.begin(), base_.end());
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.timeout_s = 120;
  return RunCmd(argv, o);
}

CmdResult PodmanAs::Run(const std::vector<std::string>& global,
                        const std::vector<std::string>& flags,
                        const std::vector<std::string>& cmd) {
  std::vector<std::string> args = global;
  args.insert(args.end(), {"run", "--rm", "--network", "none"});
  // Rootful podman writes nofile/nproc 1048576 into the spec, which runc
  // cannot set here; rootless podman writes the caller's own.
  if (!opts_.rootless) {
    args.insert(args.end(), {"--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"});
  }
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("localhost/bb:latest");
  args.insert(args.end(), cmd.begin(), cmd.end());
  return Cmd(args);
}

std::string PodmanAs::StartDetached(const std::vector<std::string>& global,
                                    const std::vector<std::string>& flags) {
  std::string name = UniqueId("rl");
  std::vector<std::string> f = {"-d", "--name", name};
  f.insert(f.end(), flags.begin(), flags.end());
  std::vector<std::string> args = global;
  args.insert(args.end(), {"run", "--network", "none"});
  if (!opts_.rootless) {
    args.insert(args.end(), {"--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768"});
  }
  args.insert(args.end(), f.begin(), f.end());
  args.insert(args.end(), {"localhost/bb:latest", "sleep", "60"});
  CmdResult r = Cmd(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return name;
}

}  // namespace ocirlimit::itest
