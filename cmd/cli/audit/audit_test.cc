// oci-rlimit audit over a fake node: discovery in the layouts containerd,
// docker, CRI-O, podman and crun leave under their state roots; the verdict
// per container (ok, missing, over, refused, unknown) and what --heal does;
// the JSON schema of docs/audit.md.
#include "cli/audit/audit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "cli/audit/audit_discover.h"
#include "cli/audit/audit_fake.h"
#include "core/policy_digest.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_decisions.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;

std::string Spec(const std::string& annotations = "{}") {
  return R"({"ociVersion":"1.0.2","process":{"env":["PATH=/bin"]},"annotations":)" + annotations +
         "}";
}

struct Layout {
  const char* name;
  std::string root;     // where the runtime keeps state for this container
  bool crun;            // a crun status file, else runc's state.json
  std::string pattern;  // the root pattern that finds it ("" = the defaults)
};

class Discover : public testing::TestWithParam<Layout> {};

TEST_P(Discover, FindsTheContainerItsInitAndItsBundle) {
  const Layout& l = GetParam();
  FakeNode node;
  const std::string dir = l.root + "/abc123";
  node.File(dir + "/" + std::string(l.crun ? "status" : "state.json"),
            l.crun ? FakeNode::CrunStatus(4242, 777, "/b/abc123")
                   : FakeNode::RuncState("abc123", 4242, 777, "/b/abc123"));
  node.File("/b/abc123/config.json", Spec(R"({"a":"1"})"));
  std::vector<std::string> patterns = DefaultStateRoots();
  if (!l.pattern.empty()) patterns.push_back(l.pattern);
  Discovery d = DiscoverContainers(node, patterns, true);
  ASSERT_EQ(d.containers.size(), 1u);
  const FoundContainer& c = d.containers[0];
  EXPECT_EQ(d.roots, (std::vector<std::string>{l.root}));
  EXPECT_EQ(c.root, l.root);
  EXPECT_EQ(c.id, "abc123");
  EXPECT_EQ(c.problem, "");
  ASSERT_TRUE(c.state);
  EXPECT_EQ(c.state->runtime, l.crun ? "crun" : "runc");
  EXPECT_EQ(c.state->pid, 4242);
  EXPECT_EQ(c.state->start_time, 777u);
  EXPECT_EQ(c.state->bundle, "/b/abc123");
  ASSERT_TRUE(c.facts);
  EXPECT_EQ(c.facts->annotations.at("a"), "1");
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, Discover,
    testing::Values(Layout{"ContainerdK8s", "/run/containerd/runc/k8s.io", false, ""},
                    Layout{"ContainerdMoby", "/run/containerd/runc/moby", false, ""},
                    Layout{"ContainerdDefaultNs", "/run/containerd/runc/default", false, ""},
                    Layout{"ContainerdCrunBinary", "/run/containerd/runc/k8s.io", true, ""},
                    Layout{"Docker", "/run/docker/runtime-runc/moby", false, ""},
                    Layout{"CrioRunc", "/run/runc", false, ""},
                    Layout{"CrioCrun", "/run/crun", true, ""},
                    Layout{"RootlessPodmanCrun", "/run/user/1000/crun", true, ""},
                    Layout{"RootlessPodmanRunc", "/run/user/1000/runc", false, ""},
                    Layout{"RuntimeRoot", "/var/lib/my-runtime", false, "/var/lib/my-runtime"},
                    Layout{"RuntimeRootTrailingSlash", "/var/lib/my-runtime", true,
                           "/var/lib/my-runtime/"}),
    CaseName{});

TEST(DiscoverTest, EveryNamespaceAndRootOnceInOrder) {
  FakeNode node;
  for (const char* root :
       {"/run/containerd/runc/moby", "/run/containerd/runc/k8s.io", "/run/runc"}) {
    node.File(std::string(root) + "/c/state.json", FakeNode::RuncState("c", 10, 1, "/b"));
  }
  node.File("/b/config.json", Spec());
  std::vector<std::string> patterns = DefaultStateRoots();
  patterns.push_back("/run/runc");  // given again: audited once
  Discovery d = DiscoverContainers(node, patterns, true);
  EXPECT_EQ(d.roots, (std::vector<std::string>{"/run/containerd/runc/k8s.io",
                                               "/run/containerd/runc/moby", "/run/runc"}));
  EXPECT_EQ(d.containers.size(), 3u);
}

