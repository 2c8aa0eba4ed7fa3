#include "formats/nri_status.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

TEST(NriStatus, FormatThenParseGivesItBack) {
  NriStatus s{"2026-12-01T22:00:00Z", "2026-12-01T22:00:01Z", 7, 6, 1, 9, true, 2};
  auto back = ParseNriStatus(FormatNriStatus(s));
  ASSERT_TRUE(back) << back.error().Text();
  EXPECT_EQ(back->connected, s.connected);
  EXPECT_EQ(back->synchronized, s.synchronized);
  EXPECT_EQ(back->containers, 7u);
  EXPECT_EQ(back->healed, 6u);
  EXPECT_EQ(back->unhealed, 1u);
  EXPECT_EQ(back->healed_total, 9u);
  EXPECT_TRUE(back->report_only);
  EXPECT_EQ(back->refused, 2u);
}

struct ParseCase {
  std::string name;
  std::string text;
  std::string error;  // part of the error, "" when it parses
  uint64_t healed = 0;
};

class ParseTable : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseTable, ParsesOrNamesTheLine) {
  auto s = ParseNriStatus(GetParam().text);
  if (GetParam().error.empty()) {
    ASSERT_TRUE(s) << s.error().Text();
    EXPECT_EQ(s->healed, GetParam().healed);
  } else {
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().Text().find(GetParam().error), std::string::npos) << s.error().Text();
  }
}

INSTANTIATE_TEST_SUITE_P(
    NriStatus, ParseTable,
    ::testing::Values(ParseCase{"Empty", "", "", 0},
                      ParseCase{"CommentsAndUnknownKeysSkipped", "# x\nnewer=1\nhealed=3\n", "", 3},
                      ParseCase{"NoTrailingNewline", "healed=4", "", 4},
                      ParseCase{"BadNumber", "healed=lots\n", "healed = \"lots\": not a count"},
                      ParseCase{"NegativeNumber", "healed=-1\n", "not a count"},
                      ParseCase{"NoEquals", "healed 3\n", "line \"healed 3\": no '='"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

TEST(NriStatusWriter, RoundTripsItsWriter) {
  NriStatus s;
  s.writer_pid = 4711;
  s.writer_start = 123456;
  auto back = ParseNriStatus(FormatNriStatus(s));
  ASSERT_TRUE(back) << back.error().Text();
  EXPECT_EQ(back->writer_pid, 4711u);
  EXPECT_EQ(back->writer_start, 123456u);
  EXPECT_NE(FormatNriStatus(s).find("\nwriter-pid=4711\nwriter-start=123456\n"), std::string::npos);
}

}  // namespace
}  // namespace ocirlimit
