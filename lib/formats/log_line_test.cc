#include "formats/log_line.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

TEST(FormatChanges, ListsEachChangeOldToNew) {
  std::vector<Change> changes = {
      {RLIMIT_MEMLOCK, {8388608, 8388608}, {kInf, kInf}},
      {RLIMIT_NOFILE, {1024, 4096}, {4096, 4096}},
  };
  EXPECT_EQ(FormatChanges(changes),
            "memlock 8388608:8388608->unlimited:unlimited nofile 1024:4096->4096:4096");
  EXPECT_EQ(FormatChanges({}), "");
}

TEST(FormatLogLine, ListsIdPidAndEachChange) {
  std::vector<Change> changes = {
      {RLIMIT_MEMLOCK, {8388608, 8388608}, {kInf, kInf}},
      {RLIMIT_NOFILE, {1024, 1024}, {4096, 4096}},
  };
  EXPECT_EQ(
      FormatLogLine("2024-05-01T10:00:00Z", "web-1", 4242, changes, {}, ""),
      "2024-05-01T10:00:00Z id=\"web-1\" pid=4242 memlock 8388608:8388608->unlimited:unlimited"
      " nofile 1024:1024->4096:4096");
}

TEST(FormatLogLine, UnchangedWithWarningsAndError) {
  EXPECT_EQ(FormatLogLine("T", "a", 7, {}, {"w1", "w2"}, "boom"),
            "T id=\"a\" pid=7 unchanged warning=\"w1\" warning=\"w2\" error=\"boom\"");
}

TEST(FormatLogLine, ASpecEditSaysWhereAndWhatWasSet) {
  LogRecord r;
  r.time = "T";
  r.id = "c\"1";
  r.via = "exec";
  r.limits = {{RLIMIT_MEMLOCK, 1, 2}, {RLIMIT_NOFILE, 3, 3}};
  r.warnings = {"annotation \"oci-rlimit.io/rlimits\" = \"x\": clamped"};
  EXPECT_EQ(FormatLogLine(r), R"(T id="c\"1" via="exec" set memlock=1:2 nofile=3:3 )"
                              R"(warning="annotation \"oci-rlimit.io/rlimits\" = \"x\": clamped")");
  r.limits.clear();
  r.error = "e";
  EXPECT_EQ(FormatLogLine(r),
            R"(T id="c\"1" via="exec" unchanged )"
            R"(warning="annotation \"oci-rlimit.io/rlimits\" = \"x\": clamped" error="e")");
}

struct SpecEditCase {
  std::string name;
  std::vector<Rlimit> limits;
  std::vector<std::optional<LimitPair>> before;
  std::string line;
};

class FormatSpecEdit : public ::testing::TestWithParam<SpecEditCase> {};

// A spec edit's items stay NAME=VALUE tokens; `before`, when a writer says
// it, prefixes the value with the old entry (or "unreported") and "->".
TEST_P(FormatSpecEdit, SaysTheBeforeOnlyWhenTheWriterDoes) {
  LogRecord r;
  r.time = "T";
  r.id = "c1";
  r.via = "nri";
  r.limits = GetParam().limits;
  r.before = GetParam().before;
  EXPECT_EQ(FormatLogLine(r), GetParam().line);
}

INSTANTIATE_TEST_SUITE_P(
    LogLine, FormatSpecEdit,
    ::testing::Values(
        SpecEditCase{"NoBeforeAsTheWrapperWrites",
                     {{RLIMIT_MEMLOCK, 1, 2}},
                     {},
                     R"(T id="c1" via="nri" set memlock=1:2)"},
        SpecEditCase{"Unreported",
                     {{RLIMIT_MEMLOCK, 8388608, 8388608}},
                     {std::nullopt},
                     R"(T id="c1" via="nri" set memlock=unreported->8388608:8388608)"},
        SpecEditCase{"SpecEntryAndUnreported",
                     {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 1024, 4096}},
                     {std::nullopt, LimitPair{512, 2048}},
                     R"(T id="c1" via="nri" set memlock=unreported->unlimited:unlimited )"
                     R"(nofile=512:2048->1024:4096)"},
        SpecEditCase{"ShorterBeforeLeavesTheRestPlain",
                     {{RLIMIT_MEMLOCK, 1, 1}, {RLIMIT_NOFILE, 2, 2}},
                     {LimitPair{0, 0}},
                     R"(T id="c1" via="nri" set memlock=0:0->1:1 nofile=2:2)"},
        SpecEditCase{"BeforeWithoutLimitsIsUnchanged",
                     {},
                     {std::nullopt},
                     R"(T id="c1" via="nri" unchanged)"}),
    CaseName{});

