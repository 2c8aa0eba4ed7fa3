#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "core/unprivileged.h"
#include "effects/files.h"
#include "effects/process_ops.h"

namespace ocirlimit {
namespace {

class Linux final : public ProcessOps {
 public:
  Result<int> OpenPidfd(pid_t pid) override {
    long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) return MakeError("pidfd_open(" + std::to_string(pid) + ")", errno);
    return static_cast<int>(fd);
  }

  Status CheckAlive(int pidfd) override {
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0) return Ok{};
    // The kernel checks signal permission only on a process it found, so
    // EPERM means alive. oci-prlimit-helper holds no CAP_KILL and gets it
    // for a target of another uid (a user-namespaced container).
    if (errno == EPERM) return Ok{};
    return MakeError("pidfd_send_signal", errno);
  }

  void ClosePidfd(int pidfd) override { close(pidfd); }

  Result<LimitPair> GetLimit(pid_t pid, int resource) override {
    struct rlimit old {};
    if (prlimit(pid, static_cast<__rlimit_resource>(resource), nullptr, &old) != 0) {
      return MakeError("prlimit", errno);
    }
    return LimitPair{old.rlim_cur, old.rlim_max};
  }

  Result<LimitPair> SetLimit(pid_t pid, int resource, LimitPair value) override {
    struct rlimit next {
      value.soft, value.hard
    };
    struct rlimit old {};
    if (prlimit(pid, static_cast<__rlimit_resource>(resource), &next, &old) != 0) {
      return MakeError("prlimit", errno);
    }
    return LimitPair{old.rlim_cur, old.rlim_max};
  }

  bool HasSysResource() override {
    // capget directly: one syscall, and libcap stays out of the hook.
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &hdr, data) != 0) return false;
    return (data[CAP_SYS_RESOURCE / 32].effective & (1U << (CAP_SYS_RESOURCE % 32))) != 0;
  }
  bool InInitialUserNamespace() override { return ThisProcessInInitialUserNamespace(); }
};

}  // namespace

// uid_map rather than comparing /proc/self/ns/user with /proc/1/ns/user:
// reading another process's ns link needs ptrace access to it, which a
// rootless user never has over pid 1 (and which even root lacks in some
// sandboxes), while our own uid_map is always readable.
bool ThisProcessInInitialUserNamespace() {
  auto map = ReadFileBounded("/proc/self/uid_map", 1 << 16);
  if (!map) return true;
  return IsInitialUidMap(*map);
}

ProcessOps& LinuxProcessOps() {
  static Linux ops;
  return ops;
}

}  // namespace ocirlimit
