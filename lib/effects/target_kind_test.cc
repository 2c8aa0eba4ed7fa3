#include "effects/target_kind.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>

namespace ocirlimit {
namespace {

struct StatCase {
  const char* name;
  std::string text;
  std::string error;  // of ParseProcStat; empty: parsed
  char state = '?';
  uint64_t flags = 0;
  std::string refusal;  // of RefuseTargetKind; empty: a fine target
  ApplyFailure failure = ApplyFailure::kNone;
  std::optional<uint64_t> start_time = std::nullopt;
};

void PrintTo(const StatCase& c, std::ostream* os) { *os << c.name; }

class ProcStatTable : public ::testing::TestWithParam<StatCase> {};

TEST_P(ProcStatTable, ParsesAndJudges) {
  const StatCase& c = GetParam();
  auto stat = ParseProcStat(c.text);
  if (!c.error.empty()) {
    ASSERT_FALSE(stat.ok());
    EXPECT_EQ(stat.error().Text(), c.error);
    return;
  }
  ASSERT_TRUE(stat.ok()) << stat.error().Text();
  EXPECT_EQ(stat->state, c.state);
  EXPECT_EQ(stat->flags, c.flags);
  EXPECT_EQ(stat->start_time, c.start_time);
  auto refused = RefuseTargetKind(42, *stat, "before its limits were set");
  if (c.refusal.empty()) {
    EXPECT_FALSE(refused.has_value()) << refused->error.Text();
  } else {
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->error.Text(), c.refusal);
    EXPECT_EQ(refused->failure, c.failure);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProcStatTable,
    ::testing::Values(
        StatCase{"Sleeping", "42 (sleep) S 1 42 42 0 -1 4194560 100 0 0", "", 'S', 4194560, "",
                 ApplyFailure::kNone},
        StatCase{"Kthreadd", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0", "", 'S', 2129984,
                 "pid 42: refusing to touch a kernel thread", ApplyFailure::kInvalidTarget},
        StatCase{"Zombie", "42 (sh) Z 1 42 42 0 -1 4227084 0 0", "", 'Z', 4227084,
                 "pid 42: is a zombie (exited, not yet reaped) before its limits were set",
                 ApplyFailure::kTargetGone},
        StatCase{"Dead", "42 (sh) X 1 42 42 0 -1 0 0", "", 'X', 0,
                 "pid 42: is a zombie (exited, not yet reaped) before its limits were set",
                 ApplyFailure::kTargetGone},
        // A command may hold ") Z " to fake a state: only the last ')' counts.
        StatCase{"CommWithParenthesesAndSpaces", "42 (a) Z 1 2 3 4 5 6 (b) R 1 42 42 0 -1 64 0", "",
                 'R', 64, "", ApplyFailure::kNone},
        // A whole line, as the kernel writes it: starttime is field 22.
        StatCase{"WholeLine",
                 "4242 (sleep) S 4200 4242 4200 0 -1 4194560 99 0 0 0 0 0 0 0 20 0 1 0 41801 "
                 "2322432 192 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
                 "", 'S', 4194560, "", ApplyFailure::kNone, 41801},
        StatCase{"NoCloseParen", "42 (sleep S 1", "/proc stat: no \")\" after the command", '?', 0,
                 "", ApplyFailure::kNone},
        StatCase{"NoState", "42 (x)", "/proc stat: no process state", '?', 0, "",
                 ApplyFailure::kNone},
        StatCase{"ShortLine", "42 (x) S 1 2 3", "/proc stat: no process flags", '?', 0, "",
                 ApplyFailure::kNone},
        StatCase{"FlagsNotANumber", "42 (x) S 1 2 3 4 5 zz", "/proc stat: no process flags", '?', 0,
                 "", ApplyFailure::kNone}),
    [](const auto& info) { return std::string(info.param.name); });

struct TargetCase {
  pid_t target;
  pid_t self;
  const char* message_part;  // empty: accepted
};
void PrintTo(const TargetCase& c, std::ostream* os) {
  *os << "pid " << c.target << " from helper pid " << c.self;
}

class CheckTargetTable : public ::testing::TestWithParam<TargetCase> {};

TEST_P(CheckTargetTable, Checks) {
  const TargetCase& c = GetParam();
  Status s = CheckTarget(c.target, c.self);
  if (std::string(c.message_part).empty()) {
    EXPECT_TRUE(s.ok()) << s.error().Text();
  } else {
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().Text().find(c.message_part), std::string::npos) << s.error().Text();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, CheckTargetTable,
    ::testing::Values(TargetCase{0, 100, "pid 0: refusing to touch pid 0 or 1"},
                      TargetCase{1, 100, "pid 1: refusing to touch pid 0 or 1"},
                      TargetCase{-3, 100, "pid -3: refusing"},
                      TargetCase{100, 100, "pid 100: refusing to touch the helper's own process"},
                      TargetCase{2, 100, ""}, TargetCase{101, 100, ""}));

}  // namespace
}  // namespace ocirlimit
