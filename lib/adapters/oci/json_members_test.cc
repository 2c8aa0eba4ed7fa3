// ParseJsonMembers: only the named members are built, each exactly as the
// whole DOM holds it, and the text is judged as ParseJsonObject judges it.
#include "adapters/oci/json_members.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/oci/facts.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

struct MembersCase {
  std::string name;
  std::string text;
  std::vector<JsonMember> members;
  std::string kept;  // dump() of what is built
};

class JsonMembersTable : public ::testing::TestWithParam<MembersCase> {};

TEST_P(JsonMembersTable, BuildsOnlyTheMembers) {
  auto j = ParseJsonMembers(GetParam().text, "F", GetParam().members);
  ASSERT_TRUE(j) << j.error().Text();
  EXPECT_EQ(j->dump(), GetParam().kept);
}

const std::vector<JsonMember> kSpecMembers = {
    {"annotations"}, {"process", "env"}, {"process", "rlimits"}, {"linux", "devices"}};

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonMembersTable,
    ::testing::Values(
        MembersCase{"TopLevel",
                    R"({"a":1,"b":{"c":[1,2]},"d":"x"})",
                    {{"b"}, {"d"}},
                    R"({"b":{"c":[1,2]},"d":"x"})"},
        MembersCase{"Nested",
                    R"({"process":{"args":["sh"],"env":["A=1"],"cwd":"/"},"mounts":[{"a":1}]})",
                    kSpecMembers, R"({"process":{"env":["A=1"]}})"},
        MembersCase{"KeptWholeWhateverItHolds",
                    R"({"annotations":{"x":{"process":{"env":1}},"y":[{"z":null}]}})", kSpecMembers,
                    R"({"annotations":{"x":{"process":{"env":1}},"y":[{"z":null}]}})"},
        // A key of the same name deeper down, in a dropped member, is not one.
        MembersCase{"SameNameElsewhere",
                    R"({"mounts":[{"process":{"env":["B=2"]}}],"root":{"annotations":{}}})",
                    kSpecMembers, "{}"},
        MembersCase{"LeadingMemberOfAnotherType", R"({"process":"x","linux":7})", kSpecMembers,
                    R"({"process":"x","linux":7})"},
        // An array where an object leads to a member is kept whole: the
        // readers refuse it as they would refuse the whole DOM's.
        MembersCase{"ArrayOnTheWay", R"({"process":[{"env":1,"cwd":"/"}]})", kSpecMembers,
                    R"({"process":[{"env":1,"cwd":"/"}]})"},
        MembersCase{"RepeatedKeyLastCounts", R"({"process":{"env":["A"]},"process":{"env":["B"]}})",
                    kSpecMembers, R"({"process":{"env":["B"]}})"},
        MembersCase{"RunLabels",
                    R"({"init_process_pid":5,"config":{"mounts":[],"labels":["bundle=/b"]},"x":1})",
                    {{"init_process_pid"}, {"config", "labels"}},
                    R"({"init_process_pid":5,"config":{"labels":["bundle=/b"]}})"},
        MembersCase{"EveryScalar",
                    R"({"k":[null,true,false,-1,18446744073709551615,1.5,"s"]})",
                    {{"k"}},
                    R"({"k":[null,true,false,-1,18446744073709551615,1.5,"s"]})"}),
    CaseName{});

struct BadCase {
  std::string name;
  std::string text;
  std::string error;  // exact
};

class JsonMembersBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(JsonMembersBad, RefusesAsTheWholeParseDoes) {
  auto j = ParseJsonMembers(GetParam().text, "F", kSpecMembers);
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().Text(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonMembersBad,
    ::testing::Values(
        BadCase{"Empty", "", "F: not valid JSON"},
        BadCase{"BadInADroppedMember", R"({"mounts":[1,}],"process":{}})", "F: not valid JSON"},
        BadCase{"Truncated", R"({"process":{"env":["A")", "F: not valid JSON"},
        BadCase{"TrailingText", R"({"a":1} x)", "F: not valid JSON"},
        BadCase{"Array", "[]", "F: must be a JSON object"},
        BadCase{"Number", "42", "F: must be a JSON object"},
        BadCase{"TooDeepInADroppedMember",
                R"({"mounts":)" + std::string(64, '[') + std::string(64, ']') + "}",
                "F: nested deeper than 64 levels"},
        BadCase{"TooDeepInAKeptMember",
                R"({"annotations":{"a":)" + std::string(63, '[') + std::string(63, ']') + "}}",
                "F: nested deeper than 64 levels"}),
    CaseName{});

TEST(JsonMembers, SixtyFourLevelsAreRead) {
  const std::string text = R"({"mounts":)" + std::string(63, '[') + std::string(63, ']') + "}";
  auto j = ParseJsonMembers(text, "F", kSpecMembers);
  ASSERT_TRUE(j) << j.error().Text();
  EXPECT_EQ(j->dump(), "{}");
}

// FactsFromSpecText gives what FactsFromSpec gives on the whole DOM, the
// errors' words included.
class FactsFromSpecTextTable : public ::testing::TestWithParam<BadCase> {};

TEST_P(FactsFromSpecTextTable, SameAsTheWholeDom) {
  const std::string& text = GetParam().text;
  auto lean = FactsFromSpecText(text, "F");
  auto dom = ParseJsonObject(text, "F");
  ASSERT_TRUE(dom) << dom.error().Text();
  auto whole = FactsFromSpec(*dom);
  ASSERT_EQ(lean.ok(), whole.ok());
  if (!whole) {
    EXPECT_EQ(lean.error().Text(), whole.error().Wrap("\"F\"").Text());
    EXPECT_EQ(lean.error().Text(), GetParam().error);
    return;
  }
  EXPECT_EQ(lean->annotations, whole->annotations);
  EXPECT_EQ(lean->env, whole->env);
  EXPECT_EQ(lean->devices, whole->devices);
  EXPECT_EQ(lean->spec_rlimits.size(), whole->spec_rlimits.size());
  EXPECT_EQ(lean->pod_namespace, whole->pod_namespace);
  EXPECT_EQ(lean->pod_name, whole->pod_name);
  EXPECT_EQ(lean->cdi_devices.size(), whole->cdi_devices.size());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FactsFromSpecTextTable,
    ::testing::Values(
        BadCase{"Full",
                R"({"ociVersion":"1.0.2","process":{"args":["sh"],"env":["PATH=/bin",)"
                R"("NVIDIA_VISIBLE_DEVICES=all"],"rlimits":[{"type":"RLIMIT_NOFILE","hard":9,)"
                R"("soft":8}]},"mounts":[{"destination":"/proc"}],"annotations":)"
                R"({"io.kubernetes.cri.sandbox-namespace":"ml","io.kubernetes.cri.sandbox-name":)"
                R"("p"},"linux":{"devices":[{"path":"/dev/nvidia0"}],"namespaces":[]}})",
                ""},
        BadCase{"Nothing", "{}", ""},
        BadCase{"ProcessNotAnObject", R"({"process":[1]})", "\"F\": process: must be an object"},
        BadCase{"RlimitWithoutType", R"({"process":{"rlimits":[{"soft":1,"hard":1}]}})",
                "\"F\": process.rlimits[0].type: missing or not a string"},
        BadCase{"AnnotationNotString", R"({"annotations":{"a":1}})",
                "\"F\": annotations.\"a\": not a string"},
        BadCase{"DevicesNotAnArray", R"({"linux":{"devices":{}}})",
                "\"F\": linux.devices: must be an array"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
