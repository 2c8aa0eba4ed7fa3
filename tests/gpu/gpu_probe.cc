// gpu_probe: what a non-root GPU/RDMA process meets first, in one line each.
//   memlock SOFT:HARD            (from /proc/self/limits, as the kernel reads it)
//   mlock MIB MiB: ok | failed: REASON
//   cuda: not available: REASON  (no libcuda.so.1: the GPU parts are skipped)
//   cuda: DEVICE: cuMemAlloc 1 GiB ok; cuMemHostAlloc 256 MiB ok
// It loads the CUDA driver with dlopen, so it builds with no CUDA headers and
// runs on a machine with no GPU. Exit status: 0 when mlock pinned MIB, 1 when
// it did not, 2 usage. CUDA's results never change the exit status: on a real
// H200 CUDA's own pinned memory is not charged to RLIMIT_MEMLOCK (docs/matrix.md).
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

void PrintMemlock() {
  std::ifstream limits("/proc/self/limits");
  std::string line;
  while (std::getline(limits, line)) {
    if (line.rfind("Max locked memory", 0) != 0) continue;
    char soft[32] = {};
    char hard[32] = {};
    if (std::sscanf(line.c_str() + 17, "%31s %31s", soft, hard) == 2) {
      std::printf("memlock %s:%s\n", soft, hard);
      return;
    }
  }
  std::printf("memlock unreadable\n");
}

bool Mlock(long mib) {
  const size_t bytes = static_cast<size_t>(mib) << 20;
  void* buffer = std::malloc(bytes);
  if (buffer == nullptr) {
    std::printf("mlock %ld MiB as uid %u: failed: malloc\n", mib, getuid());
    return false;
  }
  std::memset(buffer, 1, bytes);
  const bool ok = mlock(buffer, bytes) == 0;
  const int error = errno;
  if (ok) {
    std::printf("mlock %ld MiB as uid %u: ok\n", mib, getuid());
    munlock(buffer, bytes);
  } else {
    std::printf("mlock %ld MiB as uid %u: failed: %s\n", mib, getuid(), std::strerror(error));
  }
  std::free(buffer);
  return ok;
}

// The CUDA driver API, by symbol: CUresult is an int, handles are pointers.
using InitFn = int (*)(unsigned);
using CountFn = int (*)(int*);
using GetFn = int (*)(int*, int);
using NameFn = int (*)(char*, int, int);
using RetainFn = int (*)(void**, int);
using SetFn = int (*)(void*);
using AllocFn = int (*)(unsigned long long*, size_t);
using FreeFn = int (*)(unsigned long long);
using HostAllocFn = int (*)(void**, size_t, unsigned);
using FreeHostFn = int (*)(void*);

template <typename F>
F Sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

void ProbeCuda() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::printf("cuda: not available: %s\n", dlerror());
    return;
  }
  auto init = Sym<InitFn>(lib, "cuInit");
  auto count = Sym<CountFn>(lib, "cuDeviceGetCount");
  auto get = Sym<GetFn>(lib, "cuDeviceGet");
  auto name = Sym<NameFn>(lib, "cuDeviceGetName");
  auto retain = Sym<RetainFn>(lib, "cuDevicePrimaryCtxRetain");
  auto set = Sym<SetFn>(lib, "cuCtxSetCurrent");
  auto alloc = Sym<AllocFn>(lib, "cuMemAlloc_v2");
  auto free_dev = Sym<FreeFn>(lib, "cuMemFree_v2");
  auto host_alloc = Sym<HostAllocFn>(lib, "cuMemHostAlloc");
  auto free_host = Sym<FreeHostFn>(lib, "cuMemFreeHost");
  if (!init || !count || !get || !name || !retain || !set || !alloc || !free_dev || !host_alloc ||
      !free_host) {
    std::printf("cuda: not available: libcuda.so.1 lacks a driver API symbol\n");
    return;
  }
  int devices = 0;
  int rc = init(0);
  if (rc == 0) rc = count(&devices);
  if (rc != 0 || devices == 0) {
    std::printf("cuda: not available: cuInit/cuDeviceGetCount error %d, %d devices\n", rc, devices);
    return;
  }
  int device = 0;
  char device_name[128] = {};
  void* context = nullptr;
  if (get(&device, 0) != 0 || name(device_name, sizeof device_name, device) != 0 ||
      retain(&context, device) != 0 || set(context) != 0) {
    std::printf("cuda: not available: no context on device 0\n");
    return;
  }
  unsigned long long dev_ptr = 0;
  const int dev_rc = alloc(&dev_ptr, size_t{1} << 30);
  if (dev_rc == 0) (void)free_dev(dev_ptr);
  void* host_ptr = nullptr;
  const int host_rc = host_alloc(&host_ptr, size_t{256} << 20, 0);
  if (host_rc == 0) (void)free_host(host_ptr);
  std::printf("cuda: %s: cuMemAlloc 1 GiB %s; cuMemHostAlloc 256 MiB %s\n", device_name,
              dev_rc == 0 ? "ok" : "failed", host_rc == 0 ? "ok" : "failed");
}

}  // namespace

int main(int argc, char** argv) {
  char* end = nullptr;
  const long mib = argc == 2 ? std::strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || end == argv[1] || *end != '\0' || mib <= 0 || mib > 4096) {
    std::fprintf(stderr, "usage: gpu_probe MIB (1..4096)\n");
    return 2;
  }
  PrintMemlock();
  const bool pinned = Mlock(mib);
  ProbeCuda();
  return pinned ? 0 : 1;
}
