#include "core/unprivileged.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <string>
#include <vector>

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;
constexpr uint64_t kM = uint64_t{1} << 20;

Rlimit Memlock(uint64_t soft, uint64_t hard) { return {RLIMIT_MEMLOCK, soft, hard}; }
Rlimit Nofile(uint64_t soft, uint64_t hard) { return {RLIMIT_NOFILE, soft, hard}; }

std::string Limits(const std::vector<Rlimit>& limits) {
  std::string out;
  for (const auto& r : limits) out += (out.empty() ? "" : ",") + FormatRlimit(r);
  return out;
}

// --- IsInitialUidMap ----------------------------------------------------------

struct UidMapCase {
  std::string name;
  std::string text;
  bool initial;
};

void PrintTo(const UidMapCase& c, std::ostream* os) { *os << c.name; }

class InitialUidMap : public ::testing::TestWithParam<UidMapCase> {};

TEST_P(InitialUidMap, OnlyTheIdentityMapOfEveryId) {
  EXPECT_EQ(IsInitialUidMap(GetParam().text), GetParam().initial) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Unprivileged, InitialUidMap,
    ::testing::Values(
        UidMapCase{"KernelFormat", "         0          0 4294967295\n", true},
        UidMapCase{"Compact", "0 0 4294967295", true},
        UidMapCase{"RootlessPodman",
                   "         0       1001          1\n         1     100000      65536\n", false},
        UidMapCase{"OneUser", "0 1000 1\n", false},
        UidMapCase{"IdentityButShort", "0 0 65536\n", false},
        UidMapCase{"ShiftedFull", "0 100000 4294967295\n", false},
        UidMapCase{"IdentityPlusARange", "0 0 4294967295\n1 1 1\n", false},
        UidMapCase{"Empty", "", false}, UidMapCase{"Garbage", "x y z\n", false}),
    [](const auto& info) { return info.param.name; });

// --- FitToUnprivilegedCaller --------------------------------------------------

struct FitCase {
  std::string name;
  std::vector<Rlimit> decided;
  std::vector<Rlimit> current;
  std::string fitted;   // Limits() of the result
  std::string warning;  // a substring; empty: no warning at all
};

void PrintTo(const FitCase& c, std::ostream* os) { *os << c.name; }

class FitsToCaller : public ::testing::TestWithParam<FitCase> {};

