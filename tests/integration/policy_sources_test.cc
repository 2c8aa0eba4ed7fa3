// Request sources under real runc (docs/policy.md, "Request sources"): the
// NRI sample's annotation and the spec's own process.rlimits held to the
// same ceilings as oci-rlimit's annotation, through the hook (createRuntime
// and precreate) and oci-rlimit-runtime (run and exec). Each case asserts
// what the container's own process reads from /proc/self/limits.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "harness.h"
#include "policy_paths.h"

namespace ocirlimit::itest {
namespace {

// Raising a soft limit up to the hard one needs no CAP_SYS_RESOURCE.
const std::vector<std::string> kLowSoft = {"prlimit", "--memlock=1048576:8388608"};
constexpr Limit kLowSoftLimit{1 << 20, 8 << 20};
constexpr uint64_t kM = 1 << 20;

// Node default memlock 512K; requests up to 4M from every source.
std::string Sources(const std::string& sources, const std::string& over,
                    const std::string& on_error = "fail") {
  return "log-file = \"LOG\"\non-error = \"" + on_error +
         "\"\nrlimits = [\"memlock=512K\"]\n[requests]\nenabled = true\n"
         "ceilings = [\"memlock=4M\"]\nover-ceiling = \"" +
         over + "\"\nsources = " + sources + "\n";
}
const std::string kAll = R"(["spec", "ulimit-adjuster", "oci-rlimit"])";

void SpecMemlock(Json& spec, uint64_t soft, uint64_t hard) {
  spec["process"]["rlimits"].push_back(
      {{"type", "RLIMIT_MEMLOCK"}, {"soft", soft}, {"hard", hard}});
}

// The NRI sample's annotation for the container named "app", as containerd names it.
void Adjuster(Json& spec, uint64_t soft, uint64_t hard, const std::string& name = "app") {
  Annotate(spec, "io.kubernetes.cri.container-name", "app");
  Annotate(spec, "ulimits.noderesource.dev/container." + name,
           "- type: RLIMIT_MEMLOCK\n  soft: " + std::to_string(soft) +
               "\n  hard: " + std::to_string(hard) + "\n");
}

TEST_P(PolicyTest, SourcesASpecEntryUnderTheCeilingStandsOverTheNodeDefault) {
  UseConfig(Sources(kAll, "reject"));
  EXPECT_EQ(Memlock(
                "nothing", [](Json&) {}, kLowSoft),
            (Limit{512 << 10, 512 << 10}));
  EXPECT_EQ(Memlock(
                "under", [](Json& s) { SpecMemlock(s, 2 * kM, 2 * kM); }, kLowSoft),
            (Limit{2 << 20, 2 << 20}));
  EXPECT_EQ(Memlock(
                "at", [](Json& s) { SpecMemlock(s, 4 * kM, 4 * kM); }, kLowSoft),
            (Limit{4 << 20, 4 << 20}));
}

TEST_P(PolicyTest, SourcesASpecEntryIsNoRequestWithoutTheSpecSource) {
  UseConfig(Sources(R"(["oci-rlimit"])", "reject"));
  if (GetParam() == Path::kHook) {
    // runc re-applies the spec's 2M after the hook's 512K, and raising the
    // hard limit back needs CAP_SYS_RESOURCE: the container fails, as the
    // conflict warning says (docs/policy.md); the wrapper has no such gap.
    CmdResult r = RunContainer(
        "under", [](Json& s) { SpecMemlock(s, 2 * kM, 2 * kM); }, kLowSoft);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.err.find("rlimit"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(Memlock(
                "under", [](Json& s) { SpecMemlock(s, 2 * kM, 2 * kM); }, kLowSoft),
            (Limit{512 << 10, 512 << 10}));
}

TEST_P(PolicyTest, SourcesASpecEntryOverTheCeilingIsClampedOrTheHookRefuses) {
  UseConfig(Sources(kAll, "clamp"));
  CmdResult r = RunContainer(
      "over", [](Json& s) { SpecMemlock(s, 8 * kM, 8 * kM); }, kLowSoft);
  if (GetParam() == Path::kHook) {
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
    EXPECT_NE(Unescaped(r.err).find("process.rlimits sets memlock=8388608:8388608, over its "
                                    "ceiling in requests.ceilings; the hook cannot lower it"),
              std::string::npos)
        << r.err;
  } else {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{4 << 20, 4 << 20})) << r.err;
  }
}

TEST_P(PolicyTest, SourcesTheHookSaysItCannotLowerASpecEntryUnderWarn) {
  UseConfig(Sources(kAll, "clamp", "warn"));
  CmdResult r = RunContainer(
      "over", [](Json& s) { SpecMemlock(s, 8 * kM, 8 * kM); }, kLowSoft);
  EXPECT_EQ(r.status, 0) << r.err;
  if (GetParam() == Path::kHook) {
    EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{8 << 20, 8 << 20})) << "runc keeps the spec's";
    // runc drops a hook's stderr when it succeeds: the log line says it.
    const std::string log = ReadFile(log_path());
    EXPECT_NE(log.find("the hook cannot lower it"), std::string::npos) << log;
    EXPECT_NE(log.find("the container keeps it"), std::string::npos) << log;
  } else {
    EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{4 << 20, 4 << 20})) << r.err;
  }
}

