#include "formats/ulimit_yaml_scalar.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

using yaml::ExactWhole;
using yaml::JsonUint64;
using yaml::ResolveScalar;
using yaml::Scalar;

constexpr std::string_view kInt = "tag:yaml.org,2002:int";
constexpr std::string_view kFloat = "tag:yaml.org,2002:float";

// A resolved scalar as one word: "int 5", "uint 18446744073709551615",
// "float 1000", "null", "bool 1", "str abc", "octal int 511", or "error".
std::string Show(std::string_view tag, std::string_view value, bool plain) {
  auto s = ResolveScalar(tag, value, plain);
  if (!s) return "error";
  std::string out = s->octal ? "octal " : "";
  switch (s->type) {
    case Scalar::Type::kNull:
      return out + "null";
    case Scalar::Type::kBool:
      return out + "bool " + std::to_string(s->i);
    case Scalar::Type::kInt:
      return out + "int " + std::to_string(s->i);
    case Scalar::Type::kUint:
      return out + "uint " + std::to_string(s->u);
    case Scalar::Type::kFloat: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", s->f);
      return out + "float " + buf;
    }
    case Scalar::Type::kString:
      break;
  }
  return out + "str " + s->text;
}

struct ResolveCase {
  std::string name;
  std::string tag;
  std::string value;
  bool plain;
  std::string want;
};

