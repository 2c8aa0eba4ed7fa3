#include "core/policy_digest.h"

#include <gtest/gtest.h>

#include <string>

#include "core/config.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr const char* kBase = R"(rlimits = ["memlock=64M"]
on-error = "fail"
[requests]
enabled = true
ceilings = ["memlock=1G"]
[[rule]]
name = "gpu"
rlimits = ["memlock=unlimited"]
match = { cdi = ["nvidia.com/gpu=*"] }
)";

std::string DigestOf(const std::string& text, const std::string& path = "c.toml") {
  auto c = ParseConfig(text, path);
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? PolicyDigest(*c) : "";
}

TEST(PolicyDigestTest, IsHexOfSha256) {
  const std::string d = DigestOf(kBase);
  EXPECT_EQ(d.size(), 64u);
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos);
}

// What does not decide a limit leaves the digest alone: comments, spacing,
// key order, the file's path, the log file and the wrapper's plumbing.
TEST(PolicyDigestTest, SameForTheSamePolicyWrittenDifferently) {
  const std::string same = R"(# the fleet's policy
on-error="fail"
rlimits=[ "memlock=64M" ]   # every container
log-file = "/var/log/oci-rlimit.log"
[runtime]
runtimes = ["crun"]
[hook]
chain = "/usr/bin/nvidia-container-runtime-hook"
[requests]
ceilings = ["memlock=1G"]
enabled = true
[[rule]]
match = { cdi = ["nvidia.com/gpu=*"] }
rlimits = ["memlock=unlimited"]
name = "gpu"
)";
  EXPECT_EQ(DigestOf(kBase), DigestOf(same, "/host/etc/oci-rlimit/config.toml"));
}

struct ChangeCase {
  std::string name;
  std::string from;  // a line of kBase
  std::string to;
};

class PolicyDigestChangeTest : public ::testing::TestWithParam<ChangeCase> {};

// Every field that decides a limit changes the digest.
TEST_P(PolicyDigestChangeTest, ChangesTheDigest) {
  std::string text = kBase;
  const size_t at = text.find(GetParam().from);
  ASSERT_NE(at, std::string::npos) << GetParam().from;
  text.replace(at, GetParam().from.size(), GetParam().to);
  EXPECT_NE(DigestOf(kBase), DigestOf(text)) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PolicyDigestChangeTest,
    ::testing::Values(
        ChangeCase{"TopLevelRlimit", "memlock=64M\"]", "memlock=64M:128M\"]"},
        ChangeCase{"OnError", "on-error = \"fail\"", "on-error = \"warn\""},
        ChangeCase{"RequestsEnabled", "enabled = true", "enabled = false"},
        ChangeCase{"Ceiling", "memlock=1G", "memlock=2G"},
        ChangeCase{"OverCeiling", "enabled = true", "enabled = true\nover-ceiling = \"reject\""},
        ChangeCase{"Sources", "enabled = true",
                   "enabled = true\nsources = [\"oci-rlimit\", \"ulimit-adjuster\"]"},
        ChangeCase{"RuleName", "name = \"gpu\"", "name = \"gpus\""},
        ChangeCase{"RuleRlimit", "memlock=unlimited", "memlock=8G"},
        ChangeCase{"RuleMatchKind", "match = { cdi = [\"nvidia.com/gpu=*\"] }",
                   "match = { devices = [\"/dev/nvidia*\"] }"},
        ChangeCase{"RuleMatchPattern", "nvidia.com/gpu=*", "nvidia.com/gpu=0"},
        ChangeCase{"Rootless", "on-error = \"fail\"", "on-error = \"fail\"\nrootless = \"fail\""},
        ChangeCase{"CdiInjectors", "[requests]", "[cdi]\ninjectors = [\"nvidia-nri\"]\n[requests]"},
        ChangeCase{
            "ASecondRule", "gpu=*\"] }\n",
            "gpu=*\"] }\n[[rule]]\nrlimits = [\"nofile=1024\"]\nmatch = { always = true }\n"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
