#include "effects/config_loader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/testing/temp_dir.h"

namespace ocirlimit {
namespace {

namespace fs = std::filesystem;

class ConfigLoaderTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_ / name; }

  static void Write(const std::string& path, const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }

  testsupport::TempDir dir_{"loader"};
};

// --- LoadConfig ---

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_F(ConfigLoaderTest, LoadConfigReadsTheFlagFileAndAppliesTheEnvironment) {
  Write(Path("c.toml"), "rlimits = [\"memlock=1\", \"nofile=5\"]\non-error = \"warn\"\n");
  auto c = LoadConfig(Path("c.toml"), FakeEnv({{"OCI_RLIMIT_RLIMITS", "nofile=6"}}));
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->source, Path("c.toml"));
  EXPECT_EQ(c->on_error, OnError::kWarn);
  EXPECT_EQ(c->rlimits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, 1, 1}, {RLIMIT_NOFILE, 6, 6}}));
}

TEST_F(ConfigLoaderTest, LoadConfigReadsTheEnvFile) {
  Write(Path("e.toml"), "rlimits = [\"core=0\"]\n");
  auto c = LoadConfig(std::nullopt, FakeEnv({{"OCI_RLIMIT_CONFIG", Path("e.toml")}}));
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->rlimits, (std::vector<Rlimit>{{RLIMIT_CORE, 0, 0}}));
}

TEST_F(ConfigLoaderTest, LoadConfigNamedButMissingIsAnError) {
  for (auto [flag, env] :
       {std::pair<std::optional<std::string>, std::map<std::string, std::string>>{
            Path("missing.toml"), {}},
        {std::nullopt, {{"OCI_RLIMIT_CONFIG", Path("missing.toml")}}}}) {
    auto c = LoadConfig(flag, FakeEnv(env));
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().err, ENOENT);
    EXPECT_NE(c.error().Text().find(Path("missing.toml")), std::string::npos) << c.error().Text();
  }
}

// readdir listed it, open found nothing: the same as a drop-in removed in
// between (a dangling symlink is that state, kept still for the test).
TEST_F(ConfigLoaderTest, AVanishedDropInIsSkippedWithAWarning) {
  Write(Path("c.toml"), "rlimits = [\"memlock=1\"]\n");
  fs::create_directory(Path("c.d"));
  Write(Path("c.d/10-a.toml"), "rlimits = [\"nofile=5\"]\n");
  fs::create_symlink(Path("c.d/gone.toml.tmp"), Path("c.d/20-gone.toml"));
  std::vector<std::string> warnings;
  auto c = LoadConfigFrom(ConfigPath{Path("c.toml"), true}, FakeEnv({}), &warnings);
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->rlimits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, 1, 1}}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "config drop-in \"" + Path("c.d/20-gone.toml") +
                             "\" is gone (removed or renamed after its directory was listed, or a "
                             "dangling symlink); skipped");
  // The hook's and the wrapper's loader carries it too.
  auto as = LoadConfigAs(Path("c.toml"), FakeEnv({}), false);
  ASSERT_TRUE(as.ok()) << as.error().Text();
  EXPECT_EQ(as->warnings, warnings);
}

TEST_F(ConfigLoaderTest, LoadConfigMissingDefaultIsNoFile) {
  auto c = LoadConfigFrom(ConfigPath{Path("missing.toml"), false},
                          FakeEnv({{"NVIDIA_CONTAINER_RUNTIME_RLIMITS", "memlock=unlimited"}}));
  ASSERT_TRUE(c.ok()) << c.error().Text();
  EXPECT_EQ(c->source, "");
  EXPECT_EQ(c->rlimits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, kRlimInfinity, kRlimInfinity}}));
}

TEST_F(ConfigLoaderTest, LoadConfigDefaultThatIsADirectoryIsAnError) {
  ASSERT_EQ(mkdir(Path("config.toml").c_str(), 0755), 0);
  for (bool must_exist : {false, true}) {
    auto c = LoadConfigFrom(ConfigPath{Path("config.toml"), must_exist}, FakeEnv({}));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().Text().find("is not a regular file"), std::string::npos)
        << c.error().Text();
  }
}

TEST_F(ConfigLoaderTest, LoadConfigReportsParseErrorsWithThePath) {
  Write(Path("c.toml"), "rlimits = [\"memlock=1\"]\nbogus = 1\n");
  auto c = LoadConfig(Path("c.toml"), FakeEnv({}));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().Text(), "config \"" + Path("c.toml") + "\": unknown key \"bogus\"");
}

TEST_F(ConfigLoaderTest, LoadConfigReportsBadEnvironment) {
  Write(Path("c.toml"), "rlimits = [\"memlock=1\"]\n");
  auto c = LoadConfig(Path("c.toml"), FakeEnv({{"OCI_RLIMIT_RLIMITS", "memlock=x"}}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().Text().find("environment OCI_RLIMIT_RLIMITS"), std::string::npos)
      << c.error().Text();
}

TEST(ProcessEnv, ReadsTheRealEnvironment) {
  ASSERT_EQ(setenv("OCI_RLIMIT_FILES_TEST", "x=1", 1), 0);
  EnvLookup env = ProcessEnv();
  EXPECT_EQ(env("OCI_RLIMIT_FILES_TEST"), std::optional<std::string>("x=1"));
  ASSERT_EQ(unsetenv("OCI_RLIMIT_FILES_TEST"), 0);
  EXPECT_EQ(env("OCI_RLIMIT_FILES_TEST"), std::nullopt);
}

}  // namespace
}  // namespace ocirlimit
