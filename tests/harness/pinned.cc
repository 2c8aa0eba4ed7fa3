#include "pinned.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

namespace fs = std::filesystem;

std::string Sha256(const std::string& file) {
  CmdResult r = RunCmd({"sha256sum", file});
  return r.status == 0 ? r.out.substr(0, r.out.find(' ')) : "";
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::optional<std::string> UnpackPinned(const std::string& xz, const std::string& out,
                                        const std::string& sha256) {
  if (Sha256(out) == sha256) return std::nullopt;
  std::error_code ec;
  fs::create_directories(fs::path(out).parent_path(), ec);
  const std::string tmp = out + ".tmp." + std::to_string(getpid());
  CmdResult r = RunCmd({"sh", "-c", "xz -dc \"$0\" > \"$1\"", xz, tmp});
  const std::string got = Sha256(tmp);
  if (r.status != 0 || got != sha256) {
    fs::remove(tmp, ec);
    return "unpacking " + xz + ": " +
           (r.status != 0 ? Trimmed(r.err) : "sha256 " + got + ", not " + sha256);
  }
  chmod(tmp.c_str(), 0755);
  fs::rename(tmp, out, ec);
  if (ec) return "rename " + tmp + ": " + ec.message();
  return std::nullopt;
}

NvidiaBinaries FindNvidiaToolkit(const std::string& cache) {
  NvidiaBinaries b;
  const char* dir = std::getenv(kNvidiaDirVar);
  if (dir == nullptr || *dir == '\0') {
    b.skip = std::string("NVIDIA toolkit tests skipped: set ") + kNvidiaDirVar +
             " to a directory holding NVIDIA Container Toolkit v1.20.0 as NAME.xz (as "
             "../shared/nvidia does)";
    return b;
  }
  b.dir = fs::absolute(cache).string();
  for (const auto& p : kNvidiaToolkit) {
    const std::string xz = std::string(dir) + "/" + p.name + ".xz";
    if (access(xz.c_str(), R_OK) != 0) {
      b.error = std::string(kNvidiaDirVar) + "=" + dir + ": no " + p.name +
                ".xz there (../shared/nvidia/README.md says what it holds)";
      return b;
    }
    if (auto err = UnpackPinned(xz, b.Path(p.name), p.sha256)) {
      b.error = *err;
      return b;
    }
  }
  return b;
}

std::string NvidiaSourceRoot(const NvidiaBinaries& nv, const std::string& src) {
  const std::string lib = src + "/usr/lib/x86_64-linux-gnu/";
  fs::create_directories(src + "/usr/bin");
  fs::create_directories(lib);
  constexpr auto kOver = fs::copy_options::overwrite_existing;
  for (const auto& p : kNvidiaToolkit) {
    fs::copy_file(nv.Path(p.name), src + "/usr/bin/" + p.name, kOver);
  }
  for (const char* copy : {".cdi", ".legacy"}) {
    fs::copy_file(nv.Path("nvidia-container-runtime"),
                  src + "/usr/bin/nvidia-container-runtime" + copy, kOver);
  }
  WriteFile(src + "/usr/bin/nvidia-container-cli", "#!/bin/sh\nexit 1\n", 0755);
  for (const char* name : {"libnvidia-container.so.1", "libnvidia-container-go.so.1"}) {
    fs::copy_file("/lib/x86_64-linux-gnu/libutil.so.1", lib + name + ".0.0", kOver);
    std::error_code ec;
    fs::create_symlink(std::string(name) + ".0.0", lib + name, ec);
  }
  return src;
}

}  // namespace ocirlimit::itest
