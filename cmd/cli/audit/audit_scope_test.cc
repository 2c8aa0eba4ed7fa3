// What audit judges, from the installer's record (audit_scope.h): the
// decision table, the facts read from a node, and RunAudit over a fake node
// where containerd's shim recorded each container's runtime binary and CRI-O
// names the handler only on the pod sandbox.
#include "cli/audit/audit_scope.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "cli/audit/audit.h"
#include "cli/audit/audit_fake.h"
#include "formats/nri_status.h"
#include "node/node_files.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;
const std::string kModePath = std::string(node::kStateDir) + "/mode.json";

std::string Mode(std::vector<std::string> runtimes) {
  node::NodeMode m;
  m.prefix = "/usr/local";
  m.runtimes = std::move(runtimes);
  return node::RenderMode(m);  // what the installer writes
}

struct ScopeCase {
  std::string name;
  std::map<std::string, std::string> files;  // on the node
  bool all_flag;
  bool all;          // the scope judges every container
  std::string said;  // part of the scope line
  // Of a wrapper container, a runc one, a CRI-O handler one, an annotated one:
  std::vector<bool> governed;
};

class ScopeTable : public ::testing::TestWithParam<ScopeCase> {};

TEST_P(ScopeTable, DecidesFromTheRecord) {
  const ScopeCase& c = GetParam();
  FakeNode node;
  for (const auto& [path, text] : c.files) node.File(path, text);
  node.procs[77].start = 500;  // a running oci-rlimit-nri
  const AuditScope s = DecideScope(ReadScopeFacts(node, c.all_flag));
  EXPECT_EQ(s.all, c.all);
  EXPECT_NE(s.said.find(c.said), std::string::npos) << s.said;
  const std::vector<ContainerOrigin> origins = {
      {"/usr/local/bin/oci-rlimit-runtime", "", false},
      {"/usr/sbin/runc", "", false},
      {"", "oci-rlimit", false},
      {"", "", true},
  };
  ASSERT_EQ(c.governed.size(), origins.size());
  for (size_t i = 0; i < origins.size(); ++i) {
    EXPECT_EQ(Governed(s, origins[i]), c.governed[i]) << i;
  }
}

const std::string kAlwaysHook = R"({"version":"1.0.0","hook":{"path":"/usr/bin/oci-rlimit-hook"},)"
                                R"("when":{"always":true},"stages":["createRuntime"]})";

INSTANTIATE_TEST_SUITE_P(
    Audit, ScopeTable,
    ::testing::Values(
        ScopeCase{
            "NoRecord", {}, false, true, "every container: no installer record", {1, 1, 1, 1}},
        ScopeCase{"ContainerdHandler",
                  {{kModePath, Mode({"containerd"})}},
                  false,
                  false,
                  "created through the RuntimeClass handler oci-rlimit",
                  {1, 0, 1, 0}},
        ScopeCase{"CrioHandlerAndHook",
                  {{kModePath, Mode({"containerd", "crio"})}},
                  false,
                  false,
                  "or annotated oci-rlimit.io/enable=true",
                  {1, 0, 1, 1}},
        ScopeCase{"AllFlag",
                  {{kModePath, Mode({"containerd"})}},
                  true,
                  true,
                  "every container (--all)",
                  {1, 1, 1, 1}},
        ScopeCase{"Nri",
                  {{kModePath, Mode({"containerd"})},
                   {std::string(kNriStatusPath), "healed=0\nwriter-pid=77\nwriter-start=500\n"}},
                  false,
                  true,
                  "oci-rlimit-nri governs them all",
                  {1, 1, 1, 1}},
        // issue 37: a file whose writer no longer runs is stale to doctor,
        // and audit takes no scope from it (effects/nri_trust.h).
        ScopeCase{"StaleNriStatus",
                  {{kModePath, Mode({"containerd"})},
                   {std::string(kNriStatusPath), "healed=0\nwriter-pid=78\nwriter-start=500\n"}},
                  false,
                  false,
                  "created through the RuntimeClass handler oci-rlimit",
                  {1, 0, 1, 0}},
        ScopeCase{"NriStatusOfAReusedPid",
                  {{kModePath, Mode({"containerd"})},
                   {std::string(kNriStatusPath), "healed=0\nwriter-pid=77\nwriter-start=499\n"}},
                  false,
                  false,
                  "created through the RuntimeClass handler oci-rlimit",
                  {1, 0, 1, 0}},
        ScopeCase{"NodeWideHook",
                  {{kModePath, Mode({"crio"})},
                   {"/etc/containers/oci/hooks.d/oci-rlimit.json", kAlwaysHook}},
                  false,
                  true,
                  "the hook runs for them all",
                  {1, 1, 1, 1}},
        ScopeCase{"UnreadableRecord",
                  {{kModePath, "{not json"}},
                  false,
                  true,
                  "no installer record (/var/lib/oci-rlimit/node-install/mode.json: ",
                  {1, 1, 1, 1}}),
    CaseName{});

