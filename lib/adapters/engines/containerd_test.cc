#include "adapters/engines/containerd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/testing/case_name.h"
#include "tests/testing/deep_toml.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

using namespace ocirlimit::engines;  // NOLINT(google-build-using-namespace)
using testsupport::DeepTomlDottedKey;
using testsupport::DeepTomlHeader;

struct ContainerdCase {
  std::string name;
  std::string text;
  // want: "name:read:BinaryName" per handler, default handler, NRI socket, or an error part.
  std::vector<std::string> handlers;
  std::string default_handler = "runc";
  std::string error = "";
};

class ContainerdTable : public ::testing::TestWithParam<ContainerdCase> {};

TEST_P(ContainerdTable, ReadsHandlersAndDefault) {
  const auto& c = GetParam();
  auto cfg = ParseContainerdConfig(c.text, "/etc/containerd/config.toml");
  if (!c.error.empty()) {
    ASSERT_FALSE(cfg);
    EXPECT_NE(cfg.error().Text().find(c.error), std::string::npos) << cfg.error().Text();
    EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos) << "not one line";
    return;
  }
  ASSERT_TRUE(cfg) << cfg.error().Text();
  std::vector<std::string> got;
  for (const auto& h : cfg->handlers) {
    got.push_back(h.name + ":" + (h.read ? "read" : "ignored") + ":" + h.binary_name);
  }
  EXPECT_EQ(got, c.handlers);
  EXPECT_EQ(DefaultHandlerName(*cfg), c.default_handler);
}

// As nvidia-ctk and the GPU Operator write them (toolkit v1.17.8).
const std::string kOperatorV2 = R"(version = 2
imports = ["/etc/containerd/config.toml"]
[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "nvidia"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi.options]
BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi"
)";
const std::string kV3 = R"(version = 3
[plugins."io.containerd.cri.v1.runtime".containerd]
default_runtime_name = "oci-rlimit"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.stale.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";

INSTANTIATE_TEST_SUITE_P(
    Configs, ContainerdTable,
    ::testing::Values(
        ContainerdCase{"EmptyIsVersion1", "", {}},
        ContainerdCase{"OperatorV2",
                       kOperatorV2,
                       {"nvidia:read:/usr/local/nvidia/toolkit/nvidia-container-runtime",
                        "nvidia-cdi:read:/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi"},
                       "nvidia"},
        ContainerdCase{"V3AndAStaleV2Table",
                       kV3,
                       {"stale:ignored:/usr/bin/oci-rlimit-runtime",
                        "oci-rlimit:read:/usr/bin/oci-rlimit-runtime"},
                       "oci-rlimit"},
        ContainerdCase{"V2DefaultUnderV3IsNotRead",
                       "version = 2\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n"
                       "default_runtime_name = 'x'\n",
                       {},
                       "runc"},
        ContainerdCase{"BinaryNameNotAString",
                       "version = 2\n[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.a."
                       "options]\nBinaryName = 1\n",
                       {},
                       "",
                       "runtime \"a\": options: BinaryName: must be a string"},
        ContainerdCase{"BadToml", "version = [", {}, "", "/etc/containerd/config.toml: line 1"},
        ContainerdCase{"VersionNotANumber", "version = 'x'\n", {}, "", "version: must be"},
        ContainerdCase{"DeepDottedKeyIsOneLine",
                       DeepTomlDottedKey(),
                       {},
                       "",
                       "/etc/containerd/config.toml: line 1, column 200: keys nested deeper than "
                       "100 levels"},
        ContainerdCase{"DeepHeaderIsOneLine",
                       "version = 2\n" + DeepTomlHeader(),
                       {},
                       "",
                       "/etc/containerd/config.toml: line 2, column 201: keys nested deeper than "
                       "100 levels"}),
    CaseName{});

