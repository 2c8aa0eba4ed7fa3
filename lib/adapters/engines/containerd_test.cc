#include "adapters/engines/containerd.h"

#include <gtest/gtest.h>

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
  auto got = ReadContainerdConfig(fs);
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

constexpr const char* kMain = "/etc/containerd/config.toml";

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
  auto got = ReadContainerdConfig(fs);
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
