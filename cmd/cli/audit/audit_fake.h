// A fake node for audit's unit tests: files and directories in a map (the
// state roots, bundles) and processes whose /proc/PID/stat and
// /proc/PID/limits it writes, behind FsOps and ProcessOps.
#pragma once

#include <sys/resource.h>

#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "effects/fs_ops.h"
#include "effects/process_ops.h"

namespace ocirlimit {

class FakeNode : public FsOps, public ProcessOps {
 public:
  struct Process {
    uint64_t start = 0;
    char state = 'S';
    std::map<int, LimitPair> limits;
    uid_t uid = 0;
    std::string cgroup = "0::/";
  };

  void File(const std::string& path, std::string text) { files[path] = std::move(text); }

  // runc's state.json (what runc 1.1.5 writes, shortened) for one container.
  static std::string RuncState(const std::string& id, pid_t pid, uint64_t start,
                               const std::string& bundle) {
    return "{\"id\":\"" + id + "\",\"init_process_pid\":" + std::to_string(pid) +
           ",\"init_process_start\":" + std::to_string(start) +
           ",\"created\":\"2026-12-01T22:02:00.579535604Z\",\"config\":{\"no_pivot_root\":false,"
           "\"labels\":[\"io.kubernetes.cri.container-type=container\",\"bundle=" +
           bundle + "\"]},\"rootless\":false}";
  }
  // crun's status file (crun 1.8.1).
  static std::string CrunStatus(pid_t pid, uint64_t start, const std::string& bundle) {
    return "{\n    \"pid\": " + std::to_string(pid) +
           ",\n    \"process-start-time\": " + std::to_string(start) +
           ",\n    \"cgroup-path\": \"/c2\",\n    \"rootfs\": \"rootfs\",\n    \"bundle\": \"" +
           bundle + "\",\n    \"owner\": \"root\",\n    \"detached\": true\n}\n";
  }

  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    ++lists;
    std::map<std::string, bool> names;
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    for (const auto& [path, text] : files) {
      if (!path.starts_with(prefix)) continue;
      std::string rest = path.substr(prefix.size());
      size_t slash = rest.find('/');
      names[rest.substr(0, slash)] = names[rest.substr(0, slash)] || slash != std::string::npos;
    }
    for (const auto& d : dirs) {
      if (d.starts_with(prefix) && d.find('/', prefix.size()) == std::string::npos) {
        names[d.substr(prefix.size())] = true;
      }
    }
    if (names.empty() && dirs.count(dir) == 0) return MakeError("open directory " + dir, ENOENT);
    std::vector<Entry> out;
    for (const auto& [name, dir_flag] : names) out.push_back({name, dir_flag});
    return out;
  }

  Result<std::string> ReadFile(const std::string& path, size_t) override {
    ++reads;
    // As ReadFileBounded does: opened (O_NONBLOCK), then refused.
    if (fifos.count(path) != 0) {
      opened_fifos.push_back(path);
      return MakeError("\"" + path + "\" is not a regular file");
    }
    if (path.starts_with("/proc/")) return ProcFile(path);
    auto it = files.find(path);
    if (it == files.end()) return MakeError("open \"" + path + "\"", ENOENT);
    return it->second;
  }

  // The trusted reader's rules over `owners` (by path, else root's): the
  // root, each component and the file owned by the one owner (`want`, else
  // the root's); a path in `symlinks` is refused as the kernel refuses it,
  // one in `fifos` is no regular file (and never opened).
  Result<TrustedText> ReadTrusted(const std::string& root,
                                  const std::vector<std::string>& components,
                                  std::optional<uid_t> want, size_t max) override {
    const uid_t uid = want.value_or(Owner(root));
    std::string path = root;
    for (size_t i = 0; i <= components.size(); ++i) {
      if (i > 0) path += "/" + components[i - 1];
      if (symlinks.count(path) != 0) {
        return MakeError("\"" + path + "\" is a symlink, and no symlinks are followed");
      }
      if (Owner(path) != uid) {
        return MakeError("\"" + path + "\" is owned by uid " + std::to_string(Owner(path)) +
                         ", not " + (uid == 0 ? "root" : "uid " + std::to_string(uid)) +
                         ": not trusted");
      }
    }
    if (fifos.count(path) != 0) return MakeError("\"" + path + "\" is not a regular file");
    auto text = ReadFile(path, max);
    if (!text) return text.error();
    return TrustedText{*text, uid};
  }

