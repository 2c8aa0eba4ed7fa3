// ReadRuntimeLimits: /proc/PID of the socket's peer, pinned by a directory
// fd, believed only when root owns it (root trusts only root).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "effects/files.h"
#include "effects/heal.h"
#include "effects/runtime_peer.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxProcBytes = size_t{64} * 1024;

Result<std::string> ReadAt(int dir, const char* name) {
  const int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return MakeError(std::string("open ") + name, errno);
  auto text = ReadFdBounded(fd, kMaxProcBytes, 1000);
  close(fd);
  return text;
}

}  // namespace

std::optional<RuntimeLimits> ReadRuntimeLimits(int pid, unsigned uid) {
  if (pid <= 0 || uid != 0) return std::nullopt;
  const std::string path = "/proc/" + std::to_string(pid);
  const int dir = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dir < 0) return std::nullopt;
  struct stat st {};
  std::optional<RuntimeLimits> out;
  auto limits = ReadAt(dir, "limits");
  auto status = ReadAt(dir, "status");
  auto comm = ReadAt(dir, "comm");
  if (fstat(dir, &st) == 0 && st.st_uid == 0 && limits && status && comm) {
    auto parsed = ParseProcLimits(*limits);
    auto can_raise = CapEffHasSysResource(*status);
    std::string name = *comm;
    while (!name.empty() && name.back() == '\n') name.pop_back();
    if (parsed && can_raise) {
      out = RuntimeLimits{
          "the runtime on the NRI socket (" + name + ", pid " + std::to_string(pid) + ")",
          std::move(*parsed), *can_raise};
    }
  }
  close(dir);
  return out;
}

}  // namespace ocirlimit
