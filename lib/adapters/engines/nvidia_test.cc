#include "adapters/engines/nvidia.h"

#include <gtest/gtest.h>

#include "tests/testing/case_name.h"
#include "tests/testing/deep_toml.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

using namespace ocirlimit::engines;  // NOLINT(google-build-using-namespace)
using testsupport::DeepTomlDottedKey;
using testsupport::DeepTomlHeader;

constexpr const char* kConfig = "/etc/nvidia-container-runtime/config.toml";

struct NvidiaCase {
  std::string name;
  std::string text;  // the config.toml at kConfig
  std::vector<std::string> runtimes;
  std::string error = "";  // the whole one-line error, when it fails
};

class NvidiaTable : public ::testing::TestWithParam<NvidiaCase> {};

TEST_P(NvidiaTable, ReadsItsRuntimesOrOneLine) {
  const auto& c = GetParam();
  testing::FakeFiles fs;
  fs.files[kConfig] = c.text;
  auto cfg = ReadNvidiaConfig(fs, "/usr/bin/nvidia-container-runtime");
  if (!c.error.empty()) {
    ASSERT_FALSE(cfg);
    EXPECT_EQ(cfg.error().Text().substr(0, c.error.size()), c.error);
    EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos) << "not one line";
    return;
  }
  ASSERT_TRUE(cfg) << cfg.error().Text();
  EXPECT_EQ(cfg->runtimes, c.runtimes);
  EXPECT_EQ(cfg->source, kConfig);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, NvidiaTable,
    ::testing::Values(
        NvidiaCase{"Runtimes",
                   "[nvidia-container-runtime]\nruntimes = ['crun', 'runc']\n",
                   {"crun", "runc"}},
        NvidiaCase{"RuntimesNotStrings",
                   "[nvidia-container-runtime]\nruntimes = [1]\n",
                   {},
                   std::string(kConfig) + ": [nvidia-container-runtime] runtimes: must be"},
        NvidiaCase{
            "DeepDottedKey",
            DeepTomlDottedKey(),
            {},
            std::string(kConfig) + ": line 1, column 200: keys nested deeper than 100 levels"},
        NvidiaCase{
            "DeepHeader",
            "[nvidia-container-runtime]\nruntimes = ['runc']\n" + DeepTomlHeader(),
            {},
            std::string(kConfig) + ": line 3, column 201: keys nested deeper than 100 levels"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

using engines::NvidiaInjectorGaps;
using engines::ReadNvidiaConfig;

constexpr const char* kNvidiaToml = "/etc/nvidia-container-runtime/config.toml";
constexpr const char* kOperatorBinary = "/usr/local/nvidia/toolkit/nvidia-container-runtime";

// Issue 39 finding 9: the `nvidia-runtime` CDI injector needs NVIDIA's
// runtime in a handler's chain, reading a config that accepts the variable
// in unprivileged containers (the toolkit's default).
TEST(NvidiaInjector, TheEnvvarKeyIsReadAndDefaultsToTrue) {
  testing::FakeFiles fs;
  auto def = ReadNvidiaConfig(fs, "/usr/bin/nvidia-container-runtime");
  ASSERT_TRUE(def) << def.error().Text();
  EXPECT_TRUE(def->envvar_when_unprivileged);
  fs.files[kNvidiaToml] = "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n";
  auto off = ReadNvidiaConfig(fs, "/usr/bin/nvidia-container-runtime");
  ASSERT_TRUE(off) << off.error().Text();
  EXPECT_FALSE(off->envvar_when_unprivileged);
  fs.files[kNvidiaToml] = "accept-nvidia-visible-devices-envvar-when-unprivileged = true\n";
  EXPECT_TRUE(ReadNvidiaConfig(fs, "/usr/bin/nvidia-container-runtime")->envvar_when_unprivileged);
  fs.files[kNvidiaToml] = "accept-nvidia-visible-devices-envvar-when-unprivileged = \"no\"\n";
  auto bad = ReadNvidiaConfig(fs, "/usr/bin/nvidia-container-runtime");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().Text(), std::string(kNvidiaToml) +
                                    ": accept-nvidia-visible-devices-envvar-when-unprivileged: "
                                    "want true or false");
}

TEST(NvidiaInjector, GapsNameWhatTheNodeLacks) {
  testing::FakeFiles fs;
  const std::vector<std::string> none = NvidiaInjectorGaps(fs, {});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("NVIDIA's runtime runs in no handler's chain"), std::string::npos);
  EXPECT_EQ(NvidiaInjectorGaps(fs, {"/usr/bin/nvidia-container-runtime"}),
            std::vector<std::string>{});
  fs.files[kNvidiaToml] = "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n";
  const std::vector<std::string> off = NvidiaInjectorGaps(
      fs, {"/usr/bin/nvidia-container-runtime", "/usr/bin/nvidia-container-runtime"});
  ASSERT_EQ(off.size(), 1u) << "one line per config";
  EXPECT_EQ(off[0], std::string(kNvidiaToml) +
                        " sets accept-nvidia-visible-devices-envvar-when-unprivileged = false: "
                        "NVIDIA ignores NVIDIA_VISIBLE_DEVICES in unprivileged containers, so the "
                        "variable injects no device there");
  // The operator's runtime reads its own config, which keeps the default.
  EXPECT_EQ(NvidiaInjectorGaps(fs, {kOperatorBinary}), std::vector<std::string>{});
}

}  // namespace
}  // namespace ocirlimit
