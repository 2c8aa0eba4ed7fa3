// The capability drop's sequence against a fake CapOps: which capabilities
// are kept and dropped, that no_new_privs comes first, and that any failed
// call stops the drop with one line and the exit status --help gives.
#include "prlimit-helper/privileges.h"

#include <gtest/gtest.h>
#include <linux/capability.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "prlimit-helper/helper_output.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr int kMaxBits = 41;  // CAP_LAST_CAP + 1 on this kernel's headers

// Records every call as one string, in order; a call named in `fail` fails
// with its errno ("drop_bound 3" names one capability).
class FakeCaps final : public CapOps {
 public:
  Own own;
  bool ambient = true;
  std::set<int> bounding;  // what InBounding reports
  std::map<std::string, int> fail;
  std::vector<std::string> calls;
  std::optional<std::vector<int>> kept;  // what SetProc got

  FakeCaps() {
    for (int cap = 0; cap < kMaxBits; ++cap) bounding.insert(cap);
  }

  Status SetNoNewPrivs() override { return Call("no_new_privs"); }
  Result<Own> ReadOwn() override {
    if (auto st = Call("read_own"); !st) return st.error();
    return own;
  }
  int MaxBits() override { return kMaxBits; }
  bool InBounding(int cap) override { return bounding.count(cap) > 0; }
  Status DropBound(int cap) override {
    auto st = Call("drop_bound " + std::to_string(cap));
    if (st) bounding.erase(cap);
    return st;
  }
  bool AmbientSupported() override { return ambient; }
  Status ResetAmbient() override { return Call("reset_ambient"); }
  Status SetProc(const std::vector<int>& keep) override {
    auto st = Call("set_proc");
    if (st) kept = keep;
    return st;
  }

 private:
  Status Call(const std::string& name) {
    calls.push_back(name);
    auto it = fail.find(name);
    if (it != fail.end()) return MakeError("fake " + name, it->second);
    return Ok{};
  }
};

std::vector<std::string> BoundDrops(std::initializer_list<int> skip) {
  std::vector<std::string> drops;
  for (int cap = 0; cap < kMaxBits; ++cap) {
    if (cap == CAP_SYS_RESOURCE || std::find(skip.begin(), skip.end(), cap) != skip.end()) {
      continue;
    }
    drops.push_back("drop_bound " + std::to_string(cap));
  }
  return drops;
}