  Result<int> OpenPidfd(pid_t pid) override {
    if (procs.count(pid) == 0) return MakeError("pidfd_open", ESRCH);
    return static_cast<int>(pid);
  }
  Status CheckAlive(int pidfd) override {
    if (procs.count(pidfd) == 0) return MakeError("pidfd_send_signal", ESRCH);
    return Ok{};
  }
  void ClosePidfd(int) override {}
  Result<LimitPair> GetLimit(pid_t pid, int resource) override {
    return procs.at(pid).limits[resource];
  }
  Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) override {
    set_pids.push_back(pid);
    LimitPair& now = procs.at(pid).limits[resource];
    if (value.hard > now.hard) return MakeError("prlimit", EPERM);
    LimitPair old = now;
    now = value;
    return old;
  }
  bool HasSysResource() override { return false; }
  bool InInitialUserNamespace() override { return true; }

  std::map<std::string, std::string> files;
  std::set<std::string> dirs;  // empty directories
  std::map<std::string, uid_t> owners;
  std::set<std::string> symlinks;
  std::set<std::string> fifos;
  std::vector<std::string> opened_fifos;  // the FIFOs ReadFile opened
  std::map<pid_t, Process> procs;
  std::vector<pid_t> set_pids;
  int lists = 0;
  int reads = 0;

 private:
  uid_t Owner(const std::string& path) const {
    auto it = owners.find(path);
    return it == owners.end() ? uid_t{0} : it->second;
  }
  Result<std::string> ProcFile(const std::string& path) {
    const size_t slash = path.find('/', 6);
    const pid_t pid = std::stoi(path.substr(6, slash - 6));
    auto it = procs.find(pid);
    if (it == procs.end()) return MakeError("open \"" + path + "\"", ENOENT);
    const Process& p = it->second;
    if (path.ends_with("/status")) {
      const std::string u = std::to_string(p.uid);
      return "Name:\tsleep\nUid:\t" + u + "\t" + u + "\t" + u + "\t" + u + "\nGid:\t0\t0\t0\t0\n";
    }
    if (path.ends_with("/cgroup")) return p.cgroup + "\n";
    if (path.ends_with("/stat")) {
      return std::to_string(pid) + " (sleep) " + std::string(1, p.state) +
             " 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(p.start) + " 0 0\n";
    }
    static const char* const kRows[] = {
        "Max cpu time",       "Max file size",     "Max data size",         "Max stack size",
        "Max core file size", "Max resident set",  "Max processes",         "Max open files",
        "Max locked memory",  "Max address space", "Max file locks",        "Max pending signals",
        "Max msgqueue size",  "Max nice priority", "Max realtime priority", "Max realtime timeout"};
    std::string out = "Limit                     Soft Limit           Hard Limit           Units\n";
    for (int r = 0; r < 16; ++r) {
      auto l = p.limits.find(r);
      LimitPair v = l == p.limits.end() ? LimitPair{kRlimInfinity, kRlimInfinity} : l->second;
      auto value = [](uint64_t x) {
        return x == kRlimInfinity ? std::string("unlimited") : std::to_string(x);
      };
      std::string row = kRows[r];
      row.resize(26, ' ');
      out += row + value(v.soft) + " " + value(v.hard) + " bytes\n";
    }
    return out;
  }
};

}  // namespace ocirlimit
