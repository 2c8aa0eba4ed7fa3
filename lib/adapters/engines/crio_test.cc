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
                 {"runc=", "crun="},  // CRI-O's built-in crun stays
                 "runc",
                 {"/usr/share/containers/oci/hooks.d"},
                 false},
        CrioCase{"LaterFileWinsKeyByKey",
                 {{"/etc/crio/crio.conf",
                   "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\n"},
                  {"/etc/crio/crio.conf.d/9.conf",
                   "[crio.runtime]\ndefault_runtime = 'runc'\n"
                   "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/local/sbin/runc'\n"}},
                 {"runc=/usr/local/sbin/runc", "crun="},
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

// issue 37: the monitor fields as CRI-O 1.31 judges them at start
// ("monitor fields translation: ... cgroupfs manager conmon cgroup should be
// 'pod' or empty", seen on the real crio in tests/crio).
struct MonitorCase {
  std::string name;
  std::string conf;
  std::string error = "";  // "" : crio starts
};

class MonitorTable : public ::testing::TestWithParam<MonitorCase> {};

TEST_P(MonitorTable, JudgesTheMonitorCgroupAgainstTheCgroupManager) {
  const auto& c = GetParam();
  testing::FakeFiles fs;
  fs.files = {{"/etc/crio/crio.conf", c.conf}};
  auto cfg = ParseCrioConfigs(CrioConfigFiles(fs));
  ASSERT_TRUE(cfg) << cfg.error().Text();
  Status st = CheckCrioMonitors(*cfg);
  if (c.error.empty()) {
    EXPECT_TRUE(st) << st.error().Text();
    return;
  }
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().Text().find(c.error), std::string::npos) << st.error().Text();
  EXPECT_EQ(st.error().Text().find('\n'), std::string::npos);
}

const std::string kCgroupfs = "[crio.runtime]\ncgroup_manager = 'cgroupfs'\n";

INSTANTIATE_TEST_SUITE_P(
    Monitors, MonitorTable,
    ::testing::Values(
        MonitorCase{"SystemdDefaultsStart", ""},
        MonitorCase{"CgroupfsWithGlobalPod", kCgroupfs + "conmon_cgroup = 'pod'\n"},
        MonitorCase{"CgroupfsUnsetIsSystemSlice", kCgroupfs,
                    "[crio.runtime.runtimes.crun] monitor_cgroup is unset"},
        MonitorCase{"CgroupfsPerHandlerPod",
                    kCgroupfs + "[crio.runtime.runtimes.crun]\nmonitor_cgroup = 'pod'\n"},
        MonitorCase{"CgroupfsGlobalPodCoversEveryHandler",
                    kCgroupfs + "conmon_cgroup = 'pod'\n[crio.runtime.runtimes.x]\n"
                                "monitor_cgroup = 'system.slice'\n",
                    ""},  // the global conmon_cgroup replaces every handler's
        MonitorCase{"CgroupfsGlobalSliceRefused", kCgroupfs + "conmon_cgroup = 'system.slice'\n",
                    "[crio.runtime] conmon_cgroup is \"system.slice\""},
        MonitorCase{"SystemdTakesASlice",
                    "[crio.runtime.runtimes.crun]\nmonitor_cgroup = 'my.slice'\n"},
        MonitorCase{"SystemdRefusesAPath",
                    "[crio.runtime.runtimes.crun]\nmonitor_cgroup = '/conmon'\n",
                    "[crio.runtime.runtimes.crun] monitor_cgroup is \"/conmon\""}),
    CaseName{});

TEST(CrioConfig, ReadsTheStorageRootAndRuntimeRoots) {
  testing::FakeFiles fs;
  fs.files = {{"/etc/crio/crio.conf",
               "[crio]\nroot = '/store'\n"
               "[crio.runtime.runtimes.runc]\nruntime_root = '/run/runc'\n"}};
  auto cfg = ParseCrioConfigs(CrioConfigFiles(fs));
  ASSERT_TRUE(cfg) << cfg.error().Text();
  EXPECT_EQ(cfg->storage_root, "/store");
  EXPECT_EQ(RuntimeRoot(*FindCrioRuntime(*cfg, "runc")), "/run/runc");
  EXPECT_EQ(RuntimeRoot(*FindCrioRuntime(*cfg, "crun")), "/run/crun") << "DefaultRuntimeRoot";
  testing::FakeFiles none;
  auto defaults = ParseCrioConfigs(CrioConfigFiles(none));
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->storage_root, "/var/lib/containers/storage");
}

}  // namespace
}  // namespace ocirlimit