std::vector<std::string> Seq(std::vector<std::string> head, const std::vector<std::string>& mid,
                             const std::vector<std::string>& tail) {
  head.insert(head.end(), mid.begin(), mid.end());
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// ---------------------------------------------------------------------------
// Successful drops: what is kept, and the order of the calls.

struct DropCase {
  const char* name;
  bool sys_resource;  // CAP_SYS_RESOURCE permitted at start
  bool setpcap;       // CAP_SETPCAP effective at start
  bool ambient;       // the kernel has ambient capabilities
  std::vector<int> not_in_bounding;
  std::vector<int> kept;
  std::vector<std::string> calls;
};

const DropCase kDropCases[] = {
    {"RootWithEverythingKeepsOnlySysResource",
     true,
     true,
     true,
     {},
     {CAP_SYS_RESOURCE},
     Seq({"no_new_privs", "read_own"}, BoundDrops({}), {"reset_ambient", "set_proc"})},
    {"WithoutSysResourceKeepsNothing",
     false,
     true,
     true,
     {},
     {},
     Seq({"no_new_privs", "read_own"}, BoundDrops({}), {"reset_ambient", "set_proc"})},
    {"WithoutSetpcapLeavesTheBoundingSet",
     true,
     false,
     true,
     {},
     {CAP_SYS_RESOURCE},
     {"no_new_privs", "read_own", "reset_ambient", "set_proc"}},
    {"CapsAlreadyOutOfTheBoundingSetAreNotDroppedAgain",
     true,
     true,
     true,
     {0, 21, 40},
     {CAP_SYS_RESOURCE},
     Seq({"no_new_privs", "read_own"}, BoundDrops({0, 21, 40}), {"reset_ambient", "set_proc"})},
    {"NoAmbientSupportSkipsTheReset",
     true,
     false,
     false,
     {},
     {CAP_SYS_RESOURCE},
     {"no_new_privs", "read_own", "set_proc"}},
};

class CapabilityDrop : public ::testing::TestWithParam<DropCase> {};

TEST_P(CapabilityDrop, KeepsAndDrops) {
  const DropCase& c = GetParam();
  FakeCaps caps;
  caps.own = {c.sys_resource, c.setpcap};
  caps.ambient = c.ambient;
  for (int cap : c.not_in_bounding) caps.bounding.erase(cap);

  Status st = DropToSysResource(caps);
  ASSERT_TRUE(st) << st.error().Text();
  EXPECT_EQ(caps.calls, c.calls);
  ASSERT_TRUE(caps.kept);
  EXPECT_EQ(*caps.kept, c.kept);
  if (c.setpcap) {
    EXPECT_EQ(caps.bounding, std::set<int>{CAP_SYS_RESOURCE})
        << "the bounding set holds CAP_SYS_RESOURCE alone";
  }
  EXPECT_EQ(caps.calls.front(), "no_new_privs") << "no_new_privs before anything else";
}

INSTANTIATE_TEST_SUITE_P(Cases, CapabilityDrop, ::testing::ValuesIn(kDropCases), CaseName{});

// ---------------------------------------------------------------------------
// A failed call: the drop stops there (no later call, and set_proc never
// claims success), with one line naming the step, and exit status 1.

struct FailCase {
  const char* name;
  const char* fails;  // the call that fails
  int err;
  const char* message;  // the whole line
};

const FailCase kFailCases[] = {
    {"NoNewPrivs", "no_new_privs", EINVAL, "set no_new_privs: fake no_new_privs: Invalid argument"},
    {"ReadOwn", "read_own", ENOMEM, "read own capabilities: fake read_own: Cannot allocate memory"},
    {"FirstBoundingDrop", "drop_bound 0", EPERM,
     "drop capability 0 from the bounding set: fake drop_bound 0: Operation not permitted"},
    {"LaterBoundingDrop", "drop_bound 25", EPERM,
     "drop capability 25 from the bounding set: fake drop_bound 25: Operation not permitted"},
    {"Ambient", "reset_ambient", EPERM,
     "clear the ambient capability set: fake reset_ambient: Operation not permitted"},
    {"SetProc", "set_proc", EPERM, "drop capabilities: fake set_proc: Operation not permitted"},
};

class CapabilityDropFails : public ::testing::TestWithParam<FailCase> {};

TEST_P(CapabilityDropFails, StopsWithOneLineAndExitStatusOne) {
  const FailCase& c = GetParam();
  FakeCaps caps;
  caps.own = {true, true};
  caps.fail[c.fails] = c.err;
  std::vector<std::string> said;
  auto exit_status = DropOrExitStatus(caps, [&](const std::string& l) { said.push_back(l); });

  ASSERT_TRUE(exit_status) << "a failed drop must never go on";
  EXPECT_EQ(*exit_status, kExitFailure);
  EXPECT_EQ(said, std::vector<std::string>{c.message});
  ASSERT_FALSE(caps.calls.empty());
  EXPECT_EQ(caps.calls.back(), c.fails) << "no call after the failed one";
  EXPECT_FALSE(caps.kept) << "the capability sets were not reported as dropped";
  // --help documents the status.
  EXPECT_NE(std::string(kHelperUsage).find("  1  failure: could not drop privileges"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Cases, CapabilityDropFails, ::testing::ValuesIn(kFailCases), CaseName{});

TEST(CapabilityDrop, SuccessGoesOnSilently) {
  FakeCaps caps;
  caps.own = {true, true};
  std::vector<std::string> said;
  EXPECT_EQ(DropOrExitStatus(caps, [&](const std::string& l) { said.push_back(l); }), std::nullopt);
  EXPECT_TRUE(said.empty());
}

}  // namespace
}  // namespace ocirlimit
