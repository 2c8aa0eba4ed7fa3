#include "cli/audit/audit_prom.h"

#include <map>
#include <string_view>
#include <vector>

#include "core/version.h"
#include "formats/prom_text.h"

namespace ocirlimit {
namespace {

std::string StateOf(const AuditEntry& e) {
  return e.verdict.judged ? AuditStatusName(e.verdict.status) : "not_judged";
}

PromSample Sample(std::vector<std::pair<std::string, std::string>> labels, uint64_t n) {
  return PromSample{.labels = std::move(labels), .value = static_cast<double>(n)};
}

PromFamily Gauge(std::string name, std::string help, std::vector<PromSample> samples) {
  return PromFamily{.name = std::move(name),
                    .help = std::move(help),
                    .type = PromType::kGauge,
                    .samples = std::move(samples)};
}

struct Counts {
  std::map<std::string, uint64_t> by_state;
  // missing/over -> rlimit name -> containers with that limit missing/over
  std::map<std::string, std::map<std::string, uint64_t>> by_limit;
  std::map<std::string, std::map<std::string, uint64_t>> by_root;
  uint64_t attention = 0;
  uint64_t healed = 0;
};

Counts CountEntries(const AuditReport& r) {
  Counts c;
  for (const auto& e : r.entries) {
    const std::string state = StateOf(e);
    ++c.by_state[state];
    ++c.by_root[e.root][state];
    if (e.attention()) ++c.attention;
    if (e.heal && e.heal->ok() && !e.attention()) ++c.healed;
    for (const LimitAudit& l : e.verdict.limits) {
      const std::string name(l.want.info().name);
      c.by_limit["missing"][name] += l.status == AuditStatus::kMissing ? 1 : 0;
      c.by_limit["over"][name] += l.status == AuditStatus::kOver ? 1 : 0;
    }
  }
  return c;
}

std::vector<PromSample> PerRoot(const AuditReport& r, Counts& c) {
  std::vector<PromSample> out;
  for (const auto& root : r.roots) {
    for (const char* s : kAuditPromStates) {
      out.push_back(Sample({{"root", root}, {"state", s}}, c.by_root[root][s]));
    }
  }
  return out;
}

// Per rlimit type the policy gives: the containers missing it, and over it.
std::vector<PromSample> PerLimit(Counts& c) {
  std::vector<PromSample> out;
  for (const char* s : {"missing", "over"}) {
    for (const auto& [name, n] : c.by_limit[s]) {
      out.push_back(Sample({{"state", s}, {"rlimit", name}}, n));
    }
  }
  return out;
}

}  // namespace

std::string AuditPrometheus(const AuditReport& r, int64_t unix_now, const std::string& node,
                            const std::string& digest) {
  Counts c = CountEntries(r);
  std::vector<PromSample> states;
  for (const char* s : kAuditPromStates) states.push_back(Sample({{"state", s}}, c.by_state[s]));
  std::vector<PromSample> readable;
  for (const auto& root : r.roots) readable.push_back(Sample({{"root", root}}, 1));
  for (const auto& root : r.unreadable_roots) readable.push_back(Sample({{"root", root}}, 0));
  std::vector<PromFamily> f = {
      Gauge("oci_rlimit_audit_containers",
            "Running containers by audit verdict (ok, missing, over, refused, unknown; "
            "not_judged: pod sandboxes), as found before any --heal.",
            std::move(states)),
      Gauge("oci_rlimit_audit_root_containers", "The same verdict counts per runtime state root.",
            PerRoot(r, c)),
      Gauge("oci_rlimit_audit_attention_containers",
            "Containers that still need the admin (not ok, and not healed in full).",
            {Sample({}, c.attention)}),
      Gauge("oci_rlimit_audit_healed_containers", "Containers this run's --heal set in full.",
            {Sample({}, c.healed)}),
      Gauge("oci_rlimit_audit_root_readable", "1 for each state root read, 0 for one that was not.",
            std::move(readable)),
      Gauge("oci_rlimit_audit_limit_containers",
            "Containers missing (lower) or over (higher) each rlimit type the policy gives.",
            PerLimit(c)),
      Gauge("oci_rlimit_audit_out_of_scope_containers",
            "Containers the node's install does not govern (another RuntimeClass handler): not "
            "judged, not counted above.",
            {Sample({}, r.out_of_scope)}),
      Gauge("oci_rlimit_audit_last_run_timestamp_seconds", "Unix time this audit ran.",
            {PromSample{.labels = {}, .value = static_cast<double>(unix_now)}}),
      Gauge("oci_rlimit_build_info", "The program's version; always 1.",
            {Sample({{"program", "oci-rlimit"}, {"version", kVersion}}, 1)}),
      PolicyInfoFamily("oci-rlimit", digest),
  };
  AddLabelToAll(f, "node", node);
  return FormatPrometheus(f);
}

}  // namespace ocirlimit
