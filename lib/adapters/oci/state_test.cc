#include "adapters/oci/state.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

TEST(ParseState, RuncShape) {
  auto s = ParseState(R"({"ociVersion":"1.0.2-dev","id":"web-1","status":"creating","pid":4242,)"
                      R"("bundle":"/run/containerd/io.containerd.runtime.v2.task/default/web-1"})");
  ASSERT_TRUE(s.ok()) << s.error().Text();
  EXPECT_EQ(s->oci_version, "1.0.2-dev");
  EXPECT_EQ(s->id, "web-1");
  EXPECT_EQ(s->status, "creating");
  EXPECT_EQ(s->pid, 4242);
  EXPECT_EQ(s->bundle, "/run/containerd/io.containerd.runtime.v2.task/default/web-1");
  EXPECT_TRUE(s->annotations.empty());
  EXPECT_TRUE(CheckStateTiming(*s).ok());
}

TEST(ParseState, CrunShape) {
  auto s = ParseState(R"({
  "ociVersion": "1.0.0",
  "id": "gpu-job",
  "status": "created",
  "pid": 31337,
  "bundle": "/tmp/bundle",
  "root": "/tmp/bundle/rootfs",
  "annotations": {
    "io.podman.annotations.autoremove": "FALSE",
    "org.opencontainers.image.stopSignal": "15"
  }
})");
  ASSERT_TRUE(s.ok()) << s.error().Text();
  EXPECT_EQ(s->id, "gpu-job");
  EXPECT_EQ(s->status, "created");
  EXPECT_EQ(s->pid, 31337);
  EXPECT_EQ(s->bundle, "/tmp/bundle");
  EXPECT_EQ(s->annotations,
            (std::map<std::string, std::string>{{"io.podman.annotations.autoremove", "FALSE"},
                                                {"org.opencontainers.image.stopSignal", "15"}}));
  EXPECT_TRUE(CheckStateTiming(*s).ok());
}

