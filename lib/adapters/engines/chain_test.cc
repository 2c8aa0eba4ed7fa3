#include "adapters/engines/chain.h"

#include <gtest/gtest.h>

#include "tests/testing/case_name.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

using namespace ocirlimit::engines;  // NOLINT(google-build-using-namespace)

constexpr const char* kPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr const char* kWrapper = "/usr/bin/oci-rlimit-runtime";
constexpr const char* kNvidia = "/usr/bin/nvidia-container-runtime";
constexpr const char* kToolkit = "/usr/local/nvidia/toolkit/nvidia-container-runtime";
constexpr const char* kOperatorConfig =
    "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml";

struct ChainCase {
  std::string name;
  std::string binary;
  std::vector<std::string> runtimes;  // the wrapper's [runtime] runtimes
  std::map<std::string, std::string> files = {};
  std::map<std::string, std::string> links = {};
  std::set<std::string> exes = {};  // beyond runc, crun, the wrapper and NVIDIA's
  std::string text = "";            // Chain::Text()
  ChainEnd end = ChainEnd::kRuntime;
  bool wrapper = true;
  bool nvidia = false;
  std::string problem = "";  // a part of it
  size_t notes = 0;
};

class ChainTable : public ::testing::TestWithParam<ChainCase> {};

TEST_P(ChainTable, Resolves) {
  const auto& c = GetParam();
  testing::FakeFiles fs;
  fs.executables = {"/usr/sbin/runc", "/usr/bin/crun", kWrapper, kNvidia, kToolkit};
  fs.executables.insert(c.exes.begin(), c.exes.end());
  fs.files = c.files;
  fs.links = c.links;
  WrapperSettings w;
  w.runtimes = c.runtimes;
  w.source = "/etc/oci-rlimit/config.d/50-installer.toml";
  Chain got = ResolveChain(fs, {c.binary, "BinaryName", kPath}, w);
  EXPECT_EQ(got.Text(), c.text);
  EXPECT_EQ(got.end, c.end) << got.problem;
  EXPECT_EQ(got.wrapper, c.wrapper);
  EXPECT_EQ(got.nvidia, c.nvidia);
  if (c.problem.empty()) {
    EXPECT_EQ(got.problem, "");
  } else {
    EXPECT_NE(got.problem.find(c.problem), std::string::npos) << got.problem;
  }
  EXPECT_EQ(got.notes.size(), c.notes);
}

