#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "effects/files.h"
#include "hook/chain_exec.h"

namespace ocirlimit {

Error ExecWithStdin(const std::string& path, char** argv, const std::string& state) {
  int fd = memfd_create("oci-state", MFD_CLOEXEC);
  if (fd < 0) return MakeError("memfd_create", errno);
  if (auto written = WriteAll(fd, state); !written) return written.error();
  if (lseek(fd, 0, SEEK_SET) != 0) return MakeError("lseek state memfd", errno);
  // dup2 clears FD_CLOEXEC on the copy, so only stdin survives the exec.
  if (dup2(fd, STDIN_FILENO) < 0) return MakeError("dup2 state memfd to stdin", errno);
  close(fd);
  execv(path.c_str(), argv);
  return MakeError("exec " + path, errno);
}

}  // namespace ocirlimit
