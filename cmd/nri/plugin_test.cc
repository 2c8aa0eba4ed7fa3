#include "nri/plugin.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "adapters/nri/facts.h"
#include "core/policy_digest.h"
#include "nri/output_fake_test.h"
#include "tests/testing/fake_decisions.h"

namespace ocirlimit::nri {
namespace {

struct Harness {
  explicit Harness(const std::string& toml) : cfg(MustParse(toml)) {}
  Config cfg;
  RecordingOutput out;
  NriPlugin plugin{[this]() -> const Config& { return cfg; }, out, [] { return "T"; }};
};

struct Pod {
  std::map<std::string, std::string> pod_annotations = {};
  std::map<std::string, std::string> annotations = {};
  std::vector<std::string> env = {};
  std::vector<std::string> devices = {};
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> spec_rlimits = {};
  std::string pod_namespace = "default";  // PodSandbox.namespace, as the runtime sends it
};

std::string CreateRequest(const Pod& p) {
  pb::CreateContainerRequest req;
  req.mutable_pod()->set_name("web");
  req.mutable_pod()->set_namespace_(p.pod_namespace);
  for (const auto& [k, v] : p.pod_annotations) (*req.mutable_pod()->mutable_annotations())[k] = v;
  pb::Container* c = req.mutable_container();
  c->set_id("c0ffee");
  c->set_name("app");
  for (const auto& [k, v] : p.annotations) (*c->mutable_annotations())[k] = v;
  for (const auto& e : p.env) c->add_env(e);
  for (const auto& d : p.devices) c->mutable_linux()->add_devices()->set_path(d);
  for (const auto& [type, v] : p.spec_rlimits) {
    auto* r = c->add_rlimits();
    r->set_type(type);
    r->set_soft(v.first);
    r->set_hard(v.second);
  }
  return req.SerializeAsString();
}

std::string Adjusted(const Reply& r) {
  pb::CreateContainerResponse resp;
  EXPECT_TRUE(resp.ParseFromString(r.payload));
  std::string out;
  for (const auto& l : resp.adjust().rlimits()) {
    out += (out.empty() ? "" : ",") + l.type() + "=" + FormatLimitValue(l.soft()) + ":" +
           FormatLimitValue(l.hard());
  }
  return out;
}

constexpr const char* kRules = R"(
rlimits = ["nofile=1024:4096"]
[[rule]]
name = "gpu"
rlimits = ["memlock=unlimited"]
match = { annotations = { "example.com/gpu" = "true" } }
[[rule]]
name = "rdma"
rlimits = ["memlock=64M"]
match = { devices = ["/dev/infiniband/*"] }
[requests]
enabled = true
ceilings = ["memlock=1G"]
)";

constexpr const char* kNamespaceRule = R"(
[[rule]]
name = "gpu"
rlimits = ["memlock=unlimited"]
match = { namespaces = ["gpu-*"] }
)";

struct CreateCase {
  std::string name;
  std::string toml;
  Pod pod;
  int32_t code;
  std::string adjusted;  // "RLIMIT_MEMLOCK=soft:hard,..." when code 0
  // The one log line in full (formats/log_line.h, as the wrapper and hook write
  // it), or "" for none.
  std::string log;
  std::string in_reply;  // part of the error reply when code != 0
};

// Test names, not hex dumps, when a case fails.
void PrintTo(const CreateCase& c, std::ostream* os) { *os << c.name; }

class CreateTable : public ::testing::TestWithParam<CreateCase> {};

