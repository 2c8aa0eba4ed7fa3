#include "formats/rlimit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>

#include "tests/testing/case_name.h"

namespace ocirlimit {
// RlimitInfo is the library's own type, so its PrintTo sits in ocirlimit.
void PrintTo(const RlimitInfo& info, std::ostream* os) { *os << info.name; }
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

struct GoodCase {
  const char* entry;
  int resource;
  uint64_t soft;
  uint64_t hard;
};
void PrintTo(const GoodCase& c, std::ostream* os) { *os << '"' << c.entry << '"'; }

class ParseRlimitGood : public ::testing::TestWithParam<GoodCase> {};

TEST_P(ParseRlimitGood, Parses) {
  const GoodCase& c = GetParam();
  auto r = ParseRlimit(c.entry);
  ASSERT_TRUE(r.ok()) << c.entry << ": " << r.error().Text();
  EXPECT_EQ(r->resource, c.resource) << c.entry;
  EXPECT_EQ(r->soft, c.soft) << c.entry;
  EXPECT_EQ(r->hard, c.hard) << c.entry;
}

INSTANTIATE_TEST_SUITE_P(
    Language, ParseRlimitGood,
    ::testing::Values(GoodCase{"memlock=unlimited", RLIMIT_MEMLOCK, kInf, kInf},
                      GoodCase{"memlock=infinity", RLIMIT_MEMLOCK, kInf, kInf},
                      GoodCase{"memlock=-1", RLIMIT_MEMLOCK, kInf, kInf},
                      GoodCase{"MEMLOCK=UNLIMITED", RLIMIT_MEMLOCK, kInf, kInf},
                      GoodCase{"RLIMIT_MEMLOCK=1024", RLIMIT_MEMLOCK, 1024, 1024},
                      GoodCase{"rlimit_memlock=1024:2048", RLIMIT_MEMLOCK, 1024, 2048},
                      GoodCase{"memlock=1073741824:unlimited", RLIMIT_MEMLOCK, 1073741824, kInf},
                      GoodCase{"memlock=8M", RLIMIT_MEMLOCK, 8ULL << 20, 8ULL << 20},
                      GoodCase{"memlock=1k:1K", RLIMIT_MEMLOCK, 1024, 1024},
                      GoodCase{"memlock=64G", RLIMIT_MEMLOCK, 64ULL << 30, 64ULL << 30},
                      GoodCase{"stack=1T", RLIMIT_STACK, 1ULL << 40, 1ULL << 40},
                      GoodCase{" nofile = 65536 : 65536 ", RLIMIT_NOFILE, 65536, 65536},
                      GoodCase{"nofile=0", RLIMIT_NOFILE, 0, 0},
                      GoodCase{"core=18446744073709551615", RLIMIT_CORE, kInf, kInf},
                      GoodCase{"as=1G", RLIMIT_AS, 1ULL << 30, 1ULL << 30},
                      GoodCase{"cpu=10:20", RLIMIT_CPU, 10, 20},
                      GoodCase{"data=1M", RLIMIT_DATA, 1ULL << 20, 1ULL << 20},
                      GoodCase{"fsize=2G", RLIMIT_FSIZE, 2ULL << 30, 2ULL << 30},
                      GoodCase{"locks=5", RLIMIT_LOCKS, 5, 5},
                      GoodCase{"msgqueue=1M", RLIMIT_MSGQUEUE, 1ULL << 20, 1ULL << 20},
                      GoodCase{"nice=10", RLIMIT_NICE, 10, 10},
                      GoodCase{"nproc=4096:unlimited", RLIMIT_NPROC, 4096, kInf},
                      GoodCase{"rss=3M", RLIMIT_RSS, 3ULL << 20, 3ULL << 20},
                      GoodCase{"rtprio=99", RLIMIT_RTPRIO, 99, 99},
                      GoodCase{"rttime=1000000", RLIMIT_RTTIME, 1000000, 1000000},
                      GoodCase{"sigpending=100", RLIMIT_SIGPENDING, 100, 100}));

struct BadCase {
  const char* entry;
  const char* message_part;  // the error must name this
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << '"' << c.entry << '"'; }

class ParseRlimitBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseRlimitBad, NamesTheProblem) {
  const BadCase& c = GetParam();
  auto r = ParseRlimit(c.entry);
  ASSERT_FALSE(r.ok()) << c.entry;
  EXPECT_NE(r.error().Text().find(c.message_part), std::string::npos) << r.error().Text();
  EXPECT_EQ(r.error().Text().find('\n'), std::string::npos) << "one line";
}

INSTANTIATE_TEST_SUITE_P(
    Language, ParseRlimitBad,
    ::testing::Values(
        BadCase{"memlok=1", "unknown name \"memlok\""},
        BadCase{"memlock", "expected NAME=SOFT[:HARD]"}, BadCase{"memlock=", "value is empty"},
        BadCase{"memlock=:5", "soft value is empty"}, BadCase{"memlock=5:", "hard value is empty"},
        BadCase{"memlock=2048:1024", "soft 2048 is greater than hard 1024"},
        BadCase{"memlock=unlimited:1024", "soft unlimited is greater than hard 1024"},
        BadCase{"memlock=18446744073709551616", "overflows"},
        BadCase{"memlock=17179869184G", "overflows"}, BadCase{"nofile=1K", "not measured in bytes"},
        BadCase{"memlock=12X", "not a decimal integer"},
        BadCase{"memlock=-2", "not a decimal integer"},
        BadCase{"memlock=+5", "not a decimal integer"},
        BadCase{"memlock=1.5M", "not a decimal integer"},
        BadCase{"memlock=M", "not a decimal integer"}, BadCase{"=5", "unknown name \"\""}));

