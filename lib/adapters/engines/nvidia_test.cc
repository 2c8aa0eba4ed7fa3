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