struct NriCase {
  std::string name;
  std::string text;
  int major;
  bool enabled;
  std::string socket;
};
class ContainerdNriTable : public ::testing::TestWithParam<NriCase> {};
TEST_P(ContainerdNriTable, DefaultsByVersion) {
  const auto& c = GetParam();
  auto cfg = ParseContainerdConfig(c.text, "c");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  ContainerdNri nri = NriSettings(*cfg, c.major);
  EXPECT_EQ(nri.enabled, c.enabled);
  EXPECT_EQ(nri.socket_path, c.socket);
}
INSTANTIATE_TEST_SUITE_P(
    Nri, ContainerdNriTable,
    ::testing::Values(NriCase{"Off17", "", 1, false, "/var/run/nri/nri.sock"},
                      NriCase{"On2", "", 2, true, "/var/run/nri/nri.sock"},
                      NriCase{"Enabled17",
                              "[plugins.'io.containerd.nri.v1.nri']\ndisable = false\n", 1, true,
                              "/var/run/nri/nri.sock"},
                      NriCase{"OtherSocket",
                              "[plugins.'io.containerd.nri.v1.nri']\nsocket_path = '/run/x.sock'\n",
                              2, true, "/run/x.sock"}),
    CaseName{});

TEST(ReadContainerdConfig, FollowsImportsSkippingItself) {
  testing::FakeFiles fs;
  fs.files["/etc/containerd/config.toml"] =
      kOperatorV2 + "\n" + "";  // imports itself, as the operator writes it on 1.7
  fs.files["/etc/containerd/config.toml"].replace(
      fs.files["/etc/containerd/config.toml"].find("imports = [") + 11, 0,
      "\"/etc/containerd/conf.d/*.toml\", ");
  fs.files["/etc/containerd/conf.d/10-ours.toml"] =
      "version = 2\n[plugins.'io.containerd.grpc.v1.cri'.containerd]\n"
      "default_runtime_name = 'oci-rlimit'\n"
      "[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.oci-rlimit.options]\n"
      "BinaryName = '/usr/bin/oci-rlimit-runtime'\n";
  fs.files["/etc/containerd/conf.d/README"] = "not toml [";
  auto got = ReadContainerdConfig(fs, 2);
  ASSERT_TRUE(got) << got.error().Text();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->read, (std::vector<std::string>{"/etc/containerd/config.toml",
                                                    "/etc/containerd/conf.d/10-ours.toml"}));
  EXPECT_EQ(DefaultHandlerName((*got)->config), "oci-rlimit");
  ASSERT_NE(FindHandler((*got)->config, "oci-rlimit"), nullptr);
  EXPECT_EQ(FindHandler((*got)->config, "oci-rlimit")->source,
            "/etc/containerd/conf.d/10-ours.toml");
  ASSERT_NE(FindHandler((*got)->config, "nvidia"), nullptr);
}

// Shaped like NVIDIA's toolkit v1.20 on a node: config.toml with the admin's
// handler and `imports`, and conf.d/99-nvidia.toml holding a copy of the CRI
// table (gpu-node-today.md). What containerd 1.7.24 and 2.1.9 made of these
// files (`containerd config dump`) is the `want` of each case.
const std::string kMainV2 = R"(version = 2
imports = ["/etc/containerd/conf.d/*.toml"]
[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
pod_annotations = ["oci-rlimit.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/local/bin/oci-rlimit-runtime"
[plugins."io.containerd.nri.v1.nri"]
disable = false
)";
const std::string kNvidiaDropinV2 = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
Root = "/x"
)";

struct ViewCase {
  std::string name;
  int major;
  std::map<std::string, std::string> files;
  // "name=BinaryName@source" of each handler containerd reads, in order.
  std::vector<std::string> handlers;
  std::vector<std::string> hidden = {};  // names a later CRI table hid (1.x)
  std::string cri_source = "/etc/containerd/config.toml";
  std::string default_handler = "runc";
  bool nri = true;
  std::string error = "";
};

class ContainerdView : public ::testing::TestWithParam<ViewCase> {};

