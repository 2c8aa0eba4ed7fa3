#include "hook/chain.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

struct ResolveCase {
  std::string name;
  std::string configured;
  std::string argv0;
  std::optional<std::string> want_path;
};

class ResolveChainTest : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveChainTest, PicksTheTarget) {
  const auto& c = GetParam();
  auto got = ResolveChain(c.configured, c.argv0);
  ASSERT_EQ(got.has_value(), c.want_path.has_value());
  if (got) {
    EXPECT_EQ(got->path, *c.want_path);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ResolveChainTest,
    ::testing::Values(ResolveCase{"NothingConfigured", "", "oci-rlimit-hook", std::nullopt},
                      ResolveCase{"ConfiguredWins", "/opt/x/hook", "nvidia-container-runtime-hook",
                                  "/opt/x/hook"},
                      ResolveCase{"ConfiguredUnderOurName", "/opt/x/hook",
                                  "/usr/bin/oci-rlimit-hook", "/opt/x/hook"},
                      ResolveCase{"ShimNameDefaults", "", "nvidia-container-runtime-hook",
                                  "/usr/bin/nvidia-container-runtime-hook"},
                      ResolveCase{"ShimPathDefaults", "",
                                  "/usr/lib/oci-rlimit/shim/nvidia-container-runtime-hook",
                                  "/usr/bin/nvidia-container-runtime-hook"},
                      ResolveCase{"SimilarNameIsNotTheShim", "",
                                  "nvidia-container-runtime-hook.real", std::nullopt},
                      ResolveCase{"EmptyArgv0", "", "", std::nullopt}),
    [](const auto& info) { return info.param.name; });

constexpr mode_t kExecutable = S_IFREG | 0755;

struct CheckCase {
  std::string name;
  Result<FileId> target;
  FileId self;
  std::string want_error;  // empty: accepted
};

class CheckChainTargetTest : public ::testing::TestWithParam<CheckCase> {};

TEST_P(CheckChainTargetTest, Decides) {
  const auto& c = GetParam();
  Status st = CheckChainTarget({"/usr/bin/nv", "hook.chain"}, c.target, c.self);
  if (c.want_error.empty()) {
    EXPECT_TRUE(st.ok()) << st.error().Text();
  } else {
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().Text(), c.want_error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckChainTargetTest,
    ::testing::Values(
        CheckCase{"OtherFile", FileId{1, 10, kExecutable}, FileId{1, 11, kExecutable}, ""},
        CheckCase{"SameInodeOtherDevice", FileId{2, 10, kExecutable}, FileId{1, 10, kExecutable},
                  ""},
        CheckCase{"ItselfThroughAnySymlink", FileId{1, 10, kExecutable}, FileId{1, 10, kExecutable},
                  "hook.chain: \"/usr/bin/nv\" is oci-rlimit-hook itself (same file as "
                  "/proc/self/exe); point it at the real nvidia-container-runtime-hook or "
                  "another hook"},
        CheckCase{"Missing", MakeError("stat", ENOENT), FileId{1, 10, kExecutable},
                  "hook.chain: \"/usr/bin/nv\": No such file or directory"},
        CheckCase{"Directory", FileId{1, 10, S_IFDIR | 0755}, FileId{1, 11, kExecutable},
                  "hook.chain: \"/usr/bin/nv\" is not a regular file"},
        CheckCase{"NotExecutable", FileId{1, 10, S_IFREG | 0644}, FileId{1, 11, kExecutable},
                  "hook.chain: \"/usr/bin/nv\" is not executable"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit
