#include "formats/decision.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

DecisionRecord Sample() {
  return {.id = "c1",
          .by = std::string(kDecidedByNri),
          .policy = std::string(64, 'a'),
          .time = "2026-12-07T17:00:00Z",
          .limits = {{RLIMIT_MEMLOCK, 6291456, 8388608}, {RLIMIT_NOFILE, 1024, kRlimInfinity}}};
}

TEST(DecisionRecordText, RoundTrips) {
  const DecisionRecord d = Sample();
  const std::string text = FormatDecision(d);
  EXPECT_NE(text.find("limits=memlock=6291456:8388608 nofile=1024:unlimited\n"), std::string::npos)
      << text;
  auto back = ParseDecision(text);
  ASSERT_TRUE(back) << back.error().Text();
  EXPECT_EQ(back->id, "c1");
  EXPECT_EQ(back->by, "nri");
  EXPECT_EQ(back->policy, d.policy);
  EXPECT_EQ(back->time, d.time);
  EXPECT_EQ(back->limits, d.limits);
}

TEST(DecisionRecordText, NothingDecidedIsSaidAndReadBack) {
  DecisionRecord d = Sample();
  d.limits.clear();
  const std::string text = FormatDecision(d);
  EXPECT_NE(text.find("limits=nothing\n"), std::string::npos) << text;
  auto back = ParseDecision(text);
  ASSERT_TRUE(back) << back.error().Text();
  EXPECT_TRUE(back->limits.empty());
}

TEST(DecisionRecordText, AnIdWithANewlineStaysOneLine) {
  DecisionRecord d = Sample();
  d.id = "c1\nlimits=memlock=unlimited";
  auto back = ParseDecision(FormatDecision(d));
  ASSERT_TRUE(back) << back.error().Text();
  EXPECT_EQ(back->limits, Sample().limits);
  EXPECT_NE(back->id, d.id);
}

TEST(DecisionRecordText, UnknownKeysAreSkipped) {
  auto back = ParseDecision(FormatDecision(Sample()) + "future=1\n");
  ASSERT_TRUE(back) << back.error().Text();
}

struct BadCase {
  std::string name;
  std::string text;
  std::string says;
};

class BadDecision : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadDecision, IsAnErrorNamingWhy) {
  auto r = ParseDecision(GetParam().text);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().Text().find(GetParam().says), std::string::npos) << r.error().Text();
}

const std::string kOk = "version=1\nid=c\nby=nri\npolicy=p\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadDecision,
    ::testing::Values(
        BadCase{"no_version", "id=c\nby=nri\npolicy=p\nlimits=nothing\n", "no version"},
        BadCase{"version_2", "version=2\nid=c\nby=nri\npolicy=p\nlimits=nothing\n", "not 1"},
        BadCase{"no_limits", kOk, "missing limits"},
        BadCase{"no_policy", "version=1\nid=c\nby=nri\nlimits=nothing\n", "missing policy"},
        BadCase{"no_equals", kOk + "limits\n", "no '='"},
        BadCase{"empty_limits", kOk + "limits=\n", "empty"},
        BadCase{"bad_limit", kOk + "limits=memlock=lots\n", "limits"},
        BadCase{"type_twice", kOk + "limits=memlock=1:2 memlock=3:4\n", "limits"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
