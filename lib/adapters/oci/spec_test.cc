#include "adapters/oci/spec.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

// Shaped like `runc spec`, plus fields runc does not know and a 64-bit value
// that a double would round.
constexpr const char* kSpec = R"({
  "ociVersion": "1.0.2-dev",
  "x-vendor": {"z": 1, "a": [3, 2, 1]},
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/bin"],
    "cwd": "/",
    "rlimits": [
      {"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024},
      {"type": "RLIMIT_CORE", "soft": 0, "hard": 18446744073709551615, "x-note": "kept"}
    ],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "linux": {"resources": {"memory": {"limit": 9223372036854775807}}}
})";

Json Parse(const std::string& text) {
  auto j = ParseJsonObject(text, "test spec");
  EXPECT_TRUE(j.ok()) << j.error().Text();
  return j.ok() ? *j : Json();
}

TEST(ParseJsonObject, RefusesNonObjectsAndBadJson) {
  for (const char* text : {"", "[]", "\"x\"", "{", "{\"a\":1}x"}) {
    auto j = ParseJsonObject(text, "config.json");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_EQ(j.error().Text().rfind("config.json: ", 0), 0u) << j.error().Text();
  }
}

TEST(SpecRlimits, ReadsProcessRlimits) {
  auto r = SpecRlimits(Parse(kSpec));
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(*r, (std::vector<Rlimit>{{RLIMIT_NOFILE, 1024, 1024}, {RLIMIT_CORE, 0, kInf}}));
}

TEST(SpecRlimits, NoneWhenAbsentOrNull) {
  for (const char* text : {"{}", R"({"process":null})", R"({"process":{}})",
                           R"({"process":{"rlimits":null}})", R"({"process":{"rlimits":[]}})"}) {
    auto r = SpecRlimits(Parse(text));
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().Text();
    EXPECT_TRUE(r->empty()) << text;
  }
}

struct BadSpec {
  const char* name;
  std::string json;
  const char* message_part;
};

class SpecRlimitsBad : public ::testing::TestWithParam<BadSpec> {};

constexpr const char* kGood = R"({"type":"RLIMIT_NOFILE","soft":1,"hard":1})";

std::string WithEntry(const std::string& entry) {
  return std::string(R"({"ociVersion":"1.0.2","process":{"args":["sh"],"rlimits":[)") + kGood +
         "," + entry + "]}}";
}

TEST_P(SpecRlimitsBad, NamesTheFieldPath) {
  const BadSpec& c = GetParam();
  Json spec = Parse(c.json);
  auto r = SpecRlimits(spec);
  ASSERT_FALSE(r.ok()) << c.json;
  EXPECT_NE(r.error().Text().find(c.message_part), std::string::npos) << r.error().Text();
  EXPECT_EQ(r.error().Text().find('\n'), std::string::npos) << r.error().Text();

  // The merge validates first, so a bad spec is left exactly as it was.
  const std::string before = spec.dump();
  Status merged = MergeSpecRlimits(spec, {{RLIMIT_MEMLOCK, 1, 2}});
  ASSERT_FALSE(merged.ok()) << c.json;
  EXPECT_NE(merged.error().Text().find(c.message_part), std::string::npos) << merged.error().Text();
  EXPECT_EQ(spec.dump(), before);
  Status empty_merge = MergeSpecRlimits(spec, {});
  EXPECT_FALSE(empty_merge.ok()) << c.json;
  EXPECT_EQ(spec.dump(), before);
}