TEST_P(ContainerdView, MergesAsThatContainerdDoes) {
  const auto& c = GetParam();
  testing::FakeFiles fs;
  for (const auto& [path, text] : c.files) fs.files[path] = text;
  auto got = ReadContainerdConfig(fs, c.major);
  if (!c.error.empty()) {
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().Text().find(c.error), std::string::npos) << got.error().Text();
    return;
  }
  ASSERT_TRUE(got) << got.error().Text();
  ASSERT_TRUE(got->has_value());
  const ContainerdFiles& v = **got;
  std::vector<std::string> handlers;
  for (const auto& h : v.config.handlers) {
    if (h.read) handlers.push_back(h.name + "=" + h.binary_name + "@" + h.source);
  }
  std::vector<std::string> hidden;
  for (const auto& h : v.hidden) hidden.push_back(h.name);
  std::vector<std::string> want = c.handlers;
  std::vector<std::string> want_hidden = c.hidden;
  for (auto* list : {&handlers, &want, &hidden, &want_hidden})
    std::sort(list->begin(), list->end());
  EXPECT_EQ(handlers, want);
  EXPECT_EQ(hidden, want_hidden);
  EXPECT_EQ(v.cri_source, c.cri_source);
  EXPECT_EQ(DefaultHandlerName(v.config), c.default_handler);
  EXPECT_EQ(NriSettings(v.config, v.major).enabled, c.nri);
}

const std::string kMain = "/etc/containerd/config.toml";
const std::string kNv = "/etc/containerd/conf.d/99-nvidia.toml";
const std::string kOurs = "/etc/containerd/conf.d/99-oci-rlimit.toml";
const std::string kWrap = "/usr/local/bin/oci-rlimit-runtime";
const std::string kNvBin = "/usr/local/nvidia/toolkit/nvidia-container-runtime";

std::string ToV3(std::string s) {
  for (size_t at = s.find("io.containerd.grpc.v1.cri"); at != std::string::npos;
       at = s.find("io.containerd.grpc.v1.cri", at + 28)) {
    s.replace(at, 25, "io.containerd.cri.v1.runtime");
  }
  s.replace(s.find("version = 2"), 11, "version = 3");
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Imports, ContainerdView,
    ::testing::Values(
        // 1.7: NVIDIA's drop-in replaces the CRI table whole: runc and our
        // handler vanish, the default with them; the NRI table stays.
        ViewCase{"V17DropinHidesTheMainCriTable",
                 1,
                 {{kMain, kMainV2}, {kNv, kNvidiaDropinV2}},
                 {"nvidia=" + kNvBin + "@" + kNv, "oci-rlimit=@" + kNv},
                 {"runc", "oci-rlimit"},
                 kNv},
        // 2.1: key by key; our BinaryName stays beside the drop-in's Root.
        ViewCase{
            "V2MergesKeyByKey",
            2,
            {{kMain, kMainV2}, {kNv, kNvidiaDropinV2}},
            {"runc=@" + kMain, "oci-rlimit=" + kWrap + "@" + kNv, "nvidia=" + kNvBin + "@" + kNv}},
        // 2.1: a version 3 drop-in makes the merged config version 3, and
        // the main file's version 2 table is ignored, not migrated.
        ViewCase{"V2Version3DropinIgnoresTheVersion2Table",
                 2,
                 {{kMain, kMainV2}, {kNv, ToV3(kNvidiaDropinV2)}},
                 {"nvidia=" + kNvBin + "@" + kNv, "oci-rlimit=@" + kNv}},
        // Our own drop-in after NVIDIA's wins on 2.x.
        ViewCase{"V2OurDropinAfterNvidiasWins",
                 2,
                 {{kMain, ToV3(kMainV2)},
                  {kNv, ToV3(kNvidiaDropinV2) + "BinaryName = \"/old/oci-rlimit-runtime\"\n"},
                  {kOurs,
                   "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".containerd."
                   "runtimes.oci-rlimit.options]\nBinaryName = \"" +
                       kWrap + "\"\n"}},
                 {"runc=@" + kMain, "oci-rlimit=" + kWrap + "@" + kOurs,
                  "nvidia=" + kNvBin + "@" + kNv}},
        // 1.7 refuses a version 3 file, main or imported.
        ViewCase{"V17RefusesVersion3",
                 1,
                 {{kMain, ToV3(kMainV2)}},
                 {},
                 {},
                 kMain,
                 "runc",
                 true,
                 "containerd 1.x reads versions 1 and 2 only"},
        ViewCase{"V17RefusesAVersion3Import",
                 1,
                 {{kMain, kMainV2}, {kNv, ToV3(kNvidiaDropinV2)}},
                 {},
                 {},
                 kMain,
                 "runc",
                 true,
                 kNv + ": version 3"},
        // 1.7: an NRI table in an import replaces the main file's.
        ViewCase{"V17NriTableReplaced",
                 1,
                 {{kMain, kMainV2},
                  {kNv,
                   "version = 2\n[plugins.\"io.containerd.nri.v1.nri\"]\n"
                   "socket_path = \"/run/x.sock\"\n"}},
                 {"runc=@" + kMain, "oci-rlimit=" + kWrap + "@" + kMain},
                 {},
                 kMain,
                 "runc",
                 false},
        // Unknown version: a version 2 main file is read as 1.x reads it.
        ViewCase{"UnknownMajorVersion2IsRead1x",
                 0,
                 {{kMain, kMainV2}, {kNv, kNvidiaDropinV2}},
                 {"nvidia=" + kNvBin + "@" + kNv, "oci-rlimit=@" + kNv},
                 {"runc", "oci-rlimit"},
                 kNv}),
    CaseName{});

