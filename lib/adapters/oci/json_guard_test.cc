#include "adapters/oci/json_guard.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace ocirlimit {
namespace {

struct DepthCase {
  const char* name;
  std::string text;
  size_t max_depth;
  std::string error;  // empty: accepted
};

void PrintTo(const DepthCase& c, std::ostream* os) { *os << c.name; }

std::string Nested(size_t n, char open, char close) {
  return std::string(n, open) + std::string(n, close);
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

class JsonDepth : public ::testing::TestWithParam<DepthCase> {};

TEST_P(JsonDepth, CountsOnlyStructure) {
  const DepthCase& c = GetParam();
  Status st = CheckJsonDepth(c.text, "spec", c.max_depth);
  if (c.error.empty()) {
    EXPECT_TRUE(st.ok()) << st.error().Text();
  } else {
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().Text(), c.error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonDepth,
    ::testing::Values(DepthCase{"Empty", "", 2, ""},
                      DepthCase{"Flat", R"({"a":1,"b":[1,2]})", 2, ""},
                      DepthCase{"AtTheLimit", Nested(64, '[', ']'), 64, ""},
                      DepthCase{"OnePastTheLimit", Nested(65, '[', ']'), 64,
                                "spec: nested deeper than 64 levels (at byte 64)"},
                      DepthCase{"ObjectsCount", R"({"a":{"b":{"c":1}}})", 2,
                                "spec: nested deeper than 2 levels (at byte 10)"},
                      DepthCase{"MixedCount", R"([{"a":[1]}])", 2,
                                "spec: nested deeper than 2 levels (at byte 6)"},
                      DepthCase{"BracketsInStringsDoNot", R"({"a":"[[[[{{{{"})", 1, ""},
                      DepthCase{"EscapedQuoteKeepsTheString", R"({"a":"\"[[[["})", 1, ""},
                      DepthCase{"EscapedBackslashEndsIt", R"({"a":"\\","b":[[1]]})", 2,
                                "spec: nested deeper than 2 levels (at byte 15)"},
                      DepthCase{"WideIsFine", "[" + std::string(100000, '1') + "]", 1, ""},
                      DepthCase{"SiblingsDoNotAdd", "[" + Repeat("[],", 1000) + "[]]", 2, ""},
                      DepthCase{"ManyShallowSiblings", "[[],[],[],[],[]]", 2, ""},
                      DepthCase{"FiftyThousandLevels", Nested(50000, '{', '}'), 64,
                                "spec: nested deeper than 64 levels (at byte 64)"},
                      DepthCase{"UnbalancedClosersDoNotGoNegative", "]]]][[", 2, ""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