class ResolvesLikeGoYamlV2 : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolvesLikeGoYamlV2, ToTheSameGoValue) {
  const auto& c = GetParam();
  EXPECT_EQ(Show(c.tag, c.value, c.plain), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    UlimitYamlScalar, ResolvesLikeGoYamlV2,
    ::testing::Values(
        ResolveCase{"Decimal", "", "1024", true, "int 1024"},
        ResolveCase{"Signs", "", "+12", true, "int 12"},
        ResolveCase{"Negative", "", "-12", true, "int -12"},
        ResolveCase{"Hex", "", "0x1F", true, "int 31"},
        ResolveCase{"HexUpper", "", "0X1f", true, "int 31"},
        ResolveCase{"Octal0o", "", "0o17", true, "int 15"},
        ResolveCase{"Binary", "", "0b101", true, "int 5"},
        ResolveCase{"BinaryFallbackSign", "", "0b+1", true, "int 1"},
        ResolveCase{"NegativeBinary", "", "-0b1", true, "int -1"},
        ResolveCase{"LeadingZeroOctal", "", "0777", true, "octal int 511"},
        ResolveCase{"LeadingZeroSameEitherWay", "", "07", true, "int 7"},
        ResolveCase{"LeadingZeroNotOctal", "", "08", true, "float 8"},
        ResolveCase{"Underscores", "", "1_0__0", true, "int 100"},
        ResolveCase{"OverInt64", "", "18446744073709551615", true, "uint 18446744073709551615"},
        ResolveCase{"OverUint64", "", "18446744073709551616", true, "float 1.8446744073709552e+19"},
        ResolveCase{"HexOverUint64", "", "0x10000000000000000", true, "str 0x10000000000000000"},
        ResolveCase{"Exponent", "", "1e3", true, "float 1000"},
        ResolveCase{"DotFirst", "", ".5e1", true, "float 5"},
        ResolveCase{"DotFirstUnderscore", "", ".5_0", true, "float 0.5"},
        ResolveCase{"DotFirstBadUnderscore", "", "._5", true, "str ._5"},
        ResolveCase{"TrailingDot", "", "2.", true, "float 2"},
        ResolveCase{"FloatOverflowIsAString", "", "1e400", true, "str 1e400"},
        ResolveCase{"FloatUnderflowIsZero", "", "1e-400", true, "float 0"},
        ResolveCase{"Infinity", "", "-.Inf", true, "float -inf"},
        ResolveCase{"NotAFloatForm", "", "1.2.3", true, "str 1.2.3"},
        ResolveCase{"Sexagesimal", "", "1:30", true, "str 1:30"},
        ResolveCase{"Null", "", "~", true, "null"},
        ResolveCase{"EmptyIsNull", "", "", true, "null"},
        ResolveCase{"Yes", "", "yes", true, "bool 1"},
        ResolveCase{"Off", "", "OFF", true, "bool 0"},
        ResolveCase{"NotABoolWord", "", "yES", true, "str yES"},
        ResolveCase{"Timestamp", "", "2001-12-14", true, "str 2001-12-14"},
        ResolveCase{"Quoted", "", "1024", false, "str 1024"},
        ResolveCase{"QuotedEmpty", "", "", false, "str "},
        ResolveCase{"IntTagOnQuoted", std::string(kInt), "12", false, "int 12"},
        ResolveCase{"IntTagOnWord", std::string(kInt), "abc", true, "error"},
        ResolveCase{"FloatTagOnInt", std::string(kFloat), "3", true, "float 3"},
        ResolveCase{"FloatTagOnUint", std::string(kFloat), "18446744073709551615", true, "error"},
        ResolveCase{"StrTag", "tag:yaml.org,2002:str", "12", true, "str 12"},
        ResolveCase{"NullTag", "tag:yaml.org,2002:null", "x", true, "error"},
        ResolveCase{"BoolTagOnInt", "tag:yaml.org,2002:bool", "1", true, "error"},
        ResolveCase{"LocalTag", "!custom", "12", true, "str 12"},
        ResolveCase{"BangTag", "!", "12", true, "str 12"},
        ResolveCase{"Binary64", "tag:yaml.org,2002:binary", "bm9m\naWxl", true, "str nofile"},
        ResolveCase{"Binary64Padded", "tag:yaml.org,2002:binary", "MTI=", true, "str 12"},
        ResolveCase{"Binary64Bad", "tag:yaml.org,2002:binary", "MTI", true, "error"},
        ResolveCase{"MergeWordIsAString", "", "<<", true, "str <<"}),
    CaseName{});

struct JsonCase {
  std::string name;
  std::string value;  // a plain scalar
  std::string want;   // the number, or "error"
};

class ReadsAsEncodingJson : public ::testing::TestWithParam<JsonCase> {};

TEST_P(ReadsAsEncodingJson, IntoAUint64) {
  auto s = ResolveScalar("", GetParam().value, true);
  ASSERT_TRUE(s.ok());
  auto n = JsonUint64(*s);
  EXPECT_EQ(n ? std::to_string(*n) : "error", GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    UlimitYamlScalar, ReadsAsEncodingJson,
    ::testing::Values(JsonCase{"Int", "5", "5"}, JsonCase{"NegativeInt", "-5", "error"},
                      JsonCase{"MinusZeroInt", "-0", "0"},
                      JsonCase{"MinusZeroFloat", "-0.0", "error"},
                      JsonCase{"Uint", "18446744073709551615", "18446744073709551615"},
                      JsonCase{"WholeFloat", "1024.0", "1024"},
                      JsonCase{"ShortestDigits", "18446744073709549568.0", "18446744073709550000"},
                      JsonCase{"FloatOver", "18446744073709551615.0", "error"},
                      JsonCase{"BelowE21", "1e20", "error"},  // over 2^64-1
                      JsonCase{"E19", "1e19", "10000000000000000000"},
                      JsonCase{"Fraction", "0.5", "error"}, JsonCase{"Tiny", "1e-7", "error"},
                      JsonCase{"Zero", "0.0", "0"}, JsonCase{"Nan", ".nan", "error"},
                      JsonCase{"String", "abc", "error"}, JsonCase{"Bool", "true", "error"},
                      JsonCase{"Null", "~", "error"}),
    CaseName{});

struct ExactCase {
  std::string name;
  std::string text;
  std::string want;  // the whole number, or "no"
};

class ExactValueOfText : public ::testing::TestWithParam<ExactCase> {};

TEST_P(ExactValueOfText, IsAWholeNumberOrNot) {
  uint64_t n = 0;
  const bool whole = ExactWhole(GetParam().text, n);
  EXPECT_EQ(whole ? std::to_string(n) : "no", GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    UlimitYamlScalar, ExactValueOfText,
    ::testing::Values(ExactCase{"Plain", "1024", "1024"}, ExactCase{"Point", "1024.0", "1024"},
                      ExactCase{"Exponent", "1.5e3", "1500"},
                      ExactCase{"NegativeExponent", "15000e-1", "1500"},
                      ExactCase{"Fraction", "1.5", "no"}, ExactCase{"LeadingDot", ".5e1", "5"},
                      ExactCase{"Underscores", "1_0.0", "10"},
                      ExactCase{"Max", "18446744073709551615.000", "18446744073709551615"},
                      ExactCase{"OverMax", "18446744073709551616.0", "no"},
                      ExactCase{"TinyNonZero", "1e-400", "no"}, ExactCase{"Zero", "0.0e5", "0"},
                      ExactCase{"Sign", "+2.0", "2"}, ExactCase{"Minus", "-2.0", "no"},
                      ExactCase{"HugeExponent", "1e99999999999", "no"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
