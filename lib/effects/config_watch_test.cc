#include "effects/config_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

namespace fs = std::filesystem;

TEST(ConfigWatch, SaysAChangeOnceAndAtItsOwnPace) {
  int64_t now = 0;
  std::string files = "a";
  ConfigWatch w([&] { return files; }, [&] { return now; }, 2000);
  now = 1000;
  EXPECT_FALSE(w.Changed());
  files = "b";
  now = 1999;
  EXPECT_FALSE(w.Changed()) << "looked again before its interval";
  now = 2000;
  EXPECT_TRUE(w.Changed());
  now = 4000;
  EXPECT_FALSE(w.Changed()) << "the same change said twice";
  files = "a";
  now = 6000;
  EXPECT_TRUE(w.Changed());
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A ConfigMap mounted whole, as kubelet writes it: config.toml -> ..data/config.toml, ..data ->
// a timestamped directory, swapped by a rename.
TEST(ConfigFilesSnapshot, ChangesWhenKubeletSwapsTheMountOrADropInComes) {
  testsupport::TempDir dir;
  const std::string m = dir / "cm";
  fs::create_directories(m + "/..v1");
  Write(m + "/..v1/config.toml", "rlimits = []\n");
  fs::create_directory_symlink("..v1", m + "/..data");
  fs::create_symlink("..data/config.toml", m + "/config.toml");
  const std::string first = ConfigFilesSnapshot(m + "/config.toml");
  EXPECT_EQ(ConfigFilesSnapshot(m + "/config.toml"), first);

  fs::create_directories(m + "/..v2");
  Write(m + "/..v2/config.toml", "rlimits = []\n");  // the same bytes, a new file
  fs::create_directory_symlink("..v2", m + "/..tmp");
  fs::rename(m + "/..tmp", m + "/..data");
  const std::string swapped = ConfigFilesSnapshot(m + "/config.toml");
  EXPECT_NE(swapped, first);

  fs::create_directories(m + "/config.d");
  Write(m + "/config.d/10-node.toml", "on-error = \"warn\"\n");
  EXPECT_NE(ConfigFilesSnapshot(m + "/config.toml"), swapped);
}

TEST(ConfigFilesSnapshot, AFileThatComesOrGoesIsAChange) {
  testsupport::TempDir dir;
  const std::string c = dir / "config.toml";
  const std::string none = ConfigFilesSnapshot(c);
  Write(c, "rlimits = []\n");
  const std::string some = ConfigFilesSnapshot(c);
  EXPECT_NE(some, none);
  fs::remove(c);
  EXPECT_EQ(ConfigFilesSnapshot(c), none);
}

}  // namespace
}  // namespace ocirlimit
