#include "formats/key_value.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ocirlimit {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Result<Pairs> Read(std::string_view text) {
  Pairs out;
  auto read = ForEachKeyValue(text, [&out](std::string_view k, std::string_view v) -> Status {
    if (k == "stop") return MakeError("stopped at " + std::string(v));
    out.emplace_back(k, v);
    return Ok{};
  });
  if (!read) return read.error();
  return out;
}

TEST(ForEachKeyValue, ReadsEachLineInOrderSkippingBlanksAndComments) {
  auto r = Read("# a comment\na=1\n\nb=x=y\nc=\n");
  ASSERT_TRUE(r) << r.error().Text();
  EXPECT_EQ(*r, (Pairs{{"a", "1"}, {"b", "x=y"}, {"c", ""}}));
  auto last = Read("a=1\nb=2");  // no newline at the end
  ASSERT_TRUE(last) << last.error().Text();
  EXPECT_EQ(last->size(), 2u);
}

TEST(ForEachKeyValue, ALineWithoutEqualsIsNamed) {
  auto r = Read("a=1\nnonsense\nb=2\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().Text(), "line \"nonsense\": no '='");
}

TEST(ForEachKeyValue, TheCallersErrorStopsIt) {
  auto r = Read("a=1\nstop=here\nb=2\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().Text(), "stopped at here");
}

}  // namespace
}  // namespace ocirlimit