TEST(ParseRlimitList, RejectsTheSameNameTwice) {
  auto r = ParseRlimitList({"memlock=1", "nofile=5", "RLIMIT_MEMLOCK=2"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().Text(), "rlimit \"RLIMIT_MEMLOCK=2\": memlock is given twice");
}

TEST(ParseRlimitCsv, SplitsAndSkipsEmptyItems) {
  auto r = ParseRlimitCsv(" memlock=unlimited, ,nofile=65536,");
  ASSERT_TRUE(r.ok()) << r.error().Text();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (Rlimit{RLIMIT_MEMLOCK, kInf, kInf}));
  EXPECT_EQ((*r)[1], (Rlimit{RLIMIT_NOFILE, 65536, 65536}));
}

TEST(OverrideRlimits, ReplacesInPlaceAndAppends) {
  std::vector<Rlimit> base = {{RLIMIT_NOFILE, 1, 1}, {RLIMIT_MEMLOCK, 2, 2}};
  auto out = OverrideRlimits(base, {{RLIMIT_MEMLOCK, 9, 9}, {RLIMIT_CORE, 0, 0}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], (Rlimit{RLIMIT_NOFILE, 1, 1}));
  EXPECT_EQ(out[1], (Rlimit{RLIMIT_MEMLOCK, 9, 9}));
  EXPECT_EQ(out[2], (Rlimit{RLIMIT_CORE, 0, 0}));
}

TEST(AllRlimits, HasAllSixteenWithUniqueResources) {
  ASSERT_EQ(AllRlimits().size(), 16u);
  for (const auto& info : AllRlimits()) {
    EXPECT_EQ(FindRlimitByResource(info.resource), &info);
    EXPECT_EQ(FindRlimit(info.spec_type), &info);
  }
}

struct NameCase {
  const char* name;
  int resource;  // -1: not an rlimit
};
// Some names are empty or have spaces: printed quoted (the template prints bare).
void PrintTo(const NameCase& c, std::ostream* os) { *os << '"' << c.name << '"'; }

class FindRlimitTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(FindRlimitTest, AcceptsCaseAndPrefixVariants) {
  const NameCase& c = GetParam();
  const RlimitInfo* info = FindRlimit(c.name);
  if (c.resource < 0) {
    EXPECT_EQ(info, nullptr) << c.name;
  } else {
    ASSERT_NE(info, nullptr) << c.name;
    EXPECT_EQ(info->resource, c.resource) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Language, FindRlimitTest,
    ::testing::Values(NameCase{"memlock", RLIMIT_MEMLOCK}, NameCase{"MemLock", RLIMIT_MEMLOCK},
                      NameCase{"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
                      NameCase{"Rlimit_Nofile", RLIMIT_NOFILE}, NameCase{"as", RLIMIT_AS},
                      NameCase{"RLIMIT_", -1}, NameCase{"", -1}, NameCase{"mem lock", -1},
                      NameCase{"RLIMIT_RLIMIT_CORE", -1}, NameCase{"nofiles", -1}));

// Every limit that is not a byte count refuses a size suffix; every byte
// count takes one.
class SuffixPerLimit : public ::testing::TestWithParam<RlimitInfo> {};

TEST_P(SuffixPerLimit, OnlyByteLimitsTakeSuffixes) {
  const RlimitInfo& info = GetParam();
  auto r = ParseRlimit(std::string(info.name) + "=2K");
  if (info.bytes) {
    ASSERT_TRUE(r.ok()) << info.name << ": " << r.error().Text();
    EXPECT_EQ(r->soft, 2048u);
  } else {
    ASSERT_FALSE(r.ok()) << info.name;
    EXPECT_NE(r.error().Text().find("not measured in bytes"), std::string::npos)
        << r.error().Text();
  }
}

INSTANTIATE_TEST_SUITE_P(All, SuffixPerLimit, ::testing::ValuesIn(AllRlimits()),
                         [](const ::testing::TestParamInfo<RlimitInfo>& info) {
                           return std::string(info.param.name);
                         });

TEST(AllRlimits, ByteLimitsAreExactlyTheIssuesList) {
  std::vector<std::string> bytes;
  for (const auto& info : AllRlimits()) {
    if (info.bytes) bytes.emplace_back(info.name);
  }
  std::sort(bytes.begin(), bytes.end());
  EXPECT_EQ(bytes, (std::vector<std::string>{"as", "core", "data", "fsize", "memlock", "msgqueue",
                                             "rss", "stack"}));
}

TEST(ParseRlimitCsv, ReportsTheBadItem) {
  auto r = ParseRlimitCsv("memlock=1,nofile=x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("rlimit \"nofile=x\""), std::string::npos) << r.error().Text();
  r = ParseRlimitCsv("memlock=1, memlock=2");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("given twice"), std::string::npos) << r.error().Text();
}

TEST(FormatRlimit, UsesTheShortNameAndUnlimited) {
  EXPECT_EQ(FormatRlimit({RLIMIT_MEMLOCK, 8 << 20, kInf}), "memlock=8388608:unlimited");
  EXPECT_EQ(FormatRlimit({RLIMIT_NOFILE, 0, 0}), "nofile=0:0");
  EXPECT_EQ(FormatLimitValue(kInf - 1), "18446744073709551614");
  // What FormatRlimit writes, ParseRlimit reads back.
  for (const auto& info : AllRlimits()) {
    Rlimit r{info.resource, 7, kInf};
    auto back = ParseRlimit(FormatRlimit(r));
    ASSERT_TRUE(back.ok()) << back.error().Text();
    EXPECT_EQ(*back, r);
  }
}

}  // namespace
}  // namespace ocirlimit