INSTANTIATE_TEST_SUITE_P(
    Spec, SpecRlimitsBad,
    ::testing::Values(
        BadSpec{"ProcessNotObject", R"({"process":[]})", "process: must be an object"},
        BadSpec{"ProcessString", R"({"process":"sh"})", "process: must be an object"},
        BadSpec{"RlimitsNotArray", R"({"process":{"rlimits":{"type":"RLIMIT_CORE"}}})",
                "process.rlimits: must be an array"},
        BadSpec{"EntryNotObject", R"({"process":{"rlimits":["RLIMIT_CORE"]}})",
                "process.rlimits[0]: must be an object"},
        BadSpec{"MissingType", WithEntry(R"({"soft":1,"hard":1})"),
                "process.rlimits[1].type: missing"},
        BadSpec{"NumericType", WithEntry(R"({"type":8,"soft":1,"hard":1})"),
                "process.rlimits[1].type"},
        BadSpec{"UnknownType", WithEntry(R"({"type":"RLIMIT_MEMLOK","soft":1,"hard":1})"),
                "process.rlimits[1].type: unknown rlimit \"RLIMIT_MEMLOK\""},
        BadSpec{"MissingSoft", WithEntry(R"({"type":"RLIMIT_CORE","hard":1})"),
                "process.rlimits[1].soft: missing"},
        BadSpec{"NegativeSoft", WithEntry(R"({"type":"RLIMIT_CORE","soft":-1,"hard":1})"),
                "process.rlimits[1].soft: -1 is not an unsigned integer"},
        BadSpec{"StringSoft", WithEntry(R"({"type":"RLIMIT_CORE","soft":"1","hard":1})"),
                "process.rlimits[1].soft: \"1\" is not an unsigned integer"},
        BadSpec{"FloatHard", WithEntry(R"({"type":"RLIMIT_CORE","soft":1,"hard":1.5})"),
                "process.rlimits[1].hard: 1.5 is not an unsigned integer"},
        BadSpec{"NegativeHard", WithEntry(R"({"type":"RLIMIT_CORE","soft":1,"hard":-2})"),
                "process.rlimits[1].hard: -2 is not an unsigned integer"},
        BadSpec{"NullHard", WithEntry(R"({"type":"RLIMIT_CORE","soft":1,"hard":null})"),
                "process.rlimits[1].hard: null is not an unsigned integer"}),
    [](const ::testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

TEST(MergeSpecRlimits, ReplacesInPlaceAppendsAndKeepsEverythingElse) {
  Json spec = Parse(kSpec);
  ASSERT_TRUE(MergeSpecRlimits(spec, {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 10, 20}}).ok());

  Json want = Parse(kSpec);
  want["process"]["rlimits"][0]["soft"] = 10;
  want["process"]["rlimits"][0]["hard"] = 20;
  want["process"]["rlimits"].push_back(
      Json{{"type", "RLIMIT_MEMLOCK"}, {"hard", kInf}, {"soft", kInf}});
  EXPECT_EQ(spec, want);

  // Key order and 64-bit values survive a dump and a parse, byte for byte.
  const std::string text = spec.dump();
  EXPECT_EQ(Parse(text).dump(), text);
  EXPECT_NE(text.find(R"("ociVersion":"1.0.2-dev","x-vendor":{"z":1,"a":[3,2,1]},"process")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"({"type":"RLIMIT_NOFILE","hard":20,"soft":10})"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"({"type":"RLIMIT_CORE","soft":0,"hard":18446744073709551615,)"
                      R"("x-note":"kept"})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("limit":9223372036854775807)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"type":"RLIMIT_MEMLOCK","hard":18446744073709551615,)"
                      R"("soft":18446744073709551615}],"noNewPrivileges":true})"),
            std::string::npos)
      << text;

  auto read_back = SpecRlimits(Parse(text));
  ASSERT_TRUE(read_back.ok()) << read_back.error().Text();
  EXPECT_EQ(*read_back,
            (std::vector<Rlimit>{
                {RLIMIT_NOFILE, 10, 20}, {RLIMIT_CORE, 0, kInf}, {RLIMIT_MEMLOCK, kInf, kInf}}));
}

struct MergeCase {
  const char* name;
  const char* spec;
  std::vector<Rlimit> limits;
  const char* want;
};

class MergeSpecRlimitsTable : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergeSpecRlimitsTable, MergesOnceAndIsIdempotent) {
  const MergeCase& c = GetParam();
  Json spec = Parse(c.spec);
  Status st = MergeSpecRlimits(spec, c.limits);
  ASSERT_TRUE(st.ok()) << st.error().Text();
  EXPECT_EQ(spec.dump(), c.want);
  st = MergeSpecRlimits(spec, c.limits);
  ASSERT_TRUE(st.ok()) << st.error().Text();
  EXPECT_EQ(spec.dump(), c.want) << "merging twice must equal merging once";
}

INSTANTIATE_TEST_SUITE_P(
    Spec, MergeSpecRlimitsTable,
    ::testing::Values(
        MergeCase{"EmptyListChangesNothing",
                  R"({"ociVersion":"1.0.2"})",
                  {},
                  R"({"ociVersion":"1.0.2"})"},
        MergeCase{"EmptyListKeepsNullProcess", R"({"process":null})", {}, R"({"process":null})"},
        MergeCase{"EmptyListKeepsExisting",
                  R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","hard":1,"soft":1}]}})",
                  {},
                  R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","hard":1,"soft":1}]}})"},
        MergeCase{"CreatesProcess",
                  R"({"ociVersion":"1.0.2"})",
                  {{RLIMIT_MEMLOCK, 1, 2}},
                  R"({"ociVersion":"1.0.2","process":{"rlimits":[)"
                  R"({"type":"RLIMIT_MEMLOCK","hard":2,"soft":1}]}})"},
        MergeCase{"CreatesRlimits",
                  R"({"process":{"args":["sh"]},"root":{}})",
                  {{RLIMIT_CORE, 0, 0}},
                  R"({"process":{"args":["sh"],"rlimits":[)"
                  R"({"type":"RLIMIT_CORE","hard":0,"soft":0}]},"root":{}})"},
        MergeCase{"NullRlimitsBecomesArray",
                  R"({"process":{"rlimits":null,"cwd":"/"}})",
                  {{RLIMIT_CORE, 0, 0}},
                  R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","hard":0,"soft":0}],)"
                  R"("cwd":"/"}})"},
        MergeCase{"OrderStable",
                  R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","soft":1,"hard":1},)"
                  R"({"type":"RLIMIT_CORE","soft":1,"hard":1}]}})",
                  {{RLIMIT_STACK, 5, 5}, {RLIMIT_CORE, 0, 0}, {RLIMIT_CPU, 7, 7}},
                  R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","soft":1,"hard":1},)"
                  R"({"type":"RLIMIT_CORE","soft":0,"hard":0},)"
                  R"({"type":"RLIMIT_STACK","hard":5,"soft":5},)"
                  R"({"type":"RLIMIT_CPU","hard":7,"soft":7}]}})"},
        MergeCase{"ReplacesEveryDuplicateOfAType",
                  R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","soft":1,"hard":1},)"
                  R"({"type":"RLIMIT_NOFILE","soft":2,"hard":2}]}})",
                  {{RLIMIT_NOFILE, 9, 9}},
                  R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","soft":9,"hard":9},)"
                  R"({"type":"RLIMIT_NOFILE","soft":9,"hard":9}]}})"}),
    [](const ::testing::TestParamInfo<MergeCase>& info) { return std::string(info.param.name); });

TEST(MergeProcessRlimits, WorksOnAnExecProcessObject) {
  Json process =
      Parse(R"({"args":["sh"],"rlimits":[{"type":"RLIMIT_MEMLOCK","soft":1,"hard":1}]})");
  Status st = MergeProcessRlimits(process, {{RLIMIT_MEMLOCK, 8 << 20, 8 << 20}}, "exec process");
  ASSERT_TRUE(st.ok()) << st.error().Text();
  EXPECT_EQ(
      process.dump(),
      R"({"args":["sh"],"rlimits":[{"type":"RLIMIT_MEMLOCK","soft":8388608,"hard":8388608}]})");
}

TEST(MergeProcessRlimits, ErrorsUseTheGivenPathAndChangeNothing) {
  Json process = Parse(R"({"rlimits":[{"type":"RLIMIT_CORE","soft":"x","hard":1}]})");
  const std::string before = process.dump();
  Status st = MergeProcessRlimits(process, {{RLIMIT_CORE, 0, 0}}, "exec process");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Text().find("exec process.rlimits[0].soft"), std::string::npos)
      << st.error().Text();
  EXPECT_EQ(process.dump(), before);

  Json not_object = Json::array();
  st = MergeProcessRlimits(not_object, {{RLIMIT_CORE, 0, 0}}, "exec process");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().Text(), "exec process: must be an object");
  EXPECT_EQ(not_object, Json::array());
}

