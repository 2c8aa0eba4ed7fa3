// The NRI sample ulimit-adjuster's own cases (containerd/nri v0.12.2,
// plugins/ulimit-adjuster: adjuster_test.go, sample-ulimit-adjust.yaml and
// README.md) and issue 39's findings, run through ParseUlimitYaml with the
// sample's result beside each. A pod that moves from the sample gets the same
// numbers here or a refusal that says why, never another number.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/ulimit_yaml.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr std::string_view kRefused = "refused";

struct SampleCase {
  std::string name;
  std::string yaml;
  // What the sample applies (FormatRlimit of each entry, comma-separated;
  // "" for nothing), or "refused" (its CreateContainer fails).
  std::string sample;
  // What we give: the same list, or "refused: " and a part of the one line.
  std::string ours;
  std::string from;  // where the case is written
};

std::string Limits(const std::vector<Rlimit>& limits) {
  std::string out;
  for (const auto& r : limits) out += (out.empty() ? "" : ",") + FormatRlimit(r);
  return out;
}

bool Refusal(std::string_view s) { return s.starts_with(kRefused); }

class SampleTable : public ::testing::TestWithParam<SampleCase> {};

TEST_P(SampleTable, SameNumbersOrARefusal) {
  const SampleCase& c = GetParam();
  // The table itself: where both give numbers, they are the same numbers.
  if (!Refusal(c.sample) && !Refusal(c.ours)) {
    ASSERT_EQ(c.ours, c.sample) << c.from;
  }
  auto got = ParseUlimitYaml(c.yaml);
  if (!Refusal(c.ours)) {
    ASSERT_TRUE(got.ok()) << got.error().Text() << " (" << c.from << ")";
    EXPECT_EQ(Limits(*got), c.ours) << c.from;
    return;
  }
  ASSERT_FALSE(got.ok()) << Limits(*got) << " where the sample gives " << c.sample << " (" << c.from
                         << ")";
  const std::string why = c.ours.substr(kRefused.size() + 2);
  EXPECT_NE(got.error().Text().find(why), std::string::npos) << got.error().Text();
  EXPECT_EQ(got.error().Text().find('\n'), std::string::npos);
}

const std::string kNofile = "- type: RLIMIT_NOFILE\n  soft: 123\n  hard: 456\n";