TEST_P(PolicyTest, SourcesASpecEntryOverTheCeilingIsRejected) {
  UseConfig(Sources(kAll, "reject"));
  CmdResult r = RunContainer(
      "over", [](Json& s) { SpecMemlock(s, 8 * kM, 8 * kM); }, kLowSoft);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(Unescaped(r.err).find("process.rlimits: memlock=8388608:8388608 is over the ceiling "
                                  "memlock=4194304:4194304 (over-ceiling = \"reject\")"),
            std::string::npos)
      << r.err;
}

TEST_P(PolicyTest, SourcesTheNriSamplesAnnotationUnderTheCeilings) {
  UseConfig(Sources(kAll, "clamp"));
  EXPECT_EQ(Memlock(
                "under", [](Json& s) { Adjuster(s, 2 * kM, 2 * kM); }, kLowSoft),
            (Limit{2 << 20, 2 << 20}));
  EXPECT_EQ(Memlock(
                "over", [](Json& s) { Adjuster(s, 2 * kM, 64 * kM); }, kLowSoft),
            (Limit{2 << 20, 4 << 20}))
      << "hard clamped to the 4M ceiling";
  EXPECT_EQ(Memlock(
                "other", [](Json& s) { Adjuster(s, 2 * kM, 2 * kM, "sidecar"); }, kLowSoft),
            (Limit{512 << 10, 512 << 10}))
      << "another container's annotation";
}

TEST_P(PolicyTest, SourcesTheNriSamplesAnnotationRejectedOrMalformed) {
  UseConfig(Sources(kAll, "reject"));
  CmdResult over = RunContainer(
      "over", [](Json& s) { Adjuster(s, 2 * kM, 64 * kM); }, kLowSoft);
  EXPECT_NE(over.status, 0);
  EXPECT_EQ(over.out.find(kMemlock), std::string::npos);
  EXPECT_NE(over.err.find("is over the ceiling memlock=4194304:4194304"), std::string::npos)
      << over.err;
  CmdResult bad = RunContainer(
      "bad",
      [](Json& s) {
        Annotate(s, "io.kubernetes.cri.container-name", "app");
        Annotate(s, "ulimits.noderesource.dev/container.app",
                 "- type: memlock\n  soft: -1\n  hard: 1\n");
      },
      kLowSoft);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("is negative"), std::string::npos) << bad.err;
}

// A huge annotation on every path (512 KiB: at 1 MiB the hook's state on
// stdin, which carries the annotations, is over the hook's own 1 MiB bound
// first): the request's error, said in one bounded line, and the container
// does not run. The 1 MiB case is in lib/formats/ulimit_yaml_test.cc.
TEST_P(PolicyTest, SourcesAHugeSampleAnnotationIsRefusedInOneLine) {
  UseConfig(Sources(kAll, "clamp"));
  std::string huge;
  while (huge.size() < (1U << 19)) huge += "- type: nofile\n  soft: 1\n  hard: 1\n";
  CmdResult r = RunContainer(
      "huge",
      [&](Json& s) {
        Annotate(s, "io.kubernetes.cri.container-name", "app");
        Annotate(s, "ulimits.noderesource.dev/container.app", huge);
      },
      kLowSoft);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  EXPECT_NE(r.err.find("longer than 16384 bytes (524"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 8192U) << "the value is cut in the message";
}

TEST_P(PolicyTest, SourcesALaterSourceReplacesAnEarlierOnesType) {
  UseConfig(Sources(kAll, "clamp"));
  auto both = [](Json& s) {
    Adjuster(s, 2 * kM, 2 * kM);
    Request(s, "memlock=3M");
  };
  EXPECT_EQ(Memlock("ours-last", both, kLowSoft), (Limit{3 << 20, 3 << 20}));
  UseConfig(Sources(R"(["oci-rlimit", "ulimit-adjuster"])", "clamp"));
  EXPECT_EQ(Memlock("adjuster-last", both, kLowSoft), (Limit{2 << 20, 2 << 20}));
}

TEST_P(PolicyTest, SourcesBaselineIsTheHostWithoutRequests) {
  UseConfig("log-file = \"LOG\"\n");
  EXPECT_EQ(Memlock(
                "plain", [](Json& s) { Adjuster(s, 2 * kM, 2 * kM); }, kLowSoft),
            kLowSoftLimit);
}

}  // namespace
}  // namespace ocirlimit::itest