// containerd with the installer's handler: one pod through oci-rlimit-runtime,
// one through plain runc (another user's, which never asked). Only the first
// is judged and healed; the second is counted outside the scope.
TEST(AuditScopeRun, OnlyTheHandlersContainersAreJudgedAndHealed) {
  FakeNode node;
  const std::string root = "/run/containerd/runc/k8s.io";
  const std::string task = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/";
  for (const auto& [id, pid, binary] :
       {std::tuple{"ours", 4242, "/usr/local/bin/oci-rlimit-runtime"},
        std::tuple{"theirs", 4343, "/usr/bin/runc"}}) {
    node.File(root + "/" + id + "/state.json", FakeNode::RuncState(id, pid, 100, task + id));
    node.File(task + id + "/config.json", R"({"process":{}})");
    node.File(task + id + "/options.json",
              std::string(R"({"binary_name":")") + binary + R"(","root":"/run/containerd/runc"})");
    node.procs[pid] = {100, 'S', {{RLIMIT_MEMLOCK, {64 << 10, 8 * kM}}}};
  }
  node.File(kModePath, Mode({"containerd"}));
  auto cfg = ParseConfig("rlimits = [\"memlock=8M\"]\n", "test.toml");
  ASSERT_TRUE(cfg);
  AuditRun run{*cfg, node,    node,    {root},
               true, nullptr, nullptr, DecideScope(ReadScopeFacts(node, false))};
  AuditReport r = RunAudit(run);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].id, "ours");
  EXPECT_EQ(r.out_of_scope, 1u);
  EXPECT_EQ(node.set_pids, std::vector<pid_t>{4242}) << "another user's container is not healed";
  EXPECT_EQ(node.procs[4343].limits[RLIMIT_MEMLOCK], (LimitPair{64 << 10, 8 * kM}));
  const std::string text = AuditText(r);
  EXPECT_EQ(text.rfind("scope: the containers created through the RuntimeClass handler", 0), 0u)
      << text;
  EXPECT_NE(text.find("1 outside the scope, not judged (--all judges them)"), std::string::npos)
      << text;

  run.scope = DecideScope(ReadScopeFacts(node, true));
  r = RunAudit(run);
  EXPECT_EQ(r.entries.size(), 2u) << "--all";
  EXPECT_EQ(r.out_of_scope, 0u);
}

// CRI-O: the container's config.json names its sandbox; only the sandbox's
// carries the handler, and the pod's annotations reach the container's facts
// from there, runtime-owned keys aside.
TEST(AuditScopeRun, CrioHandlerAndPodAnnotationsComeFromTheSandbox) {
  FakeNode node;
  const std::string root = "/run/runc";
  node.File(root + "/sb1/state.json", FakeNode::RuncState("sb1", 4242, 100, "/b/sb1"));
  node.File("/b/sb1/config.json",
            R"({"annotations":{"io.kubernetes.cri-o.RuntimeHandler":"oci-rlimit",)"
            R"("io.kubernetes.cri-o.ContainerType":"sandbox","example.com/pod":"yes"}})");
  node.File(root + "/c1/state.json", FakeNode::RuncState("c1", 4343, 100, "/b/c1"));
  node.File("/b/c1/config.json", R"({"annotations":{"io.kubernetes.cri-o.SandboxID":"sb1",)"
                                 R"("io.kubernetes.cri-o.ContainerType":"container"}})");
  node.File(root + "/c2/state.json", FakeNode::RuncState("c2", 4444, 100, "/b/c2"));
  node.File("/b/c2/config.json", R"({"annotations":{"io.kubernetes.cri-o.SandboxID":"nope"}})");
  Discovery d = DiscoverContainers(node, {root}, true, true);
  ASSERT_EQ(d.containers.size(), 3u);
  const FoundContainer& c1 = d.containers[0];
  ASSERT_EQ(c1.id, "c1");
  EXPECT_EQ(c1.runtime_handler, "oci-rlimit");
  ASSERT_TRUE(c1.facts);
  EXPECT_EQ(c1.facts->annotations.at("example.com/pod"), "yes");
  EXPECT_EQ(c1.facts->annotations.at("io.kubernetes.cri-o.ContainerType"), "container")
      << "runtime-owned keys stay the container's own";
  EXPECT_EQ(d.containers[1].id, "c2");
  EXPECT_EQ(d.containers[1].runtime_handler, "") << "a sandbox not under the same root";
  EXPECT_EQ(d.containers[2].runtime_handler, "oci-rlimit") << "the sandbox's own";
}

