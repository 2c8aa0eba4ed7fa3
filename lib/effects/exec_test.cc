#include "effects/exec.h"

#include <gtest/gtest.h>

#include <chrono>

namespace ocirlimit {
namespace {

TEST(RunCaptured, ReturnsStdoutOfASuccessfulRun) {
  auto r = RunCaptured({"/bin/sh", "-c", "echo out; echo err >&2"}, 5000, 1024);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, "out\n");
}

TEST(RunCaptured, ANonZeroExitIsAnError) {
  auto r = RunCaptured({"/bin/sh", "-c", "echo partial; exit 3"}, 5000, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("exit status 3"), std::string::npos) << r.error().Text();
}

TEST(RunCaptured, AMissingProgramIsAnError) {
  auto r = RunCaptured({"/nonexistent/runc", "state", "x"}, 5000, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("exit status 127"), std::string::npos) << r.error().Text();
}

TEST(RunCaptured, AHangingProgramIsKilledAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  auto r = RunCaptured({"/bin/sleep", "30"}, 300, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("no exit after 300 ms"), std::string::npos) << r.error().Text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RunCaptured, AProgramThatClosesStdoutButHangsIsKilled) {
  auto r = RunCaptured({"/bin/sh", "-c", "exec >&-; sleep 30"}, 300, 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("no exit after 300 ms"), std::string::npos) << r.error().Text();
}

TEST(RunCaptured, TooMuchOutputIsAnError) {
  auto r = RunCaptured({"/bin/sh", "-c", "yes"}, 5000, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("larger than 4096 bytes"), std::string::npos) << r.error().Text();
}

}  // namespace
}  // namespace ocirlimit