TEST(MergeSpecRlimits, RefusesANonObjectSpec) {
  Json spec = Json::array();
  Status st = MergeSpecRlimits(spec, {{RLIMIT_CORE, 0, 0}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(spec, Json::array());
}

// ---- SpecRlimitsOnly: the hook's lean read gives what the full DOM gives ---

class SpecRlimitsOnlySame : public ::testing::TestWithParam<const char*> {};

TEST_P(SpecRlimitsOnlySame, AsTheFullDom) {
  const std::string text = GetParam();
  auto lean = SpecRlimitsOnly(text, "x");
  auto spec = ParseJsonObject(text, "x");
  auto dom = spec ? SpecRlimits(*spec) : Result<std::vector<Rlimit>>(spec.error());
  ASSERT_EQ(lean.ok(), dom.ok()) << text << ": "
                                 << (lean ? dom.error().Text() : lean.error().Text());
  if (lean.ok()) {
    EXPECT_EQ(*lean, *dom) << text;
  } else {
    EXPECT_EQ(lean.error().Text(), dom.error().Text()) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, SpecRlimitsOnlySame,
    ::testing::Values(
        kSpec, "{}", " { } ", R"({"process":null})", R"({"process":{}})",
        R"({"a":1,"process":{"args":["sh"]},"b":[]})", R"({"process":{"rlimits":null,"x":1}})",
        R"({"process":{"rlimits":[]}})",
        R"({"process":{"rlimits":[{"type":"RLIMIT_MEMLOCK","soft":5,"hard":6,"x":[{}]}]}})",
        R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":1,"hard":1},)"
        R"({"type":"RLIMIT_CORE","soft":2,"hard":2}]}})",
        R"({"\u0070rocess":{"rlim\u0069ts":[]}})", R"({"process":{"rlimits":{}}})",
        R"({"process":3})", R"({"process":"p"})", R"({"process":[]})",
        R"({"process":{"rlimits":[{"type":"RLIMIT_X","soft":1,"hard":1}]}})",
        R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":-1,"hard":0}]}})",
        "{\"s\":\"\\\"\\\\\\/"
        "\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\",\"u\":\"\xc3\xa9\xf0\x9f\x98\x80\"}",
        R"({"n":[0,-0,1.5,-2e10,3E+2,4e-1,18446744073709551615],"t":true,"f":false,"z":null})",
        "{\"d\":[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]}", "\xEF\xBB\xBF{\"process\":{}}",
        // Not JSON, or not an object.
        "", " ", "[]", "\"x\"", "3", "null", "{", "}", "{\"a\":1}x", "{\"a\":1,}", "{,}",
        "{\"a\" 1}", "{a:1}", "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":01}", "{\"a\":1.}",
        "{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"\x01\"}", "{\"a\":\"\xc0\xaf\"}",
        "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xff\"}",
        "{\"a\":\"\xe2\x82\"}", "{\"a\":\"open", "{\"a\":[}", "{\"a\":{]}",
        "{\"process\":{\"rlimits\":[}}"));

TEST(SpecRlimitsOnly, TheLastOfDuplicateKeysCounts) {
  auto r = SpecRlimitsOnly(R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":1,"hard":1}]},)"
                           R"("process":{"rlimits":[{"type":"RLIMIT_NOFILE","soft":2,"hard":2}]}})",
                           "x");
  ASSERT_TRUE(r.ok()) << r.error().Text();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0], (Rlimit{RLIMIT_NOFILE, 2, 2}));
}

// --- ParseJsonObjectForRunc: keys runc's Go decoder reads differently ---

struct RuncKeyCase {
  const char* name;
  RuncDocument root;
  std::string text;
  std::string error;  // empty: accepted
};

void PrintTo(const RuncKeyCase& c, std::ostream* os) { *os << c.name; }

class RuncKeys : public ::testing::TestWithParam<RuncKeyCase> {};

TEST_P(RuncKeys, RefusesCaseVariantsAndDuplicatesOfWhatWeEdit) {
  const RuncKeyCase& c = GetParam();
  auto j = ParseJsonObjectForRunc(c.text, "\"config.json\"", c.root);
  if (c.error.empty()) {
    ASSERT_TRUE(j.ok()) << j.error().Text();
    EXPECT_EQ(*j, Json::parse(c.text));
  } else {
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.error().Text(), "\"config.json\": " + c.error);
  }
}

