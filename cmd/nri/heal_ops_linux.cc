#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "effects/files.h"
#include "effects/target_kind.h"
#include "formats/text.h"
#include "nri/heal_ops.h"

namespace ocirlimit::nri {
namespace {

class LinuxHeal final : public HealOps {
 public:
  explicit LinuxHeal(std::string status_path) : status_path_(std::move(status_path)) {}

  ProcessOps& process() override { return LinuxProcessOps(); }
  FsOps& fs() override { return LinuxFsOps(); }

  bool InHostPidNamespace() override {
    auto s = ReadFileBounded("/proc/self/status", size_t{64} * 1024);
    return !s || NsPidIsInitial(*s);
  }

  int64_t MonotonicMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  Result<RuntimeState> InitFromRuntimeState(const std::string& id) override {
    std::optional<Error> first;
    for (const auto& root : CrioStateRoots()) {
      const std::string dir = Cat(root, "/", id, "/");
      auto runc =
          fs().ReadTrusted(root, {id, std::string(kRuncStateFile)}, 0, kMaxRuntimeStateBytes);
      if (runc) return ParseRuncState(runc->text, Cat(dir, kRuncStateFile));
      auto crun =
          fs().ReadTrusted(root, {id, std::string(kCrunStateFile)}, 0, kMaxRuntimeStateBytes);
      if (crun) return ParseCrunStatus(crun->text, Cat(dir, kCrunStateFile));
      // A state that is there but not root's is said; a missing one is not.
      for (const Error& e : {runc.error(), crun.error()}) {
        if (e.err != ENOENT && !first) first = e;
      }
    }
    if (first) return *first;
    return MakeError("no runtime state names " + Quote(id), ENOENT);
  }

  Self Writer() override {
    Self me;
    auto stat = ReadFileBounded("/proc/self/stat", size_t{4} * 1024);
    if (!stat) return me;
    auto parsed = ParseProcStat(*stat);
    if (!parsed || !parsed->start_time) return me;
    me.pid = static_cast<uint64_t>(getpid());
    me.start = *parsed->start_time;
    return me;
  }

  Status WriteStatus(const std::string& text) override {
    if (status_path_.empty()) return Ok{};
    const size_t slash = status_path_.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      const std::string dir = status_path_.substr(0, slash);
      if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return MakeError("mkdir " + dir, errno);
      }
    }
    return ReplaceStatus(text);
  }

 private:
  // A temp file beside it, renamed over it: a reader sees the old or the
  // new text, never half. No fsync: it lives in /run (tmpfs) and says
  // what this boot's plugin did; the Synchronize reply should not wait on a disk.
  Status ReplaceStatus(const std::string& text) {
    const size_t slash = status_path_.rfind('/');
    std::string tmp =
        (slash == std::string::npos ? std::string(".") : status_path_.substr(0, slash)) +
        "/.nri.status.XXXXXX";
    const int fd = mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) return MakeError("create a temp file for " + status_path_, errno);
    Status w = fchmod(fd, 0644) == 0 ? WriteAll(fd, text) : MakeError("chmod " + tmp, errno);
    if (close(fd) != 0 && w) w = MakeError("close " + tmp, errno);
    if (w && rename(tmp.c_str(), status_path_.c_str()) != 0) {
      w = MakeError("rename " + tmp + " to " + status_path_, errno);
    }
    if (!w) unlink(tmp.c_str());
    return w;
  }

  std::string status_path_;
};

}  // namespace

bool NsPidIsInitial(const std::string& status) {
  const size_t at = status.find("\nNSpid:");
  if (at == std::string::npos) return true;
  const size_t end = status.find('\n', at + 1);
  std::string_view line(status.data() + at + 7,
                        (end == std::string::npos ? status.size() : end) - at - 7);
  int fields = 0;
  bool in = false;
  for (char c : line) {
    const bool space = c == ' ' || c == '\t';
    if (!space && !in) ++fields;
    in = !space;
  }
  return fields <= 1;
}

const std::vector<std::string>& CrioStateRoots() {
  static const std::vector<std::string> roots = {"/run/runc", "/run/crun"};
  return roots;
}

std::unique_ptr<HealOps> LinuxHealOps(std::string status_path) {
  return std::make_unique<LinuxHeal>(std::move(status_path));
}

}  // namespace ocirlimit::nri
