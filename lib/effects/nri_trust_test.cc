// The one rule doctor and audit believe oci-rlimit-nri's status file by.
#include "effects/nri_trust.h"

#include <gtest/gtest.h>

#include <map>

namespace ocirlimit {
namespace {

// /proc/PID/stat with `start` as field 22.
std::string Stat(uint64_t start) {
  return "42 (oci-rlimit-nri) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " +
         std::to_string(start) + " 0 0\n";
}

NriTrust Trust(const std::string& text, const std::map<std::string, std::string>& proc) {
  auto runs = WriterRunsIn([&](const std::string& p) -> Result<std::string> {
    auto it = proc.find(p);
    if (it == proc.end()) return MakeError("open " + p, ENOENT);
    return it->second;
  });
  return TrustNriStatus(ParseNriStatus(text), runs);
}

const std::string kFile =
    "# oci-rlimit-nri\nconnected=2026-12-06T09:00:00Z\nwriter-pid=42\n"
    "writer-start=777\n";

TEST(NriTrust, BelievedOnlyWhileItsWriterRuns) {
  EXPECT_EQ(Trust(kFile, {{"/proc/42/stat", Stat(777)}}), NriTrust::kBelieved);
  EXPECT_EQ(Trust(kFile, {}), NriTrust::kStale) << "the writer is gone";
  EXPECT_EQ(Trust(kFile, {{"/proc/42/stat", Stat(778)}}), NriTrust::kStale) << "a reused pid";
  EXPECT_EQ(Trust("# oci-rlimit-nri\nconnected=x\n", {{"/proc/0/stat", Stat(0)}}),
            NriTrust::kNoWriter);
  EXPECT_EQ(Trust("not a status file\n", {}), NriTrust::kUnreadable);
}

}  // namespace
}  // namespace ocirlimit