INSTANTIATE_TEST_SUITE_P(
    UlimitAdjuster, SampleTable,
    ::testing::Values(
        // adjuster_test.go, TestParseAnnotations (the YAML as written there).
        SampleCase{"OneValid", "\n" + kNofile, "nofile=123:456", "nofile=123:456",
                   "adjuster_test.go one-valid"},
        SampleCase{"MultipleValid",
                   "\n" + kNofile + "- type: RLIMIT_NPROC\n  soft: 456\n  hard: 789\n",
                   "nofile=123:456,nproc=456:789", "nofile=123:456,nproc=456:789",
                   "adjuster_test.go multiple-valid"},
        SampleCase{"MissingPrefix", "\n- type: AS\n  soft: 123\n  hard: 456\n", "as=123:456",
                   "as=123:456", "adjuster_test.go missing-prefix"},
        SampleCase{"LowerCase", "\n- type: rlimit_core\n  soft: 123\n  hard: 456\n", "core=123:456",
                   "core=123:456", "adjuster_test.go lower-case"},
        SampleCase{"LowerCaseMissingPrefix", "\n- type: cpu\n  soft: 123\n  hard: 456\n",
                   "cpu=123:456", "cpu=123:456", "adjuster_test.go lower-case-missing-prefix"},
        SampleCase{"InvalidPrefix", "\n- type: ULIMIT_NOFILE\n  soft: 123\n  hard: 456\n",
                   "refused", "refused: type \"ULIMIT_NOFILE\" is not a Linux rlimit",
                   "adjuster_test.go invalid-prefix"},
        SampleCase{"InvalidRlimit", "\n- type: RLIMIT_FOO\n  soft: 123\n  hard: 456\n", "refused",
                   "refused: type \"RLIMIT_FOO\" is not a Linux rlimit",
                   "adjuster_test.go invalid-rlimit"},
        SampleCase{"OneInvalid",
                   "\n- type: RLIMIT_NICE\n  soft: 456\n  hard: 789\n- type: RLIMIT_BAR\n  soft: "
                   "123\n  hard: 456\n",
                   "refused", "refused: item 1 (line 5): type \"RLIMIT_BAR\"",
                   "adjuster_test.go one-invalid"},
        SampleCase{"NoAnnotationValue", "", "", "", "adjuster_test.go no-annotations (empty)"},
        // adjuster_test.go, TestAdjustUlimits (its structs, written as YAML).
        SampleCase{"HardUnderSoft", "- type: RLIMIT_NOFILE\n  hard: 0\n  soft: 100\n", "refused",
                   "refused: soft is over hard", "adjuster_test.go invalid-hard"},
        SampleCase{"AdjustOne", "- type: RLIMIT_MEMLOCK\n  hard: 100\n  soft: 99\n",
                   "memlock=99:100", "memlock=99:100", "adjuster_test.go one"},
        SampleCase{"AdjustOneInvalid",
                   "- type: RLIMIT_MEMLOCK\n  hard: 100\n  soft: 99\n- type: RLIMIT_NOFILE\n  "
                   "hard: 0\n  soft: 100\n",
                   "refused", "refused: item 1 (line 4): nofile=100:0: soft is over hard",
                   "adjuster_test.go one-invalid (adjust)"},
        SampleCase{"AdjustMultipleValid",
                   "- type: RLIMIT_MEMLOCK\n  hard: 100\n  soft: 99\n- type: RLIMIT_AS\n  hard: "
                   "10\n  soft: 0\n",
                   "memlock=99:100,as=0:10", "memlock=99:100,as=0:10",
                   "adjuster_test.go multiple-valid (adjust)"},
        // The example pod: nproc has no soft, which the sample sets to 0.
        SampleCase{"ExamplePod",
                   "- type: memlock\n  hard: 987654\n  soft: 645321\n- type: RLIMIT_NOFILE\n  "
                   "hard: 4096\n  soft: 1024\n- type: nproc\n  hard: 9000\n",
                   "memlock=645321:987654,nofile=1024:4096,nproc=0:9000",
                   "refused: item 2 (line 7): no soft: the NRI sample reads a missing soft as 0",
                   "sample-ulimit-adjust.yaml"},
        SampleCase{"Readme",
                   "- type: RLIMIT_NOFILE\n  soft: 1024\n  hard: 4096\n- type: RLIMIT_MEMLOCK\n  "
                   "soft: 1073741824\n  hard: 1073741824\n",
                   "nofile=1024:4096,memlock=1073741824:1073741824",
                   "nofile=1024:4096,memlock=1073741824:1073741824", "README.md"},
        // Issue 39's findings against the sample's parser, run as is.
        SampleCase{"OctalSoft", "- type: nofile\n  soft: 0777\n  hard: 4096\n", "nofile=511:4096",
                   "refused: soft \"0777\" has a leading zero, which YAML 1.1 (the NRI sample) "
                   "reads as octal: 511 there",
                   "issue 39"},
        SampleCase{"OctalHard", "- type: nofile\n  soft: 1\n  hard: 01024\n", "nofile=1:532",
                   "refused: hard \"01024\" has a leading zero, which YAML 1.1 (the NRI sample) "
                   "reads as octal: 532 there",
                   "issue 39"},
        SampleCase{"BlockListOfFlowMaps",
                   "- {type: nofile, soft: 1024, hard: 4096}\n- {type: core, soft: 0, hard: 0}\n",
                   "nofile=1024:4096,core=0:0", "nofile=1024:4096,core=0:0", "issue 39"},
        SampleCase{"CapitalisedKeys", "- Type: nofile\n  Soft: 1024\n  Hard: 4096\n",
                   "nofile=1024:4096", "nofile=1024:4096", "issue 39"},
        SampleCase{"Null", "null", "", "", "issue 39"},
        SampleCase{"Tilde", "~\n", "", "", "issue 39"},
        // Derived from the sample's decoder (sigs.k8s.io/yaml: YAML 1.1 to
        // JSON, then encoding/json), not from its tests.
        SampleCase{"UpperKeysInAFlowMap", "[{TYPE: nofile, SOFT: 1, HARD: 2}]", "nofile=1:2",
                   "nofile=1:2", "derived: encoding/json matches keys in any case"},
        SampleCase{"NullSoft", "- type: nofile\n  soft: ~\n  hard: 2\n", "nofile=0:2",
                   "refused: soft \"~\" is null: the NRI sample reads it as 0",
                   "derived: JSON null leaves the field 0"},
        SampleCase{"HexSoft", "- type: nofile\n  soft: 0x10\n  hard: 20\n", "nofile=16:20",
                   "nofile=16:20", "derived: YAML 1.1 hex"},
        SampleCase{"Underscores", "- type: nofile\n  soft: 1_024\n  hard: 2048\n",
                   "nofile=1024:2048", "nofile=1024:2048", "derived: YAML 1.1 drops _ in integers"},
        SampleCase{"LongSKey", "- type: nofile\n  \xC5\xBFoft: 1\n  hard: 2\n", "nofile=1:2",
                   "nofile=1:2", "derived: encoding/json folds U+017F to s"},
        SampleCase{"QuotedNumber", "- type: nofile\n  soft: \"1024\"\n  hard: 4096\n", "refused",
                   "refused: soft: \"1024\" is not a number",
                   "derived: a JSON string is not a uint64 there"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
