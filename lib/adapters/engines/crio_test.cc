#include "adapters/engines/crio.h"

#include <gtest/gtest.h>

#include "tests/testing/case_name.h"
#include "tests/testing/deep_toml.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

using namespace ocirlimit::engines;  // NOLINT(google-build-using-namespace)
using testsupport::DeepTomlDottedKey;
using testsupport::DeepTomlHeader;

struct CrioCase {
  std::string name;
  std::map<std::string, std::string> files;  // node path -> text
  // "NAME=runtime_path" per runtime, in order
  std::vector<std::string> runtimes;
  std::string default_runtime = "crun";
  std::vector<std::string> hooks_dirs = {"/usr/share/containers/oci/hooks.d"};
  bool nri = true;
  std::string error = "";
};

class CrioTable : public ::testing::TestWithParam<CrioCase> {};

TEST_P(CrioTable, ReadsCrioConfAndDropInsInNameOrder) {
  const auto& c = GetParam();
  testing::FakeFiles fs;
  fs.files = c.files;
  auto cfg = ParseCrioConfigs(CrioConfigFiles(fs));
  if (!c.error.empty()) {
    ASSERT_FALSE(cfg);
    EXPECT_NE(cfg.error().Text().find(c.error), std::string::npos) << cfg.error().Text();
    EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos) << "not one line";
    return;
  }
  ASSERT_TRUE(cfg) << cfg.error().Text();
  std::vector<std::string> got;
  for (const auto& r : cfg->runtimes) got.push_back(r.name + "=" + r.runtime_path);
  EXPECT_EQ(got, c.runtimes);
  EXPECT_EQ(cfg->default_runtime, c.default_runtime);
  EXPECT_EQ(cfg->hooks.dirs, c.hooks_dirs);
  EXPECT_EQ(cfg->nri_enabled, c.nri);
}

const std::string kOurs =
    "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = \"/usr/bin/oci-rlimit-runtime\"\n"
    "runtime_type = \"oci\"\n";

INSTANTIATE_TEST_SUITE_P(
    Configs, CrioTable,
    ::testing::Values(
        CrioCase{"NothingIsTheDefaults", {}, {"crun="}},
        // An empty crio.conf has no [crio] table at all.
        CrioCase{"EmptyCrioConfAndADropIn",
                 {{"/etc/crio/crio.conf", ""},
                  {"/etc/crio/crio.conf.d/50-oci-rlimit.conf", kOurs},
                  {"/etc/crio/crio.conf.d/10-hooks.conf", "[crio.runtime]\nhooks_dir = ['/h']\n"}},
                 {"oci-rlimit=/usr/bin/oci-rlimit-runtime", "crun="},
                 "crun",
                 {"/h"}},
        CrioCase{"StockHeadersOnly",
                 {{"/etc/crio/crio.conf", "[crio]\n[crio.runtime]\n[crio.nri]\n"}},
                 {"crun="}},
        CrioCase{"EverySuffixCounts",
                 {{"/etc/crio/crio.conf.d/20-x.conf.disabled",
                   "[crio.runtime]\ndefault_runtime = 'runc'\n[crio.nri]\nenable_nri = false\n"}},
                 {"runc="},
                 "runc",
                 {"/usr/share/containers/oci/hooks.d"},
                 false},
        CrioCase{"LaterFileWinsKeyByKey",
                 {{"/etc/crio/crio.conf",
                   "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\n"},
                  {"/etc/crio/crio.conf.d/9.conf",
                   "[crio.runtime]\ndefault_runtime = 'runc'\n"
                   "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/local/sbin/runc'\n"}},
                 {"runc=/usr/local/sbin/runc"},
                 "runc"},
        CrioCase{
            "RuntimePathNotAString",
            {{"/etc/crio/crio.conf.d/1.conf", "[crio.runtime.runtimes.x]\nruntime_path = 1\n"}},
            {},
            "",
            {},
            true,
            "/etc/crio/crio.conf.d/1.conf: [crio.runtime.runtimes.x] runtime_path: must be"},
        CrioCase{"BadToml",
                 {{"/etc/crio/crio.conf", "[crio.runtime\n"}},
                 {},
                 "",
                 {},
                 true,
                 "/etc/crio/crio.conf: line 1"},
        CrioCase{"DeepDottedKeyInCrioConf",
                 {{"/etc/crio/crio.conf", DeepTomlDottedKey()}},
                 {},
                 "",
                 {},
                 true,
                 "/etc/crio/crio.conf: line 1, column 200: keys nested deeper than 100 levels"},
        CrioCase{"DeepHeaderInADropIn",
                 {{"/etc/crio/crio.conf", "[crio.runtime]\n"},
                  {"/etc/crio/crio.conf.d/50-deep.conf", DeepTomlHeader()}},
                 {},
                 "",
                 {},
                 true,
                 "/etc/crio/crio.conf.d/50-deep.conf: line 1, column 201: keys nested deeper "
                 "than 100 levels"}),
    CaseName{});

TEST(MonitorPath, MonitorEnvOrConmonsDefault) {
  CrioRuntime r;
  EXPECT_EQ(MonitorPath(r), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  r.monitor_env = {"A=1", "PATH=/opt/bin"};
  EXPECT_EQ(MonitorPath(r), "/opt/bin");
}

}  // namespace
}  // namespace ocirlimit