struct Broken {
  const char* name;
  std::map<std::string, std::string> files;
  const char* problem;  // a substring
};

class DiscoverBroken : public testing::TestWithParam<Broken> {};

TEST_P(DiscoverBroken, SaysWhy) {
  FakeNode node;
  node.files = GetParam().files;
  Discovery d = DiscoverContainers(node, {"/r"}, true);
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_NE(d.containers[0].problem.find(GetParam().problem), std::string::npos)
      << d.containers[0].problem;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DiscoverBroken,
    testing::Values(
        Broken{"NoStateFile", {{"/r/c/other", "x"}}, "no runtime state"},
        Broken{"StateNotJson", {{"/r/c/state.json", "{"}}, "unreadable"},
        Broken{"StateNoPid", {{"/r/c/state.json", R"({"id":"c"})"}}, "no \"init_process_pid\""},
        Broken{"PidNotANumber", {{"/r/c/status", R"({"pid":"12"})"}}, "is not a PID"},
        Broken{"NoBundleRecorded",
               {{"/r/c/state.json", R"({"init_process_pid":5,"config":{"labels":[]}})"}},
               "no bundle: the runtime recorded none"},
        Broken{"BundleGone",
               {{"/r/c/state.json", FakeNode::RuncState("c", 5, 1, "/gone")}},
               "no bundle: open \"/gone/config.json\""},
        Broken{"CrunNoBundleNoCopy",
               {{"/r/c/status", R"({"pid":5,"process-start-time":1})"}},
               "no bundle: the runtime recorded none"},
        Broken{"BundleSpecBad",
               {{"/r/c/state.json", FakeNode::RuncState("c", 5, 1, "/b")},
                {"/b/config.json", R"({"annotations":[]})"}},
               "annotations: must be an object"}),
    CaseName{});

TEST(DiscoverTest, CrunStateCopyWhenTheBundleIsGone) {
  FakeNode node;
  node.File("/run/crun/c/status", FakeNode::CrunStatus(5, 1, "/gone"));
  node.File("/run/crun/c/config.json", Spec(R"({"from":"crun"})"));
  Discovery d = DiscoverContainers(node, {"/run/crun"}, true);
  ASSERT_EQ(d.containers.size(), 1u);
  ASSERT_TRUE(d.containers[0].facts) << d.containers[0].problem;
  EXPECT_EQ(d.containers[0].facts->annotations.at("from"), "crun");
}

// runc's state.json, else crun's status, is read at once: only the root is listed.
TEST(DiscoverTest, EachRuntimesStateIsReadWithoutListingItsDirectory) {
  FakeNode node;
  node.File("/r/a/state.json", FakeNode::RuncState("a", 5, 1, "/b"));
  node.File("/r/c/status", FakeNode::CrunStatus(6, 1, "/b"));
  node.File("/b/config.json", Spec());
  Discovery d = DiscoverContainers(node, {"/r"}, true);
  ASSERT_EQ(d.containers.size(), 2u);
  EXPECT_EQ(d.containers[0].state->runtime, "runc");
  EXPECT_EQ(d.containers[1].state->runtime, "crun");
  EXPECT_TRUE(d.containers[1].facts) << d.containers[1].problem;
  EXPECT_EQ(node.lists, 1);
}

TEST(DiscoverTest, NoSpecReadWhenThePolicyNeedsNone) {
  FakeNode node;
  node.File("/r/c/state.json", FakeNode::RuncState("c", 5, 1, "/gone"));
  Discovery d = DiscoverContainers(node, {"/r"}, false);
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_EQ(d.containers[0].problem, "");
  EXPECT_FALSE(d.containers[0].facts);
}

// --- the verdict per container, through RunAudit ---

constexpr const char* kPolicy = R"(rlimits = ["memlock=8M"]
[requests]
enabled = true
ceilings = ["memlock=16M"]
over-ceiling = "reject"
)";

