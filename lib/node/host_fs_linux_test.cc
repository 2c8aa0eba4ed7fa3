// The real HostFs (host_fs_linux.cc) over a real tree: a file it places or
// replaces in a directory an engine watches (a name ending in ".d") never
// shows up there under any other name, and a new one never shows up empty.
// inotify sees what crio's hooks.d watcher would see (issue 37).
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <set>
#include <string>

#include "node/host_fs.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {

// The names created or moved into `dir` while `act` runs.
template <typename Act>
std::set<std::string> NamesAppearingIn(const std::string& dir, Act act) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_GE(inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO), 0);
  act();
  std::set<std::string> names;
  alignas(inotify_event) std::array<char, 8192> buf{};
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf.data() + at);
      if (ev->len > 0) names.insert(ev->name);
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  close(fd);
  return names;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(LinuxHostFs, APlacedFileAppearsInAWatchedDirectoryOnlyUnderItsNameAndWhole) {
  testsupport::TempDir tmp("hostfs");
  const std::string dir = tmp.path() + "/hooks.d";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string file = dir + "/oci-rlimit.json";
  auto names = NamesAppearingIn(dir, [&] {
    auto st = LinuxHostFs().Place(file, "{\"version\": \"1.0.0\"}\n", 0644);
    ASSERT_TRUE(st) << st.error().Text();
  });
  EXPECT_EQ(names, (std::set<std::string>{"oci-rlimit.json"}));
  EXPECT_EQ(Slurp(file), "{\"version\": \"1.0.0\"}\n");
  struct stat sb {};
  ASSERT_EQ(stat(file.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 07777, 0644U);
  // A second Place finds it there, and a Replace keeps to its name too.
  EXPECT_EQ(LinuxHostFs().Place(file, "x", 0644).error().err, EEXIST);
  names = NamesAppearingIn(dir, [&] {
    auto st = LinuxHostFs().Replace(file, "{}\n");
    ASSERT_TRUE(st) << st.error().Text();
  });
  EXPECT_EQ(names, (std::set<std::string>{"oci-rlimit.json"}));
  EXPECT_EQ(Slurp(file), "{}\n");
}

}  // namespace
}  // namespace ocirlimit::node
