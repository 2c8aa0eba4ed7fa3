#include "effects/config_watch.h"

#include <sys/stat.h>

#include <utility>

#include "core/config.h"
#include "effects/config_loader.h"

namespace ocirlimit {
namespace {

std::string Describe(const std::string& path) {
  struct stat st {};
  std::string out = path + "\n";
  if (stat(path.c_str(), &st) != 0) return out + "-\n";
  for (const auto v :
       {static_cast<int64_t>(st.st_dev), static_cast<int64_t>(st.st_ino),
        static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec),
        static_cast<int64_t>(st.st_mtim.tv_nsec), static_cast<int64_t>(st.st_ctim.tv_sec),
        static_cast<int64_t>(st.st_ctim.tv_nsec)}) {
    out += std::to_string(v) + " ";
  }
  return out + "\n";
}

}  // namespace

std::string ConfigFilesSnapshot(const std::string& config_path) {
  std::string out = Describe(config_path);
  // A directory that cannot be listed reads as itself: its coming back is a change too.
  if (auto dropins = ListDropIns(DropInDir(config_path))) {
    for (const auto& d : *dropins) out += Describe(d);
  } else {
    out += "unlisted\n";
  }
  return out;
}

ConfigWatch::ConfigWatch(std::function<std::string()> snapshot, std::function<int64_t()> now_ms,
                         int64_t every_ms)
    : snapshot_(std::move(snapshot)),
      now_ms_(std::move(now_ms)),
      every_ms_(every_ms),
      last_check_ms_(now_ms_()),
      last_(snapshot_()) {}

bool ConfigWatch::Changed() {
  const int64_t now = now_ms_();
  if (now - last_check_ms_ < every_ms_) return false;
  last_check_ms_ = now;
  std::string next = snapshot_();
  if (next == last_) return false;
  last_ = std::move(next);
  return true;
}

}  // namespace ocirlimit