struct Container {
  const char* name;
  std::string annotations;  // the spec's
  LimitPair memlock;        // what its init has
  uint64_t recorded_start = 100;
  bool alive = true;
  AuditStatus status;
  const char* why = "";       // a substring of why
  bool heal_applies = false;  // --heal sets memlock to `healed`
  LimitPair healed = {8 * kM, 8 * kM};
  bool attention_after = false;  // still needs attention after --heal
};

std::vector<Container> Containers() {
  return {
      {"Ok", "{}", {8 * kM, 8 * kM}, 100, true, AuditStatus::kOk},
      {"MissingSoft", "{}", {64 << 10, 8 * kM}, 100, true, AuditStatus::kMissing, "", true},
      {"Over", "{}", {32 * kM, 32 * kM}, 100, true, AuditStatus::kOver, "", true},
      {"RequestGranted",
       R"({"oci-rlimit.io/rlimits":"memlock=12M"})",
       {12 * kM, 12 * kM},
       100,
       true,
       AuditStatus::kOk},
      {"RefusedOverCeiling",
       R"({"oci-rlimit.io/rlimits":"memlock=64M"})",
       {64 * kM, 64 * kM},
       100,
       true,
       AuditStatus::kRefused,
       "ceiling",
       true,
       {8 * kM, 8 * kM},
       true},
      {"GoneInitExited",
       "{}",
       {64 << 10, 8 * kM},
       100,
       false,
       AuditStatus::kUnknown,
       "gone: pid 4242: no such process",
       false,
       {64 << 10, 8 * kM},
       true},
      {"PidReused",
       "{}",
       {64 << 10, 8 * kM},
       99,
       true,
       AuditStatus::kUnknown,
       "the PID was reused",
       false,
       {64 << 10, 8 * kM},
       true},
      // A pod sandbox (pause) below the top-level limits, as an NRI-only node
      // leaves it: not judged, never healed, no attention.
      {"SandboxBelowTopLevel",
       R"({"io.kubernetes.cri.container-type":"sandbox"})",
       {64 << 10, 64 << 10},
       100,
       true,
       AuditStatus::kOk,
       "pod sandbox (pause): runs no workload, not judged",
       false,
       {64 << 10, 64 << 10}},
      // Under containerd's root only containerd's key marks a sandbox: CRI-O's
      // key there is the pod author's, and the container is a workload.
      {"CrioKeyOnContainerdIsAWorkload",
       R"({"io.kubernetes.cri-o.ContainerType":"sandbox"})",
       {32 * kM, 32 * kM},
       100,
       true,
       AuditStatus::kOver,
       "",
       true},
      // Two keys that disagree make it a workload.
      {"DisagreeingKeysAreAWorkload",
       R"({"io.kubernetes.cri.container-type":"sandbox","io.kubernetes.cri-o.ContainerType":"container"})",
       {32 * kM, 32 * kM},
       100,
       true,
       AuditStatus::kOver,
       "",
       true},
      // The same state in a workload container is missing.
      {"WorkloadBelowTopLevel",
       R"({"io.kubernetes.cri.container-type":"container"})",
       {64 << 10, 8 * kM},
       100,
       true,
       AuditStatus::kMissing,
       "",
       true},
      // Raising a hard limit needs CAP_SYS_RESOURCE: the heal says it failed.
      {"MissingHardCannotRaise",
       "{}",
       {4 * kM, 4 * kM},
       100,
       true,
       AuditStatus::kMissing,
       "",
       false,
       {4 * kM, 4 * kM},
       true},
  };
}

class AuditRunTable : public testing::TestWithParam<Container> {
 protected:
  void SetUp() override {
    const Container& c = GetParam();
    node.File("/run/containerd/runc/k8s.io/c1/state.json",
              FakeNode::RuncState("c1", 4242, c.recorded_start, "/b/c1"));
    node.File("/b/c1/config.json", Spec(c.annotations));
    if (c.alive) node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, c.memlock}}};
    auto parsed = ParseConfig(kPolicy, "test.toml");
    ASSERT_TRUE(parsed) << parsed.error().Text();
    cfg = *parsed;
  }
  AuditReport Run(bool heal) {
    AuditRun run{cfg,
                 node,
                 node,
                 DefaultStateRoots(),
                 heal,
                 [this](const std::string& line) { log.push_back(line); },
                 [] { return std::string("2026-12-01T22:00:00Z"); }};
    return RunAudit(run);
  }
  FakeNode node;
  Config cfg;
  std::vector<std::string> log;
};

