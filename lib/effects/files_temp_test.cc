// Temp files outside the directories engines watch (issue 37): a new or
// replaced file in a ".d" directory is written beside that directory and
// moved in whole, so an inotify watcher on it (crio's hooks.d) never sees
// a .oci-rlimit.XXXXXX nor an empty file appear.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "effects/files.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {
namespace fs = std::filesystem;

TEST(TempDirFor, AWatchedDirectorysTempIsBesideIt) {
  EXPECT_EQ(TempDirFor("/usr/share/containers/oci/hooks.d/oci-rlimit.json"),
            "/usr/share/containers/oci");
  EXPECT_EQ(TempDirFor("/etc/crio/crio.conf.d/99-oci-rlimit.conf"), "/etc/crio");
  EXPECT_EQ(TempDirFor("/etc/containerd/conf.d/99-oci-rlimit.toml"), "/etc/containerd");
  EXPECT_EQ(TempDirFor("/usr/local/bin/oci-rlimit"), "/usr/local/bin");
}

// Every name created or moved into `dir` while `f` runs.
template <typename F>
std::vector<std::string> NamesSeen(const std::string& dir, F f) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_GE(inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO), 0);
  f();
  std::vector<std::string> names;
  alignas(inotify_event) char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
    for (char* p = buf; p < buf + n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(p);
      if (e->len > 0) names.emplace_back(e->name);
      p += sizeof(inotify_event) + e->len;
    }
  }
  close(fd);
  return names;
}

TEST(PlaceNewFile, AppearsWholeAndNoTempInTheWatchedDirectory) {
  testsupport::TempDir t{"place"};
  const std::string dir = t.path() + "/hooks.d";
  fs::create_directories(dir);
  const std::string path = dir + "/oci-rlimit.json";
  auto names = NamesSeen(dir, [&] {
    ASSERT_TRUE(PlaceNewFile(path, "{}\n", 0640, TempDirFor(path)));
    ASSERT_TRUE(AtomicWriteFileVia(path, "{\"a\":1}\n", TempDirFor(path)));
  });
  EXPECT_EQ(names, (std::vector<std::string>{"oci-rlimit.json", "oci-rlimit.json"}));
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "the replacement keeps the mode";
  auto again = PlaceNewFile(path, "x", 0644, TempDirFor(path));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().err, EEXIST);
  for (const auto& e : fs::directory_iterator(t.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".oci-rlimit.")) << e.path();
  }
}

}  // namespace
}  // namespace ocirlimit
