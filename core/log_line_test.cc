#include "core/log_line.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

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
                      HostileId{"InvalidUtf8", "a\xff", "\"a\xEF\xBF\xBD\""}),
    [](const ::testing::TestParamInfo<HostileId>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
