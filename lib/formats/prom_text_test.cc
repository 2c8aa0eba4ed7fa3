#include "formats/prom_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

TEST(PromText, FamiliesWithHelpTypeAndLabels) {
  std::vector<PromFamily> f = {
      {.name = "oci_rlimit_x_total",
       .help = "Things done.",
       .type = PromType::kCounter,
       .samples = {{.labels = {{"result", "ok"}}, .value = 3},
                   {.labels = {{"result", "failed"}, {"why", "b"}}, .value = 0}}},
      {.name = "oci_rlimit_up",
       .help = "Up.",
       .type = PromType::kGauge,
       .samples = {{.labels = {}, .value = 1}}},
      {.name = "oci_rlimit_empty", .help = "None yet.", .type = PromType::kGauge, .samples = {}},
  };
  EXPECT_EQ(FormatPrometheus(f),
            "# HELP oci_rlimit_x_total Things done.\n"
            "# TYPE oci_rlimit_x_total counter\n"
            "oci_rlimit_x_total{result=\"ok\"} 3\n"
            "oci_rlimit_x_total{result=\"failed\",why=\"b\"} 0\n"
            "# HELP oci_rlimit_up Up.\n"
            "# TYPE oci_rlimit_up gauge\n"
            "oci_rlimit_up 1\n"
            "# HELP oci_rlimit_empty None yet.\n"
            "# TYPE oci_rlimit_empty gauge\n");
}

TEST(PromText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(PromEscapeLabel("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  std::vector<PromFamily> f = {
      {.name = "m", .help = "two\nlines \\ \"q\"", .type = PromType::kGauge, .samples = {}}};
  EXPECT_EQ(FormatPrometheus(f), "# HELP m two\\nlines \\\\ \"q\"\n# TYPE m gauge\n");
  f[0].samples.push_back({.labels = {{"root", "/run/\"x\"\n"}}, .value = 2});
  EXPECT_NE(FormatPrometheus(f).find("m{root=\"/run/\\\"x\\\"\\n\"} 2\n"), std::string::npos);
}

struct ValueCase {
  std::string name;
  double value;
  std::string want;
};

class PromValueTest : public ::testing::TestWithParam<ValueCase> {};

TEST_P(PromValueTest, Formats) { EXPECT_EQ(PromValue(GetParam().value), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Values, PromValueTest,
    ::testing::Values(ValueCase{"zero", 0, "0"}, ValueCase{"count", 42, "42"},
                      ValueCase{"negative", -7, "-7"},
                      ValueCase{"unix_seconds", 1764912000, "1764912000"},
                      ValueCase{"fraction", 0.25, "0.25"},
                      ValueCase{"inf", std::numeric_limits<double>::infinity(), "+Inf"},
                      ValueCase{"minus_inf", -std::numeric_limits<double>::infinity(), "-Inf"},
                      ValueCase{"nan", std::nan(""), "NaN"}, ValueCase{"huge", 1e20, "1e+20"}),
    CaseName{});

struct NameCase {
  std::string name;
  std::string text;
  bool metric;
  bool label;
};

class PromNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(PromNameTest, Validates) {
  EXPECT_EQ(ValidPromMetricName(GetParam().text), GetParam().metric);
  EXPECT_EQ(ValidPromLabelName(GetParam().text), GetParam().label);
}

INSTANTIATE_TEST_SUITE_P(Names, PromNameTest,
                         ::testing::Values(NameCase{"plain", "oci_rlimit_up", true, true},
                                           NameCase{"colon", "a:b", true, false},
                                           NameCase{"digit_first", "1abc", false, false},
                                           NameCase{"empty", "", false, false},
                                           NameCase{"dash", "a-b", false, false},
                                           NameCase{"reserved", "__name", true, false}),
                         CaseName{});

TEST(PromText, AddLabelToAllNamesEverySampleButKeepsAGivenOne) {
  std::vector<PromFamily> f = {
      {.name = "a", .help = "A.", .samples = {{.labels = {}, .value = 1}}},
      {.name = "b",
       .help = "B.",
       .samples = {{.labels = {{"x", "1"}}, .value = 2},
                   {.labels = {{"node", "own"}}, .value = 3}}},
  };
  AddLabelToAll(f, "node", "gpu-1");
  EXPECT_EQ(FormatPrometheus(f),
            "# HELP a A.\n# TYPE a gauge\na{node=\"gpu-1\"} 1\n"
            "# HELP b B.\n# TYPE b gauge\nb{x=\"1\",node=\"gpu-1\"} 2\nb{node=\"own\"} 3\n");
  std::vector<PromFamily> g = f;
  AddLabelToAll(g, "node", "");
  EXPECT_EQ(FormatPrometheus(g), FormatPrometheus(f));
}

}  // namespace
}  // namespace ocirlimit
