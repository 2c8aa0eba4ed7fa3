#include "cli/audit/audit_prom.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <sstream>
#include <string>

namespace ocirlimit {
namespace {

AuditEntry Entry(const std::string& root, AuditStatus s, bool judged = true) {
  AuditEntry e;
  e.root = root;
  e.id = "0123456789abcdef";
  e.verdict.status = s;
  e.verdict.judged = judged;
  return e;
}

void ExpectHas(const std::string& text, const std::string& line) {
  EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
}

// The policy audit judged by, as the plugin exports its own (docs/guides/fleet-policy.md).
TEST(AuditPrometheus, PolicyInfoCarriesTheDigestJudgedBy) {
  AuditReport r;
  const std::string t = AuditPrometheus(r, 1764912000, "gpu-1", "0123abcd");
  ExpectHas(
      t, "oci_rlimit_policy_info{program=\"oci-rlimit\",digest=\"0123abcd\",node=\"gpu-1\"} 1\n");
  EXPECT_EQ(AuditPrometheus(r, 1764912000, "gpu-1").find("oci_rlimit_policy_info{"),
            std::string::npos);
}

TEST(AuditPrometheus, CountsPerStateAndPerRootWithoutIds) {
  AuditReport r;
  r.roots = {"/run/containerd/runc/k8s.io", "/run/runc"};
  r.unreadable_roots = {"/run/crun"};
  r.entries = {Entry("/run/containerd/runc/k8s.io", AuditStatus::kOk),
               Entry("/run/containerd/runc/k8s.io", AuditStatus::kMissing),
               Entry("/run/containerd/runc/k8s.io", AuditStatus::kMissing),
               Entry("/run/containerd/runc/k8s.io", AuditStatus::kOk, false),
               Entry("/run/runc", AuditStatus::kRefused)};
  const std::string t = AuditPrometheus(r, 1764912000);
  ExpectHas(t, "# TYPE oci_rlimit_audit_containers gauge\n");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"ok\"} 1\n");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"missing\"} 2\n");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"refused\"} 1\n");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"over\"} 0\n");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"not_judged\"} 1\n");
  ExpectHas(t,
            "oci_rlimit_audit_root_containers{root=\"/run/containerd/runc/k8s.io\","
            "state=\"missing\"} 2\n");
  ExpectHas(t, "oci_rlimit_audit_root_containers{root=\"/run/runc\",state=\"refused\"} 1\n");
  ExpectHas(t, "oci_rlimit_audit_root_containers{root=\"/run/runc\",state=\"missing\"} 0\n");
  ExpectHas(t, "oci_rlimit_audit_attention_containers 3\n");
  ExpectHas(t, "oci_rlimit_audit_healed_containers 0\n");
  ExpectHas(t, "oci_rlimit_audit_root_readable{root=\"/run/runc\"} 1\n");
  ExpectHas(t, "oci_rlimit_audit_root_readable{root=\"/run/crun\"} 0\n");
  ExpectHas(t, "oci_rlimit_audit_last_run_timestamp_seconds 1764912000\n");
  ExpectHas(t, "oci_rlimit_build_info{program=\"oci-rlimit\",version=\"");
  EXPECT_EQ(t.find("0123456789abcdef"), std::string::npos) << "a container id became a label";
}

TEST(AuditPrometheus, AHealedContainerIsCountedAsFoundAndAsHealed) {
  AuditReport r;
  r.roots = {"/run/runc"};
  AuditEntry e = Entry("/run/runc", AuditStatus::kMissing);
  e.verdict.heal = {Rlimit{RLIMIT_MEMLOCK, 1, 2}};
  e.heal = HealOutcome{};
  e.heal->limits = e.verdict.heal;
  r.entries = {e};
  r.healing = true;
  const std::string t = AuditPrometheus(r, 0);
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"missing\"} 1\n");
  ExpectHas(t, "oci_rlimit_audit_attention_containers 0\n");
  ExpectHas(t, "oci_rlimit_audit_healed_containers 1\n");
}

TEST(AuditPrometheus, NoRootsStillHasEveryFamily) {
  const std::string t = AuditPrometheus(AuditReport{}, 0);
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"missing\"} 0\n");
  ExpectHas(t, "# TYPE oci_rlimit_audit_root_containers gauge\n");
  ExpectHas(t, "oci_rlimit_audit_attention_containers 0\n");
}

// The fleet's view (issue 38): every sample names the node; the limits
// missing and over by rlimit type; the containers out of the scope.
TEST(AuditPrometheus, NamesTheNodeCountsLimitsByTypeAndOutOfScope) {
  AuditReport r;
  r.roots = {"/run/runc"};
  r.out_of_scope = 7;
  AuditEntry e = Entry("/run/runc", AuditStatus::kMissing);
  e.verdict.limits = {
      LimitAudit{
          .want = Rlimit{RLIMIT_MEMLOCK, 8, 8}, .have = {1, 8}, .status = AuditStatus::kMissing},
      LimitAudit{.want = Rlimit{RLIMIT_NOFILE, 8, 8}, .have = {9, 9}, .status = AuditStatus::kOver},
      LimitAudit{.want = Rlimit{RLIMIT_STACK, 8, 8}, .have = {8, 8}, .status = AuditStatus::kOk}};
  AuditEntry f = Entry("/run/runc", AuditStatus::kMissing);
  f.verdict.limits = {e.verdict.limits[0]};
  r.entries = {e, f};
  const std::string t = AuditPrometheus(r, 0, "gpu-1");
  ExpectHas(t, "oci_rlimit_audit_containers{state=\"missing\",node=\"gpu-1\"} 2\n");
  ExpectHas(
      t,
      "oci_rlimit_audit_limit_containers{state=\"missing\",rlimit=\"memlock\",node=\"gpu-1\"} 2\n");
  ExpectHas(
      t, "oci_rlimit_audit_limit_containers{state=\"over\",rlimit=\"nofile\",node=\"gpu-1\"} 1\n");
  ExpectHas(
      t, "oci_rlimit_audit_limit_containers{state=\"over\",rlimit=\"memlock\",node=\"gpu-1\"} 0\n");
  ExpectHas(
      t,
      "oci_rlimit_audit_limit_containers{state=\"missing\",rlimit=\"stack\",node=\"gpu-1\"} 0\n");
  ExpectHas(t, "oci_rlimit_audit_out_of_scope_containers{node=\"gpu-1\"} 7\n");
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) {
    if (l[0] != '#') {
      EXPECT_NE(l.find("node=\"gpu-1\"}"), std::string::npos) << l;
    }
  }
}

}  // namespace
}  // namespace ocirlimit