TEST_P(AuditRunTable, Audit) {
  const Container& c = GetParam();
  AuditReport r = Run(false);
  ASSERT_EQ(r.entries.size(), 1u);
  const AuditEntry& e = r.entries[0];
  EXPECT_STREQ(AuditStatusName(e.verdict.status), AuditStatusName(c.status)) << e.verdict.why;
  EXPECT_NE(e.verdict.why.find(c.why), std::string::npos) << e.verdict.why;
  EXPECT_EQ(r.ok(), c.status == AuditStatus::kOk);
  EXPECT_FALSE(e.heal);
  EXPECT_TRUE(node.set_pids.empty()) << "audit without --heal set a limit";
  EXPECT_TRUE(log.empty());
  const std::string text = AuditText(r);
  EXPECT_NE(text.find(std::string(AuditStatusName(c.status)) + " "), std::string::npos) << text;
  EXPECT_NE(text.find("c1"), std::string::npos) << text;
}

TEST_P(AuditRunTable, Heal) {
  const Container& c = GetParam();
  AuditReport r = Run(true);
  ASSERT_EQ(r.entries.size(), 1u);
  const AuditEntry& e = r.entries[0];
  EXPECT_EQ(e.attention(), c.attention_after);
  EXPECT_EQ(r.ok(), !c.attention_after);
  if (!c.alive) {
    EXPECT_TRUE(node.set_pids.empty());
    return;
  }
  EXPECT_EQ(node.procs[4242].limits[RLIMIT_MEMLOCK], c.heal_applies ? c.healed : c.memlock);
  if (c.status == AuditStatus::kOk || c.status == AuditStatus::kUnknown) {
    EXPECT_TRUE(node.set_pids.empty()) << "a prlimit reached pid 4242";
    EXPECT_FALSE(e.heal);
    EXPECT_TRUE(log.empty());
    return;
  }
  ASSERT_TRUE(e.heal);
  EXPECT_EQ(e.heal->ok(), c.heal_applies) << (e.heal->error ? e.heal->error->Text() : "");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0].starts_with("2026-12-01T22:00:00Z id=\"c1\" pid=4242 via=\"audit\""))
      << log[0];
  if (c.status == AuditStatus::kRefused) {
    EXPECT_NE(log[0].find("refused but running"), std::string::npos) << log[0];
  }
  if (!c.heal_applies) {
    EXPECT_NE(log[0].find("error="), std::string::npos) << log[0];
  }
  EXPECT_NE(AuditText(r).find("exec sessions started later"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Containers, AuditRunTable, testing::ValuesIn(Containers()), CaseName{});

// With only top-level limits (no rule, no request) the spec is still read:
// its annotations tell a pod sandbox, which is not judged, from a workload.
TEST(AuditTest, TopLevelOnlyPolicyLeavesSandboxesAlone) {
  FakeNode node;
  const std::string root = "/run/containerd/runc/k8s.io";
  node.File(root + "/pause/state.json", FakeNode::RuncState("pause", 4242, 100, "/b/pause"));
  node.File("/b/pause/config.json", Spec(R"({"io.kubernetes.cri.container-type":"sandbox"})"));
  node.File(root + "/work/state.json", FakeNode::RuncState("work", 4343, 100, "/b/work"));
  node.File("/b/work/config.json", Spec(R"({"io.kubernetes.cri.container-type":"container"})"));
  node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {64 << 10, 8 * kM}}}};
  node.procs[4343] = {100, 'S', {{RLIMIT_MEMLOCK, {64 << 10, 8 * kM}}}};
  auto cfg = ParseConfig("rlimits = [\"memlock=8M\"]\n", "test.toml");
  ASSERT_TRUE(cfg) << cfg.error().Text();
  ASSERT_FALSE(PolicyNeedsSpec(*cfg));
  for (bool heal : {false, true}) {
    SCOPED_TRACE(heal ? "--heal" : "audit");
    std::vector<std::string> log;
    AuditRun run{*cfg,   node,
                 node,   DefaultStateRoots(),
                 heal,   [&log](const std::string& line) { log.push_back(line); },
                 nullptr};
    AuditReport r = RunAudit(run);
    ASSERT_EQ(r.entries.size(), 2u);
    const AuditEntry& pause = r.entries[0];
    EXPECT_EQ(pause.id, "pause");
    EXPECT_EQ(pause.verdict.status, AuditStatus::kOk);
    EXPECT_FALSE(pause.verdict.judged);
    EXPECT_FALSE(pause.attention());
    EXPECT_FALSE(pause.heal);
    const AuditEntry& work = r.entries[1];
    EXPECT_EQ(work.verdict.status, AuditStatus::kMissing);
    EXPECT_TRUE(work.verdict.judged);
    EXPECT_EQ(r.ok(), heal);
    EXPECT_EQ(log.size(), heal ? 1u : 0u);
    EXPECT_EQ(AuditJson(r)["containers"][0]["judged"], false);
    EXPECT_NE(AuditText(r).find("ok       pause 4242     pod sandbox (pause)"), std::string::npos)
        << AuditText(r);
  }
  EXPECT_EQ(node.procs[4242].limits[RLIMIT_MEMLOCK], (LimitPair{64 << 10, 8 * kM}));
  EXPECT_EQ(node.procs[4343].limits[RLIMIT_MEMLOCK], (LimitPair{8 * kM, 8 * kM}));
  EXPECT_EQ(node.set_pids, (std::vector<pid_t>{4343}));
}

