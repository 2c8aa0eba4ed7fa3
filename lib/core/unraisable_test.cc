#include "core/unraisable.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = 1 << 20;

Rlimit Memlock(uint64_t soft, uint64_t hard) { return {RLIMIT_MEMLOCK, soft, hard}; }

TEST(FindUnraisable, OnlyAHardRaiseOfAKnownType) {
  const std::vector<Rlimit> in_force = {Memlock(8 * kM, 8 * kM), {RLIMIT_NOFILE, 1024, 4096}};
  EXPECT_FALSE(FindUnraisable({Memlock(8 * kM, 8 * kM)}, in_force)) << "equal is not a raise";
  EXPECT_FALSE(FindUnraisable({Memlock(kM, 4 * kM)}, in_force)) << "lowering";
  EXPECT_FALSE(FindUnraisable({{RLIMIT_CORE, 0, kRlimInfinity}}, in_force)) << "type not read";
  auto u =
      FindUnraisable({{RLIMIT_NOFILE, 100, 200}, Memlock(kRlimInfinity, kRlimInfinity)}, in_force);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->want.resource, RLIMIT_MEMLOCK);
  EXPECT_EQ(u->in_force, 8 * kM);
}

struct MessageCase {
  std::string name;
  Rlimit want;
  uint64_t in_force;
  bool rootless;
  std::string message;
};

class UnraisableMessageTable : public ::testing::TestWithParam<MessageCase> {};

TEST_P(UnraisableMessageTable, NamesTheEntryTheHardLimitTheCapabilityAndWhatWorks) {
  const MessageCase& c = GetParam();
  EXPECT_EQ(UnraisableMessage({c.want, c.in_force}, "oci-rlimit-hook", c.rootless), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Unraisable, UnraisableMessageTable,
    ::testing::Values(
        MessageCase{"Unlimited", Memlock(kRlimInfinity, kRlimInfinity), 8 * kM, false,
                    "config entry memlock=unlimited: the hard limit in force is 8M, and raising "
                    "it needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have; memlock=8M "
                    "would work (or run the container engine with CAP_SYS_RESOURCE)"},
        MessageCase{"SoftBelowInForce", Memlock(4 * kM, 16 * kM), 8 * kM, false,
                    "config entry memlock=4M:16M: the hard limit in force is 8M, and raising it "
                    "needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have; "
                    "memlock=4M:8M would work (or run the container engine with "
                    "CAP_SYS_RESOURCE)"},
        MessageCase{"NotBytes",
                    {RLIMIT_NOFILE, 65536, 65536},
                    20000,
                    false,
                    "config entry nofile=65536: the hard limit in force is 20000, and raising it "
                    "needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have; nofile=20000 "
                    "would work (or run the container engine with CAP_SYS_RESOURCE)"},
        MessageCase{"OddBytes", Memlock(kRlimInfinity, kRlimInfinity), 8 * kM + 1, false,
                    "config entry memlock=unlimited: the hard limit in force is 8388609, and "
                    "raising it needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have; "
                    "memlock=8388609 would work (or run the container engine with "
                    "CAP_SYS_RESOURCE)"},
        MessageCase{"Rootless", Memlock(kRlimInfinity, kRlimInfinity), 64 * 1024, true,
                    "config entry memlock=unlimited: the hard limit in force is 64K, and raising "
                    "it needs CAP_SYS_RESOURCE, which oci-rlimit-hook does not have (a rootless "
                    "engine never has it); memlock=64K would work"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