TEST_P(CreateTable, AnswersWithTheVerdict) {
  const CreateCase& c = GetParam();
  Harness h(c.toml);
  Reply r = h.plugin.Call("CreateContainer", CreateRequest(c.pod));
  EXPECT_EQ(r.status.code, c.code) << r.status.message;
  if (c.code == 0) {
    EXPECT_EQ(Adjusted(r), c.adjusted);
    EXPECT_EQ(r.status.message, "");
  } else {
    EXPECT_TRUE(
        r.status.message.starts_with("oci-rlimit: container \"app\" of pod "
                                     "\"default/web\": "))
        << r.status.message;
    EXPECT_NE(r.status.message.find(c.in_reply), std::string::npos) << r.status.message;
    EXPECT_EQ(r.status.message.find('\n'), std::string::npos);
  }
  if (c.log.empty()) {
    EXPECT_EQ(h.out.lines.size(), 0u);
  } else {
    ASSERT_EQ(h.out.lines.size(), 1u);
    EXPECT_EQ(h.out.lines[0], c.log);
  }
}

constexpr const char* kClamped =
    R"(warning="annotation \"oci-rlimit.io/rlimits\" = \"memlock=unlimited\": )"
    R"(memlock=unlimited:unlimited is over the ceiling memlock=1073741824:1073741824; )"
    R"(clamped to memlock=1073741824:1073741824")";

