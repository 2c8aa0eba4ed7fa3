#include "nri/plugin.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "adapters/nri/facts.h"

namespace ocirlimit::nri {
namespace {

class RecordingOutput : public Output {
 public:
  void Say(const std::string& msg) override { said.push_back(msg); }
  void LogLine(const Config&, const std::string& line) override { lines.push_back(line); }
  std::vector<std::string> said;
  std::vector<std::string> lines;
};

Config MustParse(const std::string& toml) {
  auto c = ParseConfig(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

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
  std::string in_reply_or_log;
  size_t log_lines;
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
  } else {
    EXPECT_TRUE(
        r.status.message.starts_with("oci-rlimit: container \"app\" of pod "
                                     "\"default/web\": "))
        << r.status.message;
    EXPECT_EQ(r.status.message.find('\n'), std::string::npos);
  }
  ASSERT_EQ(h.out.lines.size(), c.log_lines);
  std::string all = r.status.message;
  for (const auto& l : h.out.lines) {
    EXPECT_TRUE(l.starts_with("T id=\"c0ffee\" pid=0 ")) << l;
    all += "\n" + l;
  }
  EXPECT_NE(all.find(c.in_reply_or_log), std::string::npos) << all;
}

INSTANTIATE_TEST_SUITE_P(
    Plugin, CreateTable,
    ::testing::Values(
        CreateCase{"NoConfigNoAdjustmentNoLog", "", {}, 0, "", "", 0},
        CreateCase{"TopLevelForEveryone",
                   "rlimits = ['memlock=unlimited']",
                   {},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   "memlock ?->unlimited:unlimited",
                   1},
        CreateCase{"SameTypeSpecEntryShownAsBefore",
                   "rlimits = ['memlock=unlimited']",
                   {.spec_rlimits = {{"RLIMIT_MEMLOCK", {64 * 1024, 64 * 1024}}}},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   "memlock 65536:65536->unlimited:unlimited",
                   1},
        CreateCase{"AnnotationRuleOnlyDefaultWithout",
                   kRules,
                   {},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   "nofile ?->1024:4096",
                   1},
        CreateCase{"AnnotationRuleMatchesPodAnnotation",
                   kRules,
                   {.pod_annotations = {{"example.com/gpu", "true"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=unlimited:unlimited",
                   "memlock",
                   1},
        CreateCase{"AnnotationRuleMatchesContainerAnnotation",
                   kRules,
                   {.annotations = {{"example.com/gpu", "true"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=unlimited:unlimited",
                   "memlock",
                   1},
        CreateCase{"AnnotationRuleWrongValue",
                   kRules,
                   {.pod_annotations = {{"example.com/gpu", "false"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   "nofile",
                   1},
        CreateCase{"DeviceRule",
                   kRules,
                   {.devices = {"/dev/infiniband/uverbs0"}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=67108864:67108864",
                   "memlock",
                   1},
        CreateCase{"DeviceRuleOtherDevice",
                   kRules,
                   {.devices = {"/dev/fuse"}},
                   0,
                   "RLIMIT_NOFILE=1024:4096",
                   "nofile",
                   1},
        CreateCase{"RequestUnderCeiling",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=256M"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=268435456:268435456",
                   "memlock",
                   1},
        CreateCase{"RequestOverCeilingClamped",
                   kRules,
                   {.annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=1073741824:1073741824",
                   "clamped",
                   1},
        CreateCase{"RequestOverCeilingRejected",
                   std::string(kRules) + "over-ceiling = 'reject'\n",
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
                   9,
                   "",
                   "over the ceiling memlock=1073741824:1073741824 (over-ceiling = \\\"reject\\\")",
                   1},
        CreateCase{"RequestOverCeilingRejectedButWarn",
                   std::string("on-error = 'warn'\n") + kRules + "over-ceiling = 'reject'\n",
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=unlimited"}}},
                   0,
                   "",
                   "the container starts without oci-rlimit's limits",
                   1},
        CreateCase{"MalformedRequest",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=lots"}}},
                   9,
                   "",
                   "annotation \"oci-rlimit.io/rlimits\" = \"memlock=lots\"",
                   1},
        CreateCase{"NamespaceRuleMatchesThePodSandboxNamespace",
                   kNamespaceRule,
                   {.pod_namespace = "gpu-team"},
                   0,
                   "RLIMIT_MEMLOCK=unlimited:unlimited",
                   "memlock ?->unlimited:unlimited",
                   1},
        CreateCase{"NamespaceRuleOtherNamespace",
                   kNamespaceRule,
                   {.pod_namespace = "default"},
                   0,
                   "",
                   "",
                   0},
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
                   0},
        CreateCase{"PodRuleMatchesThePodSandboxName",
                   "[[rule]]\nrlimits = ['memlock=1M']\nmatch = { pods = ['w*'] }\n",
                   {},
                   0,
                   "RLIMIT_MEMLOCK=1048576:1048576",
                   "memlock",
                   1},
        CreateCase{"ContainerAnnotationBeatsPodAnnotation",
                   kRules,
                   {.pod_annotations = {{"oci-rlimit.io/rlimits", "memlock=lots"}},
                    .annotations = {{"oci-rlimit.io/rlimits", "memlock=2M"}}},
                   0,
                   "RLIMIT_NOFILE=1024:4096,RLIMIT_MEMLOCK=2097152:2097152",
                   "memlock",
                   1}),
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
    EXPECT_NE(h.out.lines[0].find("cannot decode"), std::string::npos);
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
  EXPECT_NE(h.out.lines[0].find(R"(id="a\nb\"c")"), std::string::npos) << h.out.lines[0];
}

TEST(Plugin, RegisterPayloadCarriesNameAndIndex) {
  pb::RegisterPluginRequest r;
  ASSERT_TRUE(r.ParseFromString(NriPlugin::RegisterPayload("oci-rlimit", "10")));
  EXPECT_EQ(r.plugin_name(), "oci-rlimit");
  EXPECT_EQ(r.plugin_idx(), "10");
}

}  // namespace
}  // namespace ocirlimit::nri