INSTANTIATE_TEST_SUITE_P(
    Chains, ChainTable,
    ::testing::Values(
        ChainCase{.name = "WrapperThenRunc",
                  .binary = kWrapper,
                  .runtimes = {"runc", "crun"},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/sbin/runc"},
        ChainCase{.name = "PlainRunc",
                  .binary = "runc",
                  .runtimes = {"runc"},
                  .text = "/usr/sbin/runc",
                  .wrapper = false},
        ChainCase{.name = "WrapperNvidiaRunc",
                  .binary = kWrapper,
                  .runtimes = {kNvidia},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/nvidia-container-runtime -> "
                          "/usr/sbin/runc",
                  .nvidia = true},
        ChainCase{.name = "OperatorToolkitReadsItsOwnConfig",
                  .binary = kWrapper,
                  .runtimes = {kToolkit},
                  .files = {{kOperatorConfig,
                             "[nvidia-container-runtime]\nruntimes = ['crun', 'runc']\n"}},
                  .text = "/usr/bin/oci-rlimit-runtime -> "
                          "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/bin/crun",
                  .nvidia = true},
        ChainCase{.name = "NvidiaRuntimesPointBackAtTheWrapper",
                  .binary = kWrapper,
                  .runtimes = {kNvidia},
                  .files = {{"/etc/nvidia-container-runtime/config.toml",
                             "[nvidia-container-runtime]\nruntimes = ['oci-rlimit-runtime']\n"}},
                  .exes = {"/usr/bin/oci-rlimit-runtime"},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/nvidia-container-runtime -> "
                          "/usr/bin/oci-rlimit-runtime",
                  .end = ChainEnd::kLoop,
                  .nvidia = true,
                  .problem = "loop: oci-rlimit-runtime comes back"},
        // NVIDIA's runtime naming another NVIDIA runtime (the toolkit's copy):
        // a loop of the same kind, even though the two are different files.
        ChainCase{.name = "NvidiaRuntimeNamesAnotherNvidiaRuntime",
                  .binary = kWrapper,
                  .runtimes = {kNvidia},
                  .files = {{"/etc/nvidia-container-runtime/config.toml",
                             std::string("[nvidia-container-runtime]\nruntimes = ['") + kToolkit +
                                 "']\n"},
                            {kOperatorConfig, "[nvidia-container-runtime]\nruntimes = ['runc']\n"}},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/nvidia-container-runtime -> "
                          "/usr/local/nvidia/toolkit/nvidia-container-runtime",
                  .end = ChainEnd::kLoop,
                  .nvidia = true,
                  .problem = "loop"},
        // runc on PATH is the wrapper (runtime mode): NVIDIA's "runc" is the wrapper again.
        ChainCase{.name = "NvidiaFindsAShadowedRunc",
                  .binary = kWrapper,
                  .runtimes = {kNvidia},
                  .links = {{"/usr/local/sbin/runc", kWrapper}},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/nvidia-container-runtime -> "
                          "/usr/local/sbin/runc",
                  .end = ChainEnd::kLoop,
                  .nvidia = true,
                  .problem = "loop"},
        ChainCase{.name = "WrapperSkipsAShadowedRunc",
                  .binary = kWrapper,
                  .runtimes = {"runc", "crun"},
                  .links = {{"/usr/local/sbin/runc", kWrapper}},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/crun",
                  .notes = 1},
        ChainCase{.name = "EverythingShadowedIsMissing",
                  .binary = kWrapper,
                  .runtimes = {"runc"},
                  .links = {{"/usr/local/sbin/runc", kWrapper}},
                  .text = "/usr/bin/oci-rlimit-runtime",
                  .end = ChainEnd::kMissing,
                  .problem = "[runtime] runtimes [\"runc\"] in "
                             "/etc/oci-rlimit/config.d/50-installer.toml: none resolves",
                  .notes = 1},
        ChainCase{.name = "BareNvidiaNameOnAnOperatorNode",
                  .binary = kWrapper,
                  .runtimes = {"nvidia-container-runtime-missing"},
                  .text = "/usr/bin/oci-rlimit-runtime",
                  .end = ChainEnd::kMissing,
                  .problem = "none resolves on the PATH"},
        ChainCase{.name = "MissingBinaryName",
                  .binary = "/opt/gone/oci-rlimit-runtime",
                  .runtimes = {"runc"},
                  .text = "",
                  .end = ChainEnd::kMissing,
                  .wrapper = false,
                  .problem = "BinaryName \"/opt/gone/oci-rlimit-runtime\" does not exist"},
        ChainCase{.name = "UnknownProgramIsNotProved",
                  .binary = kWrapper,
                  .runtimes = {"/usr/bin/kata"},
                  .exes = {"/usr/bin/kata"},
                  .text = "/usr/bin/oci-rlimit-runtime -> /usr/bin/kata",
                  .end = ChainEnd::kUnknown,
                  .problem = "doctor cannot follow it"},
        ChainCase{.name = "NvidiaWithNothingBelow",
                  .binary = kNvidia,
                  .runtimes = {},
                  .files = {{"/etc/nvidia-container-runtime/config.toml",
                             "[nvidia-container-runtime]\nruntimes = ['docker-runc']\n"}},
                  .text = "/usr/bin/nvidia-container-runtime",
                  .end = ChainEnd::kMissing,
                  .wrapper = false,
                  .nvidia = true,
                  .problem = "NVIDIA's runtimes [\"docker-runc\"] in "
                             "/etc/nvidia-container-runtime/config.toml: none resolves"},
        ChainCase{.name = "NvidiaConfigBroken",
                  .binary = kNvidia,
                  .runtimes = {},
                  .files = {{"/etc/nvidia-container-runtime/config.toml", "[x\n"}},
                  .text = "/usr/bin/nvidia-container-runtime",
                  .end = ChainEnd::kUnknown,
                  .wrapper = false,
                  .nvidia = true,
                  .problem = "/etc/nvidia-container-runtime/config.toml: line 1"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