INSTANTIATE_TEST_SUITE_P(
    Plugin, CreateTable,
    ::testing::Values(
        CreateCase{"NoConfigNoAdjustmentNoLog", "", {}, 0, "", "", ""},
        CreateCase{"TopLevelForEveryone",
                   "rlimits = ['memlock=unlimited']",
                   {},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set memlock=unreported->unlimited:unlimited)",
                   ""},
        CreateCase{"SameTypeSpecEntryShownAsBefore",
                   "rlimits = ['memlock=unlimited']",
                   {.spec_rlimits = {{"RLIMIT_MEMLOCK", {64 * 1024, 64 * 1024}}}},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set memlock=65536:65536->unlimited:unlimited)",
                   ""},
        CreateCase{"SpecEntryOfAnotherTypeLeavesBeforeUnreported",
                   "rlimits = ['memlock=unlimited', 'nofile=1024:4096']",
                   {.spec_rlimits = {{"RLIMIT_NOFILE", {512, 2048}}}},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited,RLIMIT_NOFILE=1024:4096",
                   R"(T id="c0ffee" via="nri" set memlock=unreported->unlimited:unlimited )"
                   R"(nofile=512:2048->1024:4096)",
                   ""},
        CreateCase{"UnknownSpecTypeIsNotABefore",
                   "rlimits = ['memlock=unlimited']",
                   {.spec_rlimits = {{"RLIMIT_BOGUS", {1, 1}}}},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set memlock=unreported->unlimited:unlimited)",
                   ""},
        CreateCase{"AnnotationRuleOnlyDefaultWithout",
                   kRules,
                   {},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096)",
                   ""},
        CreateCase{"AnnotationRuleMatchesPodAnnotation",
                   kRules,
                   {.pod_annotations = {{"example.com/gpu", "true"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                   R"(memlock=unreported->unlimited:unlimited)",
                   ""},
        CreateCase{"AnnotationRuleMatchesContainerAnnotation",
                   kRules,
                   {.annotations = {{"example.com/gpu", "true"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                   R"(memlock=unreported->unlimited:unlimited)",
                   ""},
        CreateCase{"AnnotationRuleWrongValue",
                   kRules,
                   {.pod_annotations = {{"example.com/gpu", "false"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096)",
                   ""},
        CreateCase{"DeviceRule",
                   kRules,
                   {.devices = {"/dev/infiniband/uverbs0"}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=67108864:67108864",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                   R"(memlock=unreported->67108864:67108864)",
                   ""},
        CreateCase{"DeviceRuleOtherDevice",
                   kRules,
                   {.devices = {"/dev/fuse"}},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096)",
                   ""},
        CreateCase{"RequestUnderCeiling",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=256M"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=268435456:268435456",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                   R"(memlock=unreported->268435456:268435456)",
                   ""},
        CreateCase{"RequestOverCeilingClamped",
                   kRules,
                   {.annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=1073741824:1073741824",
                   std::string(R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                               R"(memlock=unreported->1073741824:1073741824 )") +
                       kClamped,
                   ""},
        CreateCase{"RequestOverCeilingRejected",
                   std::string(kRules) + "over-ceiling = 'reject'\n",
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
                   9,
                   "",
                   R"(T id="c0ffee" via="nri" unchanged error="oci-rlimit: container \"app\" )"
                   R"(of pod \"default/web\": annotation \"oci-rlimit.io/rlimits\" = )"
                   R"(\"memlock=unlimited\": memlock=unlimited:unlimited is over the ceiling )"
                   R"x(memlock=1073741824:1073741824 (over-ceiling = \"reject\")")x",
                   "over the ceiling memlock=1073741824:1073741824 (over-ceiling = \"reject\")"},
        CreateCase{
            "RequestOverCeilingRejectedButWarn",
            std::string("on-error = 'warn'\n") + kRules + "over-ceiling = 'reject'\n",
            {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
            0,
            // The request's error, never the node's: the top-level limit stays.
            "RLIMIT_NOFILE=1024:4096",
            R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 warning="on-error = )"
            R"(\"warn\": the request is left out; the container gets the node's limits )"
            R"((top-level and rules) without it: annotation )"
            R"(\"oci-rlimit.io/rlimits\" = \"memlock=unlimited\": )"
            R"(memlock=unlimited:unlimited is over the ceiling memlock=1073741824:1073741824 )"
            R"x((over-ceiling = \"reject\")")x",
            ""},
        CreateCase{"MalformedRequest",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=lots"}}},
                   9,
                   "",
                   R"(T id="c0ffee" via="nri" unchanged error="oci-rlimit: container \"app\" )"
                   R"(of pod \"default/web\": annotation \"oci-rlimit.io/rlimits\" = )"
                   R"(\"memlock=lots\": rlimit \"memlock=lots\": soft value \"lots\" is not a )"
                   R"(decimal integer, \"unlimited\", \"infinity\" or \"-1\"")",
                   "annotation \"oci-rlimit.io/rlimits\" = \"memlock=lots\""},
        CreateCase{"NamespaceRuleMatchesThePodSandboxNamespace",
                   kNamespaceRule,
                   {.pod_namespace = "gpu-team"},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   R"(T id="c0ffee" via="nri" set memlock=unreported->unlimited:unlimited)",
                   ""},
        CreateCase{"NamespaceRuleOtherNamespace",
                   kNamespaceRule,
                   {.pod_namespace = "default"},
                   0,
                   "",
                   "",
                   ""},
        // NRI hands over every pod annotation; the namespace comes from the
        // PodSandbox field only, so neither runtime's key can forge it.
        CreateCase{"NamespaceRuleIgnoresForgedAnnotations",
                   kNamespaceRule,
                   {.pod_annotations = {{"io.kubernetes.cri.sandbox-namespace", "gpu-team"},
                                        {"io.kubernetes.pod.namespace", "gpu-team"}},
                    .annotations = {{"io.kubernetes.cri.sandbox-namespace", "gpu-team"}},
                    .pod_namespace = "default"},
                   0,
                   "",
                   "",
                   ""},
        CreateCase{"PodRuleMatchesThePodSandboxName",
                   "[[rule]]\nrlimits = ['memlock=1M']\nmatch = { pods = ['w*'] }\n",
                   {},
                   0,
                   "RLIMIT_MEMLOCK=1048576:1048576",
                   R"(T id="c0ffee" via="nri" set memlock=unreported->1048576:1048576)",
                   ""},
        CreateCase{"ContainerAnnotationBeatsPodAnnotation",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=lots"}},
                    .annotations = {{"oci-rlimit.io/rlimits", "memlock=2M"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=2097152:2097152",
                   R"(T id="c0ffee" via="nri" set nofile=unreported->1024:4096 )"
                   R"(memlock=unreported->2097152:2097152)",
                   ""}),
    [](const auto& info) { return info.param.name; });

TEST(Plugin, ConfigureSubscribesToCreateContainerOnly) {
  Harness h("");
  pb::ConfigureRequest req;
  req.set_runtime_name("containerd");
  req.set_runtime_version("2.1.9");
  Reply r = h.plugin.Call("Configure", req.SerializeAsString());
  ASSERT_EQ(r.status.code, 0);
  pb::ConfigureResponse resp;
  ASSERT_TRUE(resp.ParseFromString(r.payload));
  EXPECT_EQ(resp.events(), 0x8);
  EXPECT_TRUE(h.plugin.configured());
  EXPECT_EQ(h.out.said, std::vector<std::string>{
                            "configured by containerd 2.1.9; subscribed to CreateContainer"});
}

TEST(Plugin, SynchronizeAnswersMoreWithNoUpdates) {
  Harness h("rlimits = ['memlock=unlimited']");
  for (bool more : {true, false}) {
    pb::SynchronizeRequest req;
    req.set_more(more);
    req.add_containers()->set_id("old");
    Reply r = h.plugin.Call("Synchronize", req.SerializeAsString());
    ASSERT_EQ(r.status.code, 0);
    pb::SynchronizeResponse resp;
    ASSERT_TRUE(resp.ParseFromString(r.payload));
    EXPECT_EQ(resp.more(), more);
    EXPECT_EQ(resp.update_size(), 0);
  }
}

class Unimplemented : public ::testing::TestWithParam<std::string> {};

TEST_P(Unimplemented, Code12) {
  Harness h("rlimits = ['memlock=unlimited']");
  Reply r = h.plugin.Call(GetParam(), "");
  EXPECT_EQ(r.status.code, 12);
  EXPECT_NE(r.status.message.find(GetParam()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Plugin, Unimplemented,
                         ::testing::Values("Shutdown", "UpdateContainer", "StopContainer",
                                           "StateChange", "PostCreateContainer", ""),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("Empty") : info.param;
                         });

TEST(Plugin, UndecodableCreateContainerFailsClosedOrWarns) {
  for (const char* toml :
       {"rlimits = ['memlock=1M']", "on-error = 'warn'\nrlimits = ['memlock=1M']"}) {
    Harness h(toml);
    Reply r = h.plugin.Call("CreateContainer", "\x0a\xff");
    bool warn = h.cfg.on_error == OnError::kWarn;
    EXPECT_EQ(r.status.code, warn ? 0 : kCodeInvalidArgument);
    ASSERT_EQ(h.out.lines.size(), 1u);
    EXPECT_EQ(h.out.lines[0], R"(T id="" via="nri" unchanged )"
                              R"(error="oci-rlimit: cannot decode the CreateContainerRequest")");
  }
}

TEST(Plugin, UsesTheConfigInForceAtEachCall) {
  Harness h("rlimits = ['memlock=1M']");
  EXPECT_EQ(Adjusted(h.plugin.Call("CreateContainer", CreateRequest({}))),
            "RLIMIT_MEMLOCK=1048576:1048576");
  h.cfg = MustParse("rlimits = ['memlock=2M']");
  EXPECT_EQ(Adjusted(h.plugin.Call("CreateContainer", CreateRequest({}))),
            "RLIMIT_MEMLOCK=2097152:2097152");
}

TEST(Plugin, HostileIdStaysOneLogLine) {
  Harness h("rlimits = ['memlock=1M']");
  pb::CreateContainerRequest req;
  req.mutable_container()->set_id("a\nb\"c");
  (void)h.plugin.Call("CreateContainer", req.SerializeAsString());
  ASSERT_EQ(h.out.lines.size(), 1u);
  EXPECT_EQ(h.out.lines[0].find('\n'), std::string::npos);
  EXPECT_EQ(h.out.lines[0], R"(T id="a\nb\"c" via="nri" set memlock=unreported->1048576:1048576)");
}

// A 100 KB id, or a runtime name of 100 KB, makes no 100 KB line: cut as
// the hook and the wrapper cut it (formats/text.h), with the size said.
TEST(Plugin, HugeIdIsCutInTheLogLine) {
  Harness h("rlimits = ['memlock=1M']");
  pb::CreateContainerRequest req;
  req.mutable_container()->set_id(std::string(100000, 'x'));
  (void)h.plugin.Call("CreateContainer", req.SerializeAsString());
  ASSERT_EQ(h.out.lines.size(), 1u);
  const std::string& l = h.out.lines[0];
  EXPECT_LT(l.size(), 400u) << l;
  EXPECT_TRUE(
      l.ends_with("\u2026\" (100000 bytes) via=\"nri\" set "
                  "memlock=unreported->1048576:1048576"))
      << l;
}

TEST(Plugin, HugeRuntimeNameIsCutInItsMessage) {
  Harness h("");
  pb::ConfigureRequest req;
  req.set_runtime_name(std::string(100000, 'r') + "\n");
  req.set_runtime_version("2.1.9");
  ASSERT_EQ(h.plugin.Call("Configure", req.SerializeAsString()).status.code, 0);
  ASSERT_EQ(h.out.said.size(), 1u);
  const std::string& s = h.out.said[0];
  EXPECT_LT(s.size(), 400u) << s;
  EXPECT_EQ(s.find('\n'), std::string::npos) << s;
  EXPECT_NE(s.find("\u2026 (100001 bytes) 2.1.9; subscribed to CreateContainer"), std::string::npos)
      << s;
}

TEST(Plugin, RegisterPayloadCarriesNameAndIndex) {
  pb::RegisterPluginRequest r;
  ASSERT_TRUE(r.ParseFromString(NriPlugin::RegisterPayload("oci-rlimit", "10")));
  EXPECT_EQ(r.plugin_name(), "oci-rlimit");
  EXPECT_EQ(r.plugin_idx(), "10");
}

// Request sources (docs/policy.md, "Request sources"): the NRI sample's pod
// annotation for the container by name, and the spec's own entries as the
// runtime reports them (Container.rlimits), under the same ceilings.
constexpr const char* kSources = R"(
rlimits = ["memlock=64K"]
[requests]
enabled = true
ceilings = ["memlock=1G"]
sources = ["spec", "ulimit-adjuster", "oci-rlimit"]
)";

TEST(Plugin, SourcesTheNriSamplesPodAnnotationForThisContainer) {
  Harness h(kSources);
  Pod p;
  p.pod_annotations["ulimits.noderesource.dev/container.app"] =
      "- type: RLIMIT_MEMLOCK\n  soft: 1048576\n  hard: 4294967296\n";
  p.pod_annotations["ulimits.noderesource.dev/container.sidecar"] = "- nonsense";
  Reply r = h.plugin.Call("CreateContainer", CreateRequest(p));
  EXPECT_EQ(r.status.code, 0) << r.status.message;
  EXPECT_EQ(Adjusted(r), "RLIMIT_MEMLOCK=1048576:1073741824") << "hard clamped to the ceiling";
}

// The NRI sample reads its key from the pod's annotations only: a
// container's own annotation of that key asks nothing here either.
TEST(Plugin, SourcesTheNriSamplesKeyFromThePodOnly) {
  Harness h(kSources);
  Pod p;
  p.annotations["ulimits.noderesource.dev/container.app"] =
      "- type: RLIMIT_MEMLOCK\n  soft: 1048576\n  hard: 1048576\n";
  Reply r = h.plugin.Call("CreateContainer", CreateRequest(p));
  EXPECT_EQ(r.status.code, 0) << r.status.message;
  EXPECT_EQ(Adjusted(r), "RLIMIT_MEMLOCK=65536:65536")
      << "the container's annotation is no request";
}

TEST(Plugin, SourcesTheSpecsOwnEntryStandsOrIsClampedOrRefused) {
  Harness h(kSources);
  Pod under;
  under.spec_rlimits = {{"RLIMIT_MEMLOCK", {1 << 20, 1 << 20}}};
  EXPECT_EQ(Adjusted(h.plugin.Call("CreateContainer", CreateRequest(under))),
            "RLIMIT_MEMLOCK=1048576:1048576")
      << "the node's 64K gives way";
  Pod over;
  over.spec_rlimits = {{"RLIMIT_MEMLOCK", {kRlimInfinity, kRlimInfinity}}};
  EXPECT_EQ(Adjusted(h.plugin.Call("CreateContainer", CreateRequest(over))),
            "RLIMIT_MEMLOCK=1073741824:1073741824");
  Harness reject(std::string(kSources) + "over-ceiling = 'reject'\n");
  Reply r = reject.plugin.Call("CreateContainer", CreateRequest(over));
  EXPECT_NE(r.status.code, 0);
  EXPECT_NE(r.status.message.find("process.rlimits: memlock=unlimited:unlimited is over the "
                                  "ceiling"),
            std::string::npos)
      << r.status.message;
}

// One decision per container: what CreateContainer decided is recorded
// before the reply, and goes with the container at RemoveContainer.
TEST(PluginDecision, RecordsWhatTheContainerGetsAndForgetsItAtRemoval) {
  Harness h(kRules);
  testsupport::FakeDecisions decisions;
  h.plugin.SetDecisions(&decisions);
  pb::ConfigureResponse conf;
  ASSERT_TRUE(conf.ParseFromString(h.plugin.Call("Configure", "").payload));
  EXPECT_EQ(conf.events(), kEventMaskCreateContainer | kEventMaskRemoveContainer);
  Reply r = h.plugin.Call("CreateContainer",
                          CreateRequest({.pod_annotations = {{"example.com/gpu", "true"}}}));
  ASSERT_EQ(r.status.code, 0);
  ASSERT_TRUE(decisions.records.contains("c0ffee"));
  const DecisionRecord& d = decisions.records["c0ffee"];
  EXPECT_EQ(d.by, kDecidedByNri);
  EXPECT_EQ(d.policy, PolicyDigest(h.cfg));
  EXPECT_EQ(DecidedLimits(d.limits), "nofile=1024:4096 memlock=unlimited:unlimited");
  EXPECT_EQ(Adjusted(r), "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=unlimited:unlimited");

  pb::StateChangeEvent ev;
  ev.set_event(pb::REMOVE_CONTAINER);
  ev.mutable_container()->set_id("c0ffee");
  EXPECT_EQ(h.plugin.Call("StateChange", ev.SerializeAsString()).status.code, 0);
  EXPECT_FALSE(decisions.records.contains("c0ffee"));
}

TEST(PluginDecision, NothingDecidedIsRecordedAsNothing) {
  Harness h(kNamespaceRule);
  testsupport::FakeDecisions decisions;
  h.plugin.SetDecisions(&decisions);
  ASSERT_EQ(h.plugin.Call("CreateContainer", CreateRequest({})).status.code, 0);
  ASSERT_TRUE(decisions.records.contains("c0ffee"));
  EXPECT_TRUE(decisions.records["c0ffee"].limits.empty());
  EXPECT_TRUE(h.out.lines.empty()) << h.out.lines[0];
}

TEST(PluginDecision, ARecordNotWrittenIsSaidOnTheLineAndOnce) {
  Harness h(kRules);
  testsupport::FakeDecisions decisions;
  decisions.write_error = MakeError("decision record: make \"/run/oci-rlimit\"", EROFS);
  h.plugin.SetDecisions(&decisions);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(h.plugin.Call("CreateContainer", CreateRequest({})).status.code, 0);
  }
  ASSERT_EQ(h.out.lines.size(), 2u);
  EXPECT_NE(h.out.lines[1].find("no decision recorded (decision record: make"), std::string::npos)
      << h.out.lines[1];
  ASSERT_EQ(h.out.said.size(), 1u);
  EXPECT_NE(h.out.said[0].find("cannot record decisions"), std::string::npos) << h.out.said[0];
}

}  // namespace
}  // namespace ocirlimit::nri
