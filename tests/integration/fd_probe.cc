// A stand-in program for fd-leak checks: records its own open file
// descriptors, then either execs another program or drains stdin and exits 0.
//
//   FD_PROBE_DIR=D    required: writes D/<pid>.fds, one "FD<TAB>TARGET" line
//                     per descriptor open at start (the directory handle used
//                     to list them excluded), written to D/.<pid>.tmp first and
//                     renamed, so a reader never sees a partial record.
//   FD_PROBE_EXEC=P   optional: then execs P with our argv (argv[0] kept), for
//                     use as a runtime in front of runc; stdin is left alone.
//
// Used as a chained hook behind oci-rlimit-hook (what fds does the hook pass
// on?) and as the "runtime" oci-rlimit-runtime execs (what fds does the
// wrapper pass on?).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string Listing() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return "error\topendir /proc/self/fd\n";
  const int own = dirfd(d);
  std::string out;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd == own) continue;
    char target[4096];
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    out += std::to_string(fd) + "\t" + (n > 0 ? std::string(target, static_cast<size_t>(n)) : "?") +
           "\n";
  }
  closedir(d);
  return out;
}

bool WriteRecord(const std::string& dir, const std::string& text) {
  const std::string pid = std::to_string(getpid());
  const std::string tmp = dir + "/." + pid + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = close(fd) == 0 && ok;
  return ok && rename(tmp.c_str(), (dir + "/" + pid + ".fds").c_str()) == 0;
}

}  // namespace

int main(int /*argc*/, char** argv) {
  const std::string listing = Listing();  // before we open anything ourselves
  const char* dir = std::getenv("FD_PROBE_DIR");
  if (dir == nullptr || !WriteRecord(dir, listing)) {
    std::fprintf(stderr, "fd_probe: cannot record to FD_PROBE_DIR\n");
    return 1;
  }
  if (const char* next = std::getenv("FD_PROBE_EXEC")) {
    execv(next, argv);
    std::perror("fd_probe: exec");
    return 127;
  }
  char buf[4096];
  while (read(STDIN_FILENO, buf, sizeof buf) > 0) {
  }
  return 0;
}