// As a user, root's 0700 state roots cannot be listed: said, and not ok.
class DeniedNode : public FakeNode {
 public:
  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    if (dir == "/run/runc") return MakeError("open directory /run/runc", EACCES);
    return FakeNode::ListDir(dir);
  }
};

TEST(AuditTest, AnUnreadableRootIsNotOk) {
  DeniedNode node;
  Config cfg;
  AuditRun run{cfg, node, node, DefaultStateRoots(), false, nullptr, nullptr};
  AuditReport r = RunAudit(run);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.unreadable_roots.size(), 1u);
  EXPECT_NE(r.unreadable_roots[0].find("Permission denied"), std::string::npos)
      << r.unreadable_roots[0];
  EXPECT_NE(AuditText(r).find("unreadable state root: open directory /run/runc"), std::string::npos)
      << AuditText(r);
  EXPECT_EQ(AuditJson(r)["unreadable_roots"].size(), 1u);
}

TEST(AuditTest, NoRootsNoContainersIsOk) {
  FakeNode node;
  Config cfg;
  AuditRun run{cfg, node, node, DefaultStateRoots(), false, nullptr, nullptr};
  AuditReport r = RunAudit(run);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(AuditText(r).find("no runtime state roots found"), std::string::npos);
}

// A refused request under a policy that gives nothing else: the row says
// why it is refused, not that the policy gives nothing.
TEST(AuditTest, ARefusedRowWithNoLimitsSaysWhy) {
  AuditReport r;
  r.roots = {"/run/runc"};
  AuditEntry e;
  e.root = "/run/runc";
  e.id = "c1";
  e.runtime = "runc";
  e.pid = 4242;
  e.verdict.status = AuditStatus::kRefused;
  e.verdict.why = "memlock=64M is over the ceiling 8M";
  r.entries.push_back(e);
  const std::string text = AuditText(r);
  EXPECT_NE(text.find("(refused: memlock=64M is over the ceiling 8M)"), std::string::npos) << text;
  EXPECT_EQ(text.find("the policy gives none"), std::string::npos) << text;
  r.entries[0].verdict.status = AuditStatus::kOk;
  EXPECT_NE(AuditText(r).find("(the policy gives none)"), std::string::npos);
}

// --- the JSON schema (docs/audit.md) ---

void ExpectType(const Json& j, const char* key, Json::value_t type, bool nullable = false) {
  ASSERT_TRUE(j.contains(key)) << key << " in " << j.dump();
  if (nullable && j[key].is_null()) return;
  EXPECT_EQ(j[key].type(), type) << key << " in " << j.dump();
}