TEST_P(FitsToCaller, RaisesSoftUpToHardDropsHardRaisesKeepsLowering) {
  auto fit = FitToUnprivilegedCaller(GetParam().decided, GetParam().current, Rootless::kDegrade);
  ASSERT_TRUE(fit.ok()) << fit.error().Text();
  EXPECT_EQ(Limits(fit->limits), GetParam().fitted);
  if (GetParam().warning.empty()) {
    EXPECT_EQ(fit->warning, "");
  } else {
    EXPECT_NE(fit->warning.find(GetParam().warning), std::string::npos) << fit->warning;
    EXPECT_EQ(fit->warning.find('\n'), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Unprivileged, FitsToCaller,
    ::testing::Values(FitCase{"UnlimitedBecomesTheCallersHard",
                              {Memlock(kInf, kInf)},
                              {Memlock(1 * kM, 8 * kM)},
                              "memlock=8388608:8388608",
                              "memlock unlimited:unlimited -> 8388608:8388608"},
                      FitCase{"HardRaiseDroppedSoftKept",
                              {Memlock(2 * kM, 16 * kM)},
                              {Memlock(1 * kM, 8 * kM)},
                              "memlock=2097152:8388608",
                              "memlock 2097152:16777216 -> 2097152:8388608"},
                      FitCase{"SoftRaiseUpToHardUnchanged",
                              {Memlock(8 * kM, 8 * kM)},
                              {Memlock(1 * kM, 8 * kM)},
                              "memlock=8388608:8388608",
                              ""},
                      FitCase{"LoweringUnchanged",
                              {Memlock(1 * kM, 4 * kM)},
                              {Memlock(8 * kM, 8 * kM)},
                              "memlock=1048576:4194304",
                              ""},
                      FitCase{"CallerUnlimitedAllowsAnything",
                              {Memlock(kInf, kInf)},
                              {Memlock(kInf, kInf)},
                              "memlock=unlimited:unlimited",
                              ""},
                      FitCase{"OnlyTheOffendingTypeChanges",
                              {Memlock(kInf, kInf), Nofile(1024, 1024)},
                              {Nofile(20000, 20000), Memlock(8 * kM, 8 * kM)},
                              "memlock=8388608:8388608,nofile=1024:1024",
                              "memlock unlimited:unlimited"},
                      FitCase{
                          "BothTypesInOneLine",
                          {Memlock(kInf, kInf), Nofile(65536, 65536)},
                          {Memlock(8 * kM, 8 * kM), Nofile(20000, 20000)},
                          "memlock=8388608:8388608,nofile=20000:20000",
                          "memlock unlimited:unlimited -> 8388608:8388608, nofile 65536:65536 -> "
                          "20000:20000"},
                      FitCase{"TypeWithoutACurrentValuePasses",
                              {Memlock(kInf, kInf)},
                              {},
                              "memlock=unlimited:unlimited",
                              ""},
                      FitCase{"NothingDecided", {}, {Memlock(1, 1)}, "", ""}),
    [](const auto& info) { return info.param.name; });

TEST(Unprivileged, FailModeRefusesAHardRaiseNamingTheLimitAndTheCeiling) {
  auto fit =
      FitToUnprivilegedCaller({Memlock(kInf, kInf)}, {Memlock(1 * kM, 8 * kM)}, Rootless::kFail);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.error().Text(),
            "memlock unlimited:unlimited: not in the initial user namespace (a rootless engine), "
            "so the hard limit cannot be raised above 8388608 (rootless = \"fail\")");
}

TEST(Unprivileged, FailModeStillAllowsWhatTheCallerCanSet) {
  auto fit = FitToUnprivilegedCaller({Memlock(8 * kM, 8 * kM)}, {Memlock(1 * kM, 8 * kM)},
                                     Rootless::kFail);
  ASSERT_TRUE(fit.ok()) << fit.error().Text();
  EXPECT_EQ(Limits(fit->limits), "memlock=8388608:8388608");
  EXPECT_EQ(fit->warning, "");
}

// --- An unreadable config ------------------------------------------------------

struct UnreadableCase {
  std::string name;
  int err;
  bool unprivileged;
  bool none;
};

void PrintTo(const UnreadableCase& c, std::ostream* os) { *os << c.name; }

class UnreadableConfig : public ::testing::TestWithParam<UnreadableCase> {};

TEST_P(UnreadableConfig, IsNoConfigOnlyForEaccesOutsideTheInitialNamespace) {
  Error e = MakeError("config: open \"/etc/oci-rlimit/config.toml\"", GetParam().err);
  EXPECT_EQ(UnreadableConfigIsNone(e, GetParam().unprivileged), GetParam().none);
}

INSTANTIATE_TEST_SUITE_P(Unprivileged, UnreadableConfig,
                         ::testing::Values(UnreadableCase{"RootlessEacces", EACCES, true, true},
                                           UnreadableCase{"RootfulEacces", EACCES, false, false},
                                           UnreadableCase{"RootlessEio", EIO, true, false},
                                           UnreadableCase{"RootlessParseError", 0, true, false}),
                         [](const auto& info) { return info.param.name; });

TEST(Unprivileged, UnreadableConfigWarningNamesTheFileAndTheReason) {
  EXPECT_EQ(UnreadableConfigWarning(MakeError("config: open \"/etc/x.toml\"", EACCES)),
            "rootless (not the initial user namespace): config: open \"/etc/x.toml\": Permission "
            "denied; running without that config (no limits from it)");
}

TEST(Unprivileged, ConfigKeyDefaultsToDegradeAndParsesBothValues) {
  auto none = ParseConfig("", "t.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->rootless, Rootless::kDegrade);
  auto fail = ParseConfig("rootless = \"fail\"\n", "t.toml");
  ASSERT_TRUE(fail.ok()) << fail.error().Text();
  EXPECT_EQ(fail->rootless, Rootless::kFail);
  auto bad = ParseConfig("rootless = \"ignore\"\n", "t.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().Text(),
            "config \"t.toml\": rootless: \"ignore\" is not \"degrade\" or \"fail\"");
}

}  // namespace
}  // namespace ocirlimit
