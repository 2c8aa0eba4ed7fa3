// mlock_probe: what an RDMA or GPU process does first with its buffers. It
// asks mlock(2) to pin MIB mebibytes and prints one line saying whether the
// kernel let it, as whom:
//   mlock 4 MiB as uid 1000: ok
//   mlock 4 MiB as uid 1000: failed: Cannot allocate memory
// Static, so it runs in a bare busybox rootfs. Exit status: 0 pinned, 1 not,
// 2 usage.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  char* end = nullptr;
  const long mib = argc == 2 ? std::strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || end == argv[1] || *end != '\0' || mib <= 0 || mib > 1024) {
    std::fprintf(stderr, "usage: mlock_probe MIB (1..1024)\n");
    return 2;
  }
  const size_t bytes = static_cast<size_t>(mib) << 20;
  void* buffer = std::malloc(bytes);
  if (buffer == nullptr) {
    std::printf("mlock %ld MiB as uid %u: failed: malloc: %s\n", mib, getuid(),
                std::strerror(errno));
    return 1;
  }
  std::memset(buffer, 1, bytes);
  const int rc = mlock(buffer, bytes);
  const int error = errno;
  if (rc != 0) {
    std::printf("mlock %ld MiB as uid %u: failed: %s\n", mib, getuid(), std::strerror(error));
    return 1;
  }
  std::printf("mlock %ld MiB as uid %u: ok\n", mib, getuid());
  munlock(buffer, bytes);
  std::free(buffer);
  return 0;
}