TEST(ParseState, BundleMayBeMissingOrNull) {
  for (const char* text : {R"({"id":"a","status":"creating","pid":2})",
                           R"({"id":"a","status":"creating","pid":2,"bundle":null,)"
                           R"("annotations":null})"}) {
    auto s = ParseState(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.error().Text();
    EXPECT_EQ(s->bundle, "") << text;
    EXPECT_EQ(s->pid, 2) << text;
  }
}

TEST(ParseState, LargestPidIsAccepted) {
  auto s = ParseState(R"({"id":"a","status":"creating","pid":2147483647})");
  ASSERT_TRUE(s.ok()) << s.error().Text();
  EXPECT_EQ(s->pid, 2147483647);
}

struct BadState {
  const char* name;
  std::string json;
  const char* message_part;
};

class ParseStateBad : public ::testing::TestWithParam<BadState> {};

TEST_P(ParseStateBad, NamesTheField) {
  const BadState& c = GetParam();
  auto s = ParseState(c.json);
  ASSERT_FALSE(s.ok()) << c.json.substr(0, 200);
  const std::string text = s.error().Text();
  EXPECT_NE(text.find(c.message_part), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
}

std::string WithPid(const std::string& pid) {
  return R"({"id":"a","status":"creating","pid":)" + pid + "}";
}

std::string Oversized() {
  std::string pad(kMaxStateBytes, ' ');
  return R"({"id":"a","status":"creating","pid":2})" + pad;
}

INSTANTIATE_TEST_SUITE_P(
    State, ParseStateBad,
    ::testing::Values(
        BadState{"Empty", "", "state: not valid JSON"},
        BadState{"Truncated", R"({"id":"a","status":"creating","pi)", "state: not valid JSON"},
        BadState{"Malformed", R"({"id":"a",,"status":"creating","pid":2})",
                 "state: not valid JSON"},
        BadState{"TrailingGarbage", R"({"id":"a","status":"creating","pid":2} x)",
                 "state: not valid JSON"},
        BadState{"InvalidUtf8", "{\"id\":\"a\xff\",\"status\":\"creating\",\"pid\":2}",
                 "state: not valid JSON"},
        BadState{"Array", R"([{"id":"a","status":"creating","pid":2}])",
                 "state: must be a JSON object"},
        BadState{"Number", "42", "state: must be a JSON object"},
        BadState{"TooBig", Oversized(), "state: larger than 1048576 bytes"},
        BadState{"MissingPid", R"({"id":"a","status":"creating"})", "state.pid: missing"},
        BadState{"StringPid", WithPid(R"("42")"), "state.pid: \"42\" is not an integer"},
        BadState{"FloatPid", WithPid("42.5"), "state.pid: 42.5 is not an integer"},
        BadState{"NullPid", WithPid("null"), "state.pid: null is not an integer"},
        BadState{"BoolPid", WithPid("true"), "state.pid: true is not an integer"},
        BadState{"ZeroPid", WithPid("0"), "state.pid: 0 is not a valid pid"},
        BadState{"NegativePid", WithPid("-5"), "state.pid: -5 is not a valid pid"},
        BadState{"PidPastInt32", WithPid("2147483648"), "state.pid: 2147483648 is not a valid pid"},
        BadState{"PidPastInt64", WithPid("9223372036854775808"),
                 "state.pid: 9223372036854775808 is not a valid pid"},
        BadState{"PidUint64Max", WithPid("18446744073709551615"),
                 "state.pid: 18446744073709551615 is not a valid pid"},
        BadState{"PidPastUint64", WithPid("184467440737095516150"), "state.pid: "},
        BadState{"MissingId", R"({"status":"creating","pid":2})", "state.id: missing or empty"},
        BadState{"EmptyId", R"({"id":"","status":"creating","pid":2})",
                 "state.id: missing or empty"},
        BadState{"NumericId", R"({"id":7,"status":"creating","pid":2})",
                 "state.id: must be a string"},
        BadState{"MissingStatus", R"({"id":"a","pid":2})", "state.status: missing or empty"},
        BadState{"StatusObject", R"({"id":"a","status":{},"pid":2})",
                 "state.status: must be a string"},
        BadState{"BundleArray", R"({"id":"a","status":"creating","pid":2,"bundle":["/b"]})",
                 "state.bundle: must be a string"},
        BadState{"VersionNumber", R"({"ociVersion":1,"id":"a","status":"creating","pid":2})",
                 "state.ociVersion: must be a string"},
        BadState{"AnnotationsArray",
                 R"({"id":"a","status":"creating","pid":2,"annotations":["x"]})",
                 "state.annotations: must be an object"},
        BadState{"AnnotationsString", R"({"id":"a","status":"creating","pid":2,"annotations":"x"})",
                 "state.annotations: must be an object"},
        BadState{"AnnotationValueNumber",
                 R"({"id":"a","status":"creating","pid":2,"annotations":{"k":1}})",
                 "state.annotations"},
        BadState{"AnnotationKeyWithNewline",
                 R"({"id":"a","status":"creating","pid":2,"annotations":{"a\nb":1}})",
                 "must be a string"},
        BadState{"NulInId", R"({"id":"a\u0000b","status":"creating","pid":2})",
                 "state.id: \"a\\u0000b\" contains a NUL character"},
        BadState{"NulInBundle", R"({"id":"a","status":"creating","pid":2,"bundle":"/b\u0000/c"})",
                 "state.bundle: \"/b\\u0000/c\" contains a NUL character"},
        BadState{"NewlineInId", R"({"id":"a\nb","status":"creating","pid":2})",
                 "state.id: \"a\\nb\" contains a control character"},
        BadState{"EscapeInId", R"({"id":"a\u001b[2Jb","status":"creating","pid":2})",
                 "state.id: \"a\\u001b[2Jb\" contains a control character"}),
    [](const ::testing::TestParamInfo<BadState>& info) { return std::string(info.param.name); });

TEST(ParseState, AcceptsExactlyTheLimit) {
  std::string body = R"({"id":"a","status":"creating","pid":2})";
  std::string text = body + std::string(kMaxStateBytes - body.size(), ' ');
  ASSERT_EQ(text.size(), kMaxStateBytes);
  auto s = ParseState(text);
  ASSERT_TRUE(s.ok()) << s.error().Text();
  EXPECT_EQ(s->id, "a");
}

struct TimingCase {
  const char* status;
  bool ok;
  const char* message_part;  // when !ok
};
void PrintTo(const TimingCase& c, std::ostream* os) { *os << "status " << c.status; }

class CheckStateTimingTest : public ::testing::TestWithParam<TimingCase> {};

TEST_P(CheckStateTimingTest, OnlyBeforeUserCode) {
  const TimingCase& c = GetParam();
  State s;
  s.id = "a";
  s.pid = 2;
  s.status = c.status;
  Status st = CheckStateTiming(s);
  ASSERT_EQ(st.ok(), c.ok) << c.status;
  if (!c.ok) {
    const std::string text = st.error().Text();
    EXPECT_NE(text.find(c.message_part), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    State, CheckStateTimingTest,
    ::testing::Values(TimingCase{"creating", true, ""}, TimingCase{"created", true, ""},
                      TimingCase{"running", false, "state.status: \"running\" is too late"},
                      TimingCase{"stopped", false, "state.status: \"stopped\" is too late"},
                      TimingCase{"paused", false, "\"paused\" is not a known OCI status"},
                      TimingCase{"Creating", false, "\"Creating\" is not a known OCI status"},
                      TimingCase{"creating\nx", false, "is not a known OCI status"}));

TEST(CheckStateTiming, TooLateNamesTheHookStages) {
  State s;
  s.status = "running";
  Status st = CheckStateTiming(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Text().find("createRuntime or prestart"), std::string::npos)
      << st.error().Text();
}

struct RuntimeStateCase {
  const char* name;
  std::string json;
  std::string bundle;  // empty: an error naming `error`
  std::string error;
};
class BundleFromState : public ::testing::TestWithParam<RuntimeStateCase> {};

TEST_P(BundleFromState, ReadsTheBundleOrSaysWhy) {
  auto b = BundleFromRuntimeState(GetParam().json);
  if (GetParam().bundle.empty()) {
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().Text().find(GetParam().error), std::string::npos) << b.error().Text();
  } else {
    ASSERT_TRUE(b.ok()) << b.error().Text();
    EXPECT_EQ(*b, GetParam().bundle);
  }
}

INSTANTIATE_TEST_SUITE_P(
    State, BundleFromState,
    ::testing::Values(
        RuntimeStateCase{"Runc",
                         R"({"ociVersion":"1.0.2","id":"c1","pid":42,"status":"running",)"
                         R"("bundle":"/run/b","rootfs":"/run/b/rootfs","created":"x","owner":""})",
                         "/run/b", ""},
        RuntimeStateCase{
            "NestedDeeperThanTheLimit",
            R"({"bundle":"/run/b","x":)" + std::string(100, '[') + std::string(100, ']') + "}", "",
            "runtime state: nested deeper than 64 levels"},
        RuntimeStateCase{"StoppedHasPidZero",
                         R"({"id":"c1","pid":0,"status":"stopped","bundle":"/b"})", "/b", ""},
        RuntimeStateCase{"NoBundle", R"({"id":"c1"})", "", "bundle: missing"},
        RuntimeStateCase{"RelativeBundle", R"({"bundle":"b"})", "", "is not an absolute path"},
        RuntimeStateCase{"NotJson", "container c1 does not exist", "", "not a JSON object"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
