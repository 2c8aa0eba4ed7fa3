#include "effects/decisions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

// dir exists (made 0700 when missing, its parent 0755) as a directory of
// root's that only root can write, reached without a symlink at its end.
Status EnsureDir(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string parent = dir.substr(0, slash);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      return MakeError("make " + Quote(parent), errno);
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return MakeError("make " + Quote(dir), errno);
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return MakeError("stat " + Quote(dir), errno);
  if (!S_ISDIR(st.st_mode)) return MakeError(Quote(dir) + " is not a directory", ENOTDIR);
  if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
    return MakeError(Quote(dir) + " is owned by uid " + std::to_string(st.st_uid) +
                         " or writable by others: not trusted",
                     EPERM);
  }
  return Ok{};
}

class LinuxStore final : public DecisionStore {
 public:
  LinuxStore(FsOps& fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}

  Result<std::optional<DecisionRecord>> Read(const std::string& id) override {
    return ReadDecision(fs_, dir_, id);
  }

  Status Write(const DecisionRecord& d) override {
    if (!IsPlainName(d.id)) return MakeError("container id " + Quote(d.id) + ": not a file name");
    if (auto made = EnsureDir(dir_); !made) return made.error().Wrap("decision record");
    // A new record is linked into place whole; one there is replaced whole.
    const std::string path = dir_ + "/" + d.id;
    const std::string text = FormatDecision(d);
    auto w = PlaceNewFile(path, text, 0600, dir_);
    if (!w && w.error().err == EEXIST) w = AtomicWriteFileMode(path, text, 0600);
    if (!w) return w.error().Wrap("decision record");
    return Ok{};
  }

  // Through the directory itself, never a symlink to one, and only root's.
  Status Remove(const std::string& id) override {
    if (!IsPlainName(id)) return MakeError("container id " + Quote(id) + ": not a file name");
    const std::string path = dir_ + "/" + id;
    const int fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Ok{};
      return MakeError("remove decision record " + Quote(path), errno);
    }
    struct stat st {};
    Status done = Ok{};
    if (fstat(fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
      done = MakeError(
          "remove decision record " + Quote(path) + ": its directory is not root's alone", EPERM);
    } else if (unlinkat(fd, id.c_str(), 0) != 0 && errno != ENOENT) {
      done = MakeError("remove decision record " + Quote(path), errno);
    }
    close(fd);
    return done;
  }

  Result<std::vector<std::string>> Ids() override {
    auto entries = fs_.ListDir(dir_);
    if (!entries) {
      if (entries.error().err == ENOENT) return std::vector<std::string>{};
      return entries.error();
    }
    std::vector<std::string> ids;
    for (const auto& e : *entries) {
      if (!e.dir && IsPlainName(e.name) && e.name.front() != '.') ids.push_back(e.name);
    }
    return ids;
  }

  const std::string& dir() const override { return dir_; }

 private:
  FsOps& fs_;
  std::string dir_;
};

}  // namespace

Result<std::optional<DecisionRecord>> ReadDecision(FsOps& fs, const std::string& dir,
                                                   const std::string& id) {
  if (!IsPlainName(id)) return MakeError("container id " + Quote(id) + ": not a file name");
  auto text = fs.ReadTrusted(dir, {id}, uid_t{0}, kMaxDecisionBytes);
  if (!text) {
    if (text.error().err == ENOENT) return std::optional<DecisionRecord>{};
    return text.error().Wrap("decision record");
  }
  auto d = ParseDecision(text->text);
  if (!d) return d.error().Wrap("decision record " + Quote(dir + "/" + id));
  if (d->id != id) {
    return MakeError("decision record " + Quote(dir + "/" + id) + " names container " +
                     Quote(d->id) + ": not believed");
  }
  return std::optional<DecisionRecord>(std::move(*d));
}

std::optional<std::time_t> ParseRfc3339Utc(const std::string& text) {
  std::tm tm{};
  char z = 0;
  if (text.size() != 20 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 ||
      z != 'Z' || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return timegm(&tm);
}

bool OldEnoughToPrune(const DecisionRecord& d, std::time_t now) {
  const auto at = ParseRfc3339Utc(d.time);
  return at && now - *at >= kPruneGrace;
}

std::string DecisionsDir(const std::optional<std::string>& env) {
  if (env && !env->empty() && env->front() == '/') return *env;
  return std::string(kDecisionsDir);
}

std::unique_ptr<DecisionStore> LinuxDecisionStore(FsOps& fs, std::string dir) {
  return std::make_unique<LinuxStore>(fs, std::move(dir));
}

}  // namespace ocirlimit