constexpr RuncDocument kSpecDoc = RuncDocument::kSpec;
constexpr RuncDocument kProcessDoc = RuncDocument::kProcess;

INSTANTIATE_TEST_SUITE_P(
    Cases, RuncKeys,
    ::testing::Values(
        RuncKeyCase{"PlainSpec", kSpecDoc,
                    R"({"process":{"rlimits":[{"type":"RLIMIT_CORE","soft":1,"hard":2}]}})", ""},
        RuncKeyCase{
            "OtherKeysMayRepeatOrVaryInCase", kSpecDoc,
            R"({"Env":1,"env":2,"process":{"Args":[],"args":[]},"x":{"process":1,"PROCESS":2}})",
            ""},
        RuncKeyCase{"NestedUnderAnotherKeyIsNotOurs", kSpecDoc,
                    R"({"annotations":{"Process":"x","process":"y"},"x":[{"Type":1,"type":2}]})",
                    ""},
        RuncKeyCase{"ProcessCapitalised", kSpecDoc, R"({"Process":{}})",
                    "key \"Process\" in the spec differs only by case from \"process\": runc would "
                    "read it as \"process\" and we would not"},
        RuncKeyCase{"ProcessTwice", kSpecDoc, R"({"process":{},"process":{}})",
                    "key \"process\" appears twice in the spec: runc would read the last and we "
                    "might edit another"},
        RuncKeyCase{"RlimitsUpperCase", kSpecDoc, R"({"process":{"rlimits":[],"RLIMITS":[]}})",
                    "key \"RLIMITS\" in process differs only by case from \"rlimits\": runc would "
                    "read it as \"rlimits\" and we would not"},
        RuncKeyCase{"RlimitsTwice", kSpecDoc, R"({"process":{"rlimits":[],"rlimits":null}})",
                    "key \"rlimits\" appears twice in process: runc would read the last and we "
                    "might edit another"},
        RuncKeyCase{"EntryTypeCase", kSpecDoc,
                    R"({"process":{"rlimits":[{"Type":"RLIMIT_CORE","soft":1,"hard":1}]}})",
                    "key \"Type\" in process.rlimits[] differs only by case from \"type\": runc "
                    "would read it as \"type\" and we would not"},
        RuncKeyCase{"EntrySoftTwice", kSpecDoc,
                    R"({"process":{"rlimits":[{},{"type":"RLIMIT_CORE","soft":1,"soft":2}]}})",
                    "key \"soft\" appears twice in process.rlimits[]: runc would read the last and "
                    "we might edit another"},
        RuncKeyCase{"LongSOfGo", kSpecDoc,
                    "{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"\xc5\xbfoft\":1}]}}",
                    "key \"\xc5\xbfoft\" in process.rlimits[] differs only by case from \"soft\": "
                    "runc would read it as \"soft\" and we would not"},
        RuncKeyCase{"EscapedKeyIsTheSameKey", kSpecDoc, R"({"process":{},"\u0070rocess":{}})",
                    "key \"process\" appears twice in the spec: runc would read the last and we "
                    "might edit another"},
        RuncKeyCase{"ProcessFileRlimitsCase", kProcessDoc, R"({"args":["sh"],"rLimits":[]})",
                    "key \"rLimits\" in process differs only by case from \"rlimits\": runc would "
                    "read it as \"rlimits\" and we would not"},
        RuncKeyCase{"ProcessFileEntryHardCase", kProcessDoc,
                    R"({"rlimits":[{"type":"RLIMIT_CORE","soft":1,"HARD":1}]})",
                    "key \"HARD\" in process.rlimits[] differs only by case from \"hard\": runc "
                    "would read it as \"hard\" and we would not"},
        RuncKeyCase{"ProcessFileTopLevelProcessKeyIsNotOurs", kProcessDoc,
                    R"({"Process":1,"process":2})", ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ValueText, NeverDumpsAContainer) {
  EXPECT_EQ(ValueText(Json::parse("[1,[2,[3]]]")), "an array of 2 elements");
  EXPECT_EQ(ValueText(Json::parse(R"({"a":{"b":1}})")), "an object of 1 member");
  EXPECT_EQ(ValueText(Json::parse("-1")), "-1");
  EXPECT_EQ(ValueText(Json::parse("1.5")), "1.5");
  EXPECT_EQ(ValueText(Json::parse("null")), "null");
  EXPECT_EQ(ValueText(Json(std::string(300, 'x'))),
            "\"" + std::string(256, 'x') + "\u2026\" (300 bytes)");
}

}  // namespace
}  // namespace ocirlimit