TEST(AuditJsonTest, Schema) {
  FakeNode node;
  node.File("/run/runc/a/state.json", FakeNode::RuncState("a", 4242, 100, "/b"));
  node.File("/run/runc/b/state.json", FakeNode::RuncState("b", 4343, 100, "/b"));
  node.File("/b/config.json", Spec());
  node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {64 << 10, 8 * kM}}}};
  auto cfg = ParseConfig(kPolicy, "test.toml");
  ASSERT_TRUE(cfg);
  AuditRun run{*cfg, node, node, DefaultStateRoots(), true, nullptr, nullptr};
  Json j = AuditJson(RunAudit(run));
  EXPECT_EQ(j.size(), 9u) << j.dump();
  ExpectType(j, "notes", Json::value_t::array);
  ExpectType(j, "pruned", Json::value_t::array);
  ExpectType(j, "scope", Json::value_t::string);
  ExpectType(j, "out_of_scope", Json::value_t::number_unsigned);
  ExpectType(j, "namespace_dirs", Json::value_t::array);
  ExpectType(j, "unreadable_roots", Json::value_t::array);
  EXPECT_TRUE(j["unreadable_roots"].empty());
  ExpectType(j, "ok", Json::value_t::boolean);
  EXPECT_EQ(j["ok"], false);  // b is gone
  ExpectType(j, "roots", Json::value_t::array);
  EXPECT_EQ(j["roots"], Json::array({"/run/runc"}));
  ASSERT_EQ(j["containers"].size(), 2u);
  for (const Json& c : j["containers"]) {
    EXPECT_EQ(c.size(), 14u) << c.dump();
    ExpectType(c, "decision", Json::value_t::string);
    ExpectType(c, "root", Json::value_t::string);
    ExpectType(c, "id", Json::value_t::string);
    ExpectType(c, "runtime", Json::value_t::string, true);
    ExpectType(c, "pid", Json::value_t::number_integer, true);
    ExpectType(c, "status", Json::value_t::string);
    ExpectType(c, "why", Json::value_t::string, true);
    ExpectType(c, "judged", Json::value_t::boolean);
    ExpectType(c, "limits", Json::value_t::array);
    ExpectType(c, "matched", Json::value_t::array);
    ExpectType(c, "notes", Json::value_t::array);
    ExpectType(c, "requests", Json::value_t::array);
    ExpectType(c, "heal", Json::value_t::object, true);
    ExpectType(c, "attention", Json::value_t::boolean);
  }
  const Json& a = j["containers"][0];
  EXPECT_EQ(a["status"], "missing");
  EXPECT_EQ(a["attention"], false);
  EXPECT_TRUE(a["why"].is_null());
  EXPECT_EQ(a["judged"], true);
  ASSERT_EQ(a["limits"].size(), 1u);
  EXPECT_EQ(a["limits"][0], Json::parse(R"({"type":"RLIMIT_MEMLOCK","status":"missing",)"
                                        R"("want":{"soft":8388608,"hard":8388608},)"
                                        R"("have":{"soft":65536,"hard":8388608}})"));
  EXPECT_EQ(a["heal"], Json::parse(R"({"ok":true,"applied":[{"type":"RLIMIT_MEMLOCK",)"
                                   R"("before":{"soft":65536,"hard":8388608},)"
                                   R"("after":{"soft":8388608,"hard":8388608}}]})"));
  const Json& b = j["containers"][1];
  EXPECT_EQ(b["status"], "unknown");
  EXPECT_EQ(b["why"], "gone: pid 4343: no such process");
  EXPECT_TRUE(b["heal"].is_null());
  EXPECT_EQ(b["attention"], true);
}

// --- recorded decisions (docs/audit.md, "Recorded decisions") ---

class AuditDecisionTest : public testing::Test {
 protected:
  void SetUp() override {
    node.File("/run/runc/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/b"));
    node.File("/b/config.json", Spec());
    node.procs[4242] = {100, 'S', {{RLIMIT_MEMLOCK, {6 * kM, 8 * kM}}}};
  }
  AuditReport Run(bool heal = false, bool policy_now = false) {
    AuditRun run{cfg, node, node, DefaultStateRoots(), heal, nullptr, nullptr};
    run.decisions = &decisions;
    run.policy_now = policy_now;
    return RunAudit(run);
  }
  void Record(std::string policy) {
    decisions.records["c1"] = {.id = "c1",
                               .by = "nri",
                               .policy = std::move(policy),
                               .time = "T",
                               .limits = {{RLIMIT_MEMLOCK, 6 * kM, 8 * kM}}};
  }
  FakeNode node;
  Config cfg = *ParseConfig(kPolicy, "test.toml");  // memlock=8M now
  testsupport::FakeDecisions decisions;
};