TEST(ReadContainerdConfig, MissingFileIsNone) {
  testing::FakeFiles fs;
  auto got = ReadContainerdConfig(fs);
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->has_value());
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

using namespace ocirlimit::engines;  // NOLINT(google-build-using-namespace)

// An import without `version` is read as its own version; merged into a
// version 3 config, its version 3 handler table is then the one containerd
// reads (the import's `read` is recomputed for the main file's version).
TEST(ContainerdMutants, AnImportsHandlerIsReadByTheMainVersion) {
  testing::FakeFiles fs;
  fs.files[kMain] = "version = 3\nimports = ['/etc/containerd/conf.d/x.toml']\n";
  fs.files["/etc/containerd/conf.d/x.toml"] =
      "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.ours.options]\n"
      "BinaryName = '/usr/bin/oci-rlimit-runtime'\n";
  auto got = ReadContainerdConfig(fs);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_NE(FindHandler((*got)->config, "ours"), nullptr);
}

// An import that names no default keeps the main file's.
TEST(ContainerdMutants, AnImportWithoutADefaultKeepsTheMainOne) {
  testing::FakeFiles fs;
  fs.files[kMain] =
      "version = 2\nimports = ['/etc/containerd/conf.d/x.toml']\n"
      "[plugins.'io.containerd.grpc.v1.cri'.containerd]\ndefault_runtime_name = 'oci-rlimit'\n";
  fs.files["/etc/containerd/conf.d/x.toml"] =
      "version = 2\n[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.other.options]\n"
      "BinaryName = '/usr/sbin/runc'\n";
  // containerd 2.x merges key by key (1.x would replace the CRI table whole).
  auto got = ReadContainerdConfig(fs, 2);
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ(DefaultHandlerName((*got)->config), "oci-rlimit");
}

// A version 2 config's version 3 table is not read: FindHandler skips it.
TEST(ContainerdMutants, FindHandlerSkipsTheOtherVersionsTable) {
  auto cfg = ParseContainerdConfig(
      "version = 2\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.x.options]\n"
      "BinaryName = '/usr/sbin/runc'\n",
      kMain);
  ASSERT_TRUE(cfg) << cfg.error().Text();
  EXPECT_EQ(FindHandler(*cfg, "x"), nullptr);
}

// An empty socket_path is containerd's default socket.
TEST(ContainerdMutants, AnEmptySocketPathIsTheDefault) {
  auto cfg = ParseContainerdConfig("[plugins.'io.containerd.nri.v1.nri']\nsocket_path = ''\n", "c");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  EXPECT_EQ(NriSettings(*cfg, 2).socket_path, "/var/run/nri/nri.sock");
}

}  // namespace
}  // namespace ocirlimit