// CRI-O with drop_infra_ctr = true (issue 37): no sandbox state under any
// root; the handler comes from the sandbox's config.json in CRI-O's storage,
// where crio 1.31.13 keeps it, written by root only.
TEST(AuditScopeRun, CrioHandlerComesFromTheStorageWithoutSandboxState) {
  FakeNode node;
  const std::string root = "/run/crun";
  const std::string storage = "/var/lib/containers/storage";
  for (const char* id : {"c1", "c2"}) {
    node.File(root + "/" + id + "/state.json",
              FakeNode::RuncState(id, 4343, 100, std::string("/b/") + id));
  }
  node.File("/b/c1/config.json", R"({"annotations":{"io.kubernetes.cri-o.SandboxID":"sb1"}})");
  node.File("/b/c2/config.json", R"({"annotations":{"io.kubernetes.cri-o.SandboxID":"sb2"}})");
  node.File(storage + "/overlay-containers/sb1/userdata/config.json",
            R"({"annotations":{"io.kubernetes.cri-o.RuntimeHandler":"oci-rlimit"}})");
  node.File(storage + "/overlay-containers/sb2/userdata/config.json",
            R"({"annotations":{"io.kubernetes.cri-o.RuntimeHandler":"oci-rlimit"}})");
  node.owners[storage + "/overlay-containers/sb2/userdata/config.json"] = 1000;
  Discovery d = DiscoverContainers(node, {root}, true, true);
  ASSERT_EQ(d.containers.size(), 2u);
  EXPECT_EQ(d.containers[0].runtime_handler, "") << "no sandbox under the root";
  AddCrioPodHandlers(node, storage, d);
  EXPECT_EQ(d.containers[0].runtime_handler, "oci-rlimit");
  EXPECT_EQ(d.containers[1].runtime_handler, "") << "a user's file names no handler";
}

// Only the root is listed (a container's state file is read without listing
// its directory) and each file is read once; the sandbox two containers of
// one CRI-O pod share is read once per run.
TEST(AuditDiscover, ReadsEachFileOnceAndASharedSandboxOnce) {
  FakeNode node;
  const std::string root = "/run/crun";
  const std::string storage = "/var/lib/containers/storage";
  for (const char* id : {"c1", "c2"}) {
    node.File(root + "/" + id + "/state.json",
              FakeNode::RuncState(id, 4343, 100, std::string("/b/") + id));
    node.File(std::string("/b/") + id + "/config.json",
              R"({"annotations":{"io.kubernetes.cri-o.SandboxID":"sb1"}})");
  }
  node.File(storage + "/overlay-containers/sb1/userdata/config.json",
            R"({"annotations":{"io.kubernetes.cri-o.RuntimeHandler":"oci-rlimit"}})");
  Discovery d = DiscoverContainers(node, {root}, true);
  ASSERT_EQ(d.containers.size(), 2u);
  EXPECT_EQ(node.lists, 1) << "the root only";
  EXPECT_EQ(node.reads, 4) << "each state.json and config.json once";
  AddCrioPodHandlers(node, storage, d);
  EXPECT_EQ(d.containers[0].runtime_handler, "oci-rlimit");
  EXPECT_EQ(d.containers[1].runtime_handler, "oci-rlimit");
  EXPECT_EQ(node.reads, 5) << "the shared sandbox's config.json once";
}

// ctr's root holds a directory per namespace: a hint, not unknown containers.
TEST(AuditDiscover, NamespaceDirectoriesAreAHint) {
  FakeNode node;
  node.File("/run/containerd/runc/default/c1/state.json",
            FakeNode::RuncState("c1", 4242, 100, "/b"));
  Discovery d = DiscoverContainers(node, {"/run/containerd/runc"}, false);
  EXPECT_TRUE(d.containers.empty());
  EXPECT_EQ(d.namespace_dirs, std::vector<std::string>{"/run/containerd/runc/default"});
  AuditReport r;
  r.roots = d.roots;
  r.namespace_dirs = d.namespace_dirs;
  EXPECT_NE(AuditText(r).find("hint: /run/containerd/runc/default holds containers of a "
                              "namespace, not a container: give --runtime-root "
                              "/run/containerd/runc/default (or --runtime-root "
                              "'/run/containerd/runc/*', quoted, for every namespace)"),
            std::string::npos)
      << AuditText(r);
}

TEST(AuditText, ShortIdsUnlessNoTrunc) {
  AuditReport r;
  r.roots = {"/r"};
  AuditEntry e;
  e.root = "/r";
  e.id = std::string(64, 'a');
  e.verdict = UnknownVerdict("x");
  r.entries.push_back(e);
  const std::string short_text = AuditText(r);
  EXPECT_NE(short_text.find("unknown  aaaaaaaaaaaa -"), std::string::npos) << short_text;
  EXPECT_EQ(short_text.find(std::string(13, 'a')), std::string::npos) << short_text;
  EXPECT_NE(AuditText(r, true).find(std::string(64, 'a') + " -"), std::string::npos);
}

}  // namespace
}  // namespace ocirlimit