TEST_F(AuditDecisionTest, JudgesAgainstTheRecordedDecision) {
  Record(PolicyDigest(cfg));
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kOk);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kRecorded);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(AuditJson(r)["containers"][0]["decision"], "recorded");
}

TEST_F(AuditDecisionTest, SaysADecisionUnderAnOlderPolicyAndKeepsIt) {
  Record("an-older-digest");
  AuditReport r = Run(true);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kOk);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kOlder);
  EXPECT_TRUE(node.set_pids.empty()) << "--heal keeps a recorded decision";
  EXPECT_NE(AuditText(r).find("decided under an older policy"), std::string::npos) << AuditText(r);
  EXPECT_EQ(AuditJson(r)["containers"][0]["decision"], "older-policy");
}

TEST_F(AuditDecisionTest, PolicyNowHealsToThePolicyNow) {
  Record("an-older-digest");
  AuditReport r = Run(true, true);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kPolicyNow);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kMissing);
  EXPECT_EQ(node.procs[4242].limits[RLIMIT_MEMLOCK], (LimitPair{8 * kM, 8 * kM}));
  EXPECT_NE(AuditText(r).find("judged by the policy now (--policy-now)"), std::string::npos)
      << AuditText(r);
}

TEST_F(AuditDecisionTest, WithoutARecordThePolicyNowJudgesAndItIsSaid) {
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kNone);
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kMissing);
  EXPECT_NE(AuditText(r).find("no recorded decision: judged by the policy now"), std::string::npos)
      << AuditText(r);
  EXPECT_EQ(AuditJson(r)["containers"][0]["decision"], "none");
}

TEST_F(AuditDecisionTest, AUsersContainerNeverTakesARootRecord) {
  node.files.clear();
  node.File("/run/user/1000/runc/c1/state.json", FakeNode::RuncState("c1", 4242, 100, "/u/b"));
  node.File("/u/b/config.json", Spec());
  for (const char* p : {"/run/user/1000/runc", "/run/user/1000/runc/c1",
                        "/run/user/1000/runc/c1/state.json", "/u/b", "/u/b/config.json"}) {
    node.owners[p] = 1000;
  }
  Record(PolicyDigest(cfg));
  decisions.records["c1"].limits = {{RLIMIT_MEMLOCK, kRlimInfinity, kRlimInfinity}};
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  // Root never judges a user's container (effects/container_proof.h), nor takes a record for it.
  EXPECT_EQ(r.entries[0].verdict.status, AuditStatus::kUnknown);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kNone);
  EXPECT_EQ(decisions.reads, 0);
}

// The records are listed once: a container without one costs no read.
TEST_F(AuditDecisionTest, OnlyAListedRecordIsRead) {
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kNone);
  EXPECT_EQ(decisions.reads, 0);
  Record(PolicyDigest(cfg));
  r = Run();
  EXPECT_EQ(r.entries[0].decision, DecisionState::kRecorded);
  EXPECT_EQ(decisions.reads, 1);
}

TEST_F(AuditDecisionTest, ARecordNotBelievedIsSaid) {
  Record(PolicyDigest(cfg));
  decisions.read_error = MakeError("is owned by uid 1000, not root: not trusted");
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kNone);
  const std::string notes = AuditJson(r)["containers"][0]["notes"].dump();
  EXPECT_NE(notes.find("decision record not believed: is owned by uid 1000"), std::string::npos)
      << notes;
}

// Where the directory cannot be listed, each container's record is read.
TEST_F(AuditDecisionTest, AnUnlistedDirectoryIsReadPerContainer) {
  Record(PolicyDigest(cfg));
  decisions.ids_error = MakeError("open directory /run/oci-rlimit/decisions", EACCES);
  AuditReport r = Run();
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].decision, DecisionState::kRecorded);
  EXPECT_EQ(decisions.reads, 1);
}

}  // namespace
}  // namespace ocirlimit