TEST(FormatLogLine, CutsAHugeIdAndSaysItsSize) {
  LogRecord r;
  r.time = "T";
  r.id = std::string(100000, 'a');
  r.via = "nri";
  const std::string line = FormatLogLine(r);
  EXPECT_LT(line.size(), 400u) << line;
  EXPECT_NE(line.find("\u2026\" (100000 bytes) via=\"nri\" unchanged"), std::string::npos) << line;
}

struct HostileId {
  const char* name;
  std::string id;
  const char* quoted;
};

class FormatLogLineHostile : public ::testing::TestWithParam<HostileId> {};

TEST_P(FormatLogLineHostile, StaysOneLine) {
  const HostileId& c = GetParam();
  std::vector<Change> changes = {{RLIMIT_MEMLOCK, {1, 1}, {2, 2}}};
  std::string line = FormatLogLine("T", c.id, 4242, changes, {"spec says\nno"}, "bad\r\nthing");
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  EXPECT_NE(line.find(std::string("id=") + c.quoted + " pid=4242 memlock 1:1->2:2"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("warning=\"spec says\\nno\""), std::string::npos) << line;
  EXPECT_NE(line.find("error=\"bad\\r\\nthing\""), std::string::npos) << line;
}

INSTANTIATE_TEST_SUITE_P(
    LogLine, FormatLogLineHostile,
    ::testing::Values(HostileId{"Newline", "evil\nT id=\"x\" pid=1", R"("evil\nT id=\"x\" pid=1")"},
                      HostileId{"Quote", "a\"b", R"("a\"b")"},
                      HostileId{"Backslash", "a\\b", R"("a\\b")"},
                      HostileId{"InvalidUtf8", "a\xff", "\"a\xEF\xBF\xBD\""},
                      // Shown raw, these end a line or reorder it in a
                      // viewer: escaped, never written as they are.
                      HostileId{"LineSeparator", "a\u2028T id=\"x\"", R"("a\u2028T id=\"x\"")"},
                      HostileId{"ParagraphSeparator", "a\u2029b", R"("a\u2029b")"},
                      HostileId{"NextLine", "a\u0085T id=\"x\"", R"("a\u0085T id=\"x\"")"},
                      HostileId{"BidiOverride", "a\u202eb", R"("a\u202eb")"},
                      HostileId{"BidiIsolate", "a\u2066b\u2069", R"("a\u2066b\u2069")"},
                      HostileId{"C1Csi", "a\u009b31m", R"("a\u009b31m")"}),
    [](const ::testing::TestParamInfo<HostileId>& info) { return std::string(info.param.name); });

// A verdict whose reply missed the runtime's deadline is not logged as set.
struct NotAppliedCase {
  const char* name;
  std::string line;
  std::string want;
};
void PrintTo(const NotAppliedCase& c, std::ostream* os) { *os << c.name; }

class NotApplied : public ::testing::TestWithParam<NotAppliedCase> {};

TEST_P(NotApplied, SaysWhatWasNotApplied) {
  EXPECT_EQ(NotAppliedLine(GetParam().line, "the reply was not written: EPIPE"), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    LogLine, NotApplied,
    ::testing::Values(
        NotAppliedCase{
            "Set", "T id=\"c1\" via=\"nri\" set memlock=unreported->8388608:8388608",
            "T id=\"c1\" via=\"nri\" unapplied error=\"the reply was not written: EPIPE; "
            "the runtime may have created container \\\"c1\\\" unadjusted\" "
            "verdict=\"set memlock=unreported->8388608:8388608\""},
        NotAppliedCase{"ErrorVerdictWithQuotesInTheId",
                       "T id=\"a\\\" via=\\\"x\" via=\"nri\" unchanged error=\"no \\\"x\\\"\"",
                       "T id=\"a\\\" via=\\\"x\" via=\"nri\" unapplied error=\"the reply was not "
                       "written: EPIPE; the runtime may have created container "
                       "\\\"a\\\\\\\" via=\\\\\\\"x\\\" unadjusted\" verdict=\"unchanged "
                       "error=\\\"no \\\\\\\"x\\\\\\\"\\\"\""},
        NotAppliedCase{"OtherShape", "T something",
                       "T something error=\"the reply was not "
                       "written: EPIPE\""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
