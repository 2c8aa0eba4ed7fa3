#include "cli/admission/admission_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status WriteAllTo(int fd, std::string_view text) {
  struct stat st {};
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  // Where this write begins: the end of the file for `>>` (O_APPEND).
  const int flags = fcntl(fd, F_GETFL);
  const off_t start = !regular                                ? -1
                      : flags >= 0 && (flags & O_APPEND) != 0 ? st.st_size
                                                              : lseek(fd, 0, SEEK_CUR);
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      // Nothing half-written stays for kubectl to read.
      if (start >= 0) {
        [[maybe_unused]] const int cut = ftruncate(fd, start);
      }
      return MakeError(Cat("write (", std::to_string(text.size()), " bytes left)"), err);
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Ok{};
}

Status WriteOutput(const std::string& output, const std::string& text) {
  if (output.empty() || output == "-") {
    if (auto st = WriteAllTo(STDOUT_FILENO, text); !st) return st.error().Wrap("stdout");
    return Ok{};
  }
  constexpr mode_t kMode = 0644;
  auto st = AtomicWriteFile(output, text);
  if (!st && st.error().err == ENOENT) {
    st = PlaceNewFile(output, text, kMode, DirOf(output));
    // Made by someone else since: replace it as any existing file.
    if (!st && st.error().err == EEXIST) st = AtomicWriteFile(output, text);
  }
  if (!st) return st.error().Wrap("--output " + Quote(output));
  return Ok{};
}

}  // namespace ocirlimit::cli
