#include "cli/audit/audit.h"

#include <algorithm>
#include <set>
#include <utility>

#include "cli/audit/audit_prune.h"
#include "core/policy_digest.h"
#include "formats/log_line.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

// How many characters of an id the table shows, as docker ps and crictl do.
constexpr size_t kShortIdLength = 12;

std::string Pair(LimitPair p) { return FormatLimitValue(p.soft) + ":" + FormatLimitValue(p.hard); }

// Why a process could not be read, in the verdict's words.
std::string LookProblem(const ProcessLook& look) {
  const std::string text = look.error ? look.error->Text() : "?";
  if (look.failure == ApplyFailure::kTargetGone) return "gone: " + text;
  if (look.failure == ApplyFailure::kInvalidTarget) return "not a container process: " + text;
  return "unreadable: " + text;
}

bool Heals(const AuditVerdict& v) {
  return !v.heal.empty() && (v.status == AuditStatus::kMissing || v.status == AuditStatus::kOver ||
                             v.status == AuditStatus::kRefused);
}

void LogHeal(const AuditRun& run, const AuditEntry& e) {
  if (!run.log) return;
  LogRecord r;
  r.time = run.now ? run.now() : "";
  r.id = e.id;
  r.pid = e.pid;
  r.via = "audit";
  r.changes = e.heal->applied;
  if (e.verdict.status == AuditStatus::kRefused) {
    r.warnings.push_back("refused but running, healed to the node's limits: " + e.verdict.why);
  }
  for (const auto& n : e.verdict.notes) r.warnings.push_back(n);
  if (!e.heal->warning.empty()) r.warnings.push_back(e.heal->warning);
  if (e.heal->error) r.error = e.heal->error->Text();
  run.log(FormatLogLine(r));
}

// Whose sandbox mark counts, by the root the container was found under: the
// engine that keeps its containers there (docs/audit.md).
SandboxMarker MarkerOf(const std::string& root) {
  if (root.starts_with("/run/containerd/")) return SandboxMarker::kContainerd;
  if (root == "/run/runc" || root == "/run/crun") return SandboxMarker::kCrio;
  if (root.starts_with("/run/docker/") || root.starts_with("/run/user/")) {
    return SandboxMarker::kNone;
  }
  return SandboxMarker::kEither;
}

// Why the facts were judged without the node's: whose files they came from.
std::string Distrusted(const FoundContainer& c) {
  if (c.owner == 0)
    return "its bundle is not root's: judged without its devices, annotations or pod";
  return Cat("its state is uid ", std::to_string(c.owner),
             "'s: judged without its devices, annotations or pod, as that uid's own process");
}

// What one run judges every container by: the policy's digest, and the
// ids with a decision record, listed once (one directory read, not a failed
// open per container); nullopt where the directory cannot be listed: then
// every container's record is read, as before.
struct Judging {
  std::string digest;
  std::optional<std::set<std::string>> recorded;
};

// Against the decision recorded when the container was created (root's
// state only: a user could name a container after another's record), else,
// or with --policy-now, against the policy now.
AuditVerdict Judge(const AuditRun& run, const FoundContainer& c, const std::vector<Rlimit>& have,
                   const Judging& judging, DecisionState& state) {
  const std::string& digest = judging.digest;
  std::optional<DecisionRecord> recorded;
  std::string unbelieved;
  const bool listed = !judging.recorded || judging.recorded->count(c.id) != 0;
  if (run.decisions != nullptr && c.owner == 0 && c.facts_trusted && listed) {
    auto r = run.decisions->Read(c.id);
    if (r) recorded = *r;
    if (!r) unbelieved = r.error().Text();
  }
  if (recorded && !run.policy_now) {
    state = recorded->policy == digest ? DecisionState::kRecorded : DecisionState::kOlder;
    return CompareLimits(recorded->limits, have);
  }
  state = recorded ? DecisionState::kPolicyNow : DecisionState::kNone;
  AuditVerdict v = AuditContainer(run.cfg, c.facts.value_or(ContainerFacts{}), EntryPoint::kAudit,
                                  have, MarkerOf(c.root));
  if (!unbelieved.empty()) v.notes.push_back("decision record not believed: " + unbelieved);
  return v;
}

AuditEntry AuditOne(const AuditRun& run, const FoundContainer& c, const Judging& judging) {
  AuditEntry e;
  e.root = c.root;
  e.id = c.id;
  if (!c.state) {
    e.verdict = UnknownVerdict(c.problem);
    return e;
  }
  e.runtime = c.state->runtime;
  e.pid = c.state->pid;
  // Whose state named the process decides whether it proves anything
  // (effects/container_proof.h): a user's state proves nothing to root.
  const InitRecord record{c.owner, c.state->start_time, ""};
  ProcessLook look = LookAtProcess(run.ops, run.fs, c.state->pid, record);
  if (!look.ok()) {
    e.verdict = UnknownVerdict(LookProblem(look));
    return e;
  }
  if (!c.problem.empty()) {
    e.verdict = UnknownVerdict(c.problem);
    return e;
  }
  e.verdict = Judge(run, c, look.limits, judging, e.decision);
  if (!c.facts_trusted) e.verdict.notes.push_back(Distrusted(c));
  if (run.heal && Heals(e.verdict)) {
    e.heal = HealProcess(run.ops, run.fs, c.state->pid, record, e.verdict.heal, run.cfg.rootless);
    LogHeal(run, e);
  }
  return e;
}

ContainerOrigin Origin(const FoundContainer& c) {
  ContainerOrigin o{c.binary_name, c.runtime_handler, false};
  if (c.facts) {
    auto it = c.facts->annotations.find(std::string(kEnableAnnotation));
    o.enable_annotation = it != c.facts->annotations.end() && it->second == "true";
  }
  return o;
}

}  // namespace

const char* DecisionStateName(DecisionState s) {
  switch (s) {
    case DecisionState::kNone:
      return "none";
    case DecisionState::kRecorded:
      return "recorded";
    case DecisionState::kOlder:
      return "older-policy";
    case DecisionState::kPolicyNow:
      return "policy-now";
  }
  return "?";
}

bool AuditEntry::attention() const {
  if (verdict.status == AuditStatus::kOk) return false;
  if (verdict.status == AuditStatus::kMissing || verdict.status == AuditStatus::kOver) {
    return !(heal && heal->ok() && heal->limits == verdict.heal);
  }
  return true;
}

bool AuditReport::ok() const {
  if (!unreadable_roots.empty()) return false;
  for (const auto& e : entries) {
    if (e.attention()) return false;
  }
  return true;
}

AuditReport RunAudit(const AuditRun& run) {
  // The spec is read whenever the policy gives anything: beside the rules'
  // and requests' facts, its annotations say whether it is a pod sandbox.
  const bool need_facts = !run.cfg.rlimits.empty() || PolicyNeedsSpec(run.cfg);
  Discovery d = DiscoverContainers(run.fs, run.roots, need_facts, !run.scope.all);
  if (need_facts) AddContainerdPodAnnotations(run.fs, run.containerd_root, d);
  if (!run.scope.all) AddCrioPodHandlers(run.fs, run.crio_storage_root, d);
  Judging judging{PolicyDigest(run.cfg), std::nullopt};
  if (run.decisions != nullptr) {
    if (auto ids = run.decisions->Ids()) judging.recorded.emplace(ids->begin(), ids->end());
  }
  AuditReport r;
  r.healing = run.heal;
  r.decisions = run.decisions != nullptr;
  r.scope = run.scope.said;
  r.roots = std::move(d.roots);
  r.unreadable_roots = std::move(d.unreadable);
  r.namespace_dirs = std::move(d.namespace_dirs);
  r.notes = std::move(d.notes);
  for (const auto& c : d.containers) {
    // A container whose origin cannot be read (no state) is listed: unknown.
    if (c.state && !Governed(run.scope, Origin(c))) {
      ++r.out_of_scope;
      continue;
    }
    r.entries.push_back(AuditOne(run, c, judging));
  }
  return r;
}

namespace {

std::string LimitsText(const AuditVerdict& v) {
  if (v.status == AuditStatus::kUnknown || !v.judged) return v.why;
  // A refused request with nothing else given still says why it is refused.
  if (v.limits.empty()) {
    return v.status == AuditStatus::kRefused ? "(refused: " + v.why + ")"
                                             : "(the policy gives none)";
  }
  std::string out;
  for (const auto& l : v.limits) {
    if (!out.empty()) out += " ";
    out += Cat(l.want.info().name, " ", Pair(l.have));
    if (l.status != AuditStatus::kOk) out += Cat("->", Pair({l.want.soft, l.want.hard}));
  }
  if (v.status == AuditStatus::kRefused) out += "  (" + v.why + ")";
  return out;
}

// The line under a row judged otherwise than by its own decision under the
// policy now; empty for that.
std::string DecisionText(DecisionState s) {
  switch (s) {
    case DecisionState::kNone:
      return "no recorded decision: judged by the policy now";
    case DecisionState::kOlder:
      return "decided under an older policy: judged by that decision (--policy-now: by the "
             "policy now)";
    case DecisionState::kPolicyNow:
      return "judged by the policy now (--policy-now), not its recorded decision";
    case DecisionState::kRecorded:
      break;
  }
  return "";
}

std::string HealText(const HealOutcome& h) {
  if (!h.ok()) return "heal failed: " + h.error->Text();
  std::string out = "healed";
  if (!h.applied.empty()) out += ": " + FormatChanges(h.applied);
  if (!h.warning.empty()) out += " (" + h.warning + ")";
  return out;
}

}  // namespace

std::string AuditText(const AuditReport& r, bool no_trunc) {
  std::string out;
  if (!r.scope.empty()) out += "scope: " + r.scope + "\n";
  if (r.roots.empty()) out += "no runtime state roots found\n";
  for (const auto& u : r.unreadable_roots) out += "unreadable state root: " + OneLine(u) + "\n";
  for (const auto& n : r.namespace_dirs) {
    const std::string parent = n.substr(0, n.rfind('/'));
    out += OneLine(Cat("hint: ", n, " holds containers of a namespace, not a container: give ",
                       "--runtime-root ", n, " (or --runtime-root '", parent,
                       "/*', quoted, for every namespace)")) +
           "\n";
  }
  for (const auto& n : r.notes) out += "note: " + OneLine(n) + "\n";
  // Ids as docker and crictl show them, escaped (TableCell): a newline in an
  // id cannot forge a row. STATUS and ID padded to their widest.
  auto id_of = [no_trunc](const std::string& id) {
    const std::string cell = TableCell(id);
    return no_trunc ? cell : cell.substr(0, kShortIdLength);
  };
  size_t id_width = 2;
  for (const auto& e : r.entries) id_width = std::max(id_width, id_of(e.id).size());
  auto pad = [](std::string s, size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
  };
  if (!r.entries.empty()) {
    out += Cat(pad("STATUS", 8), " ", pad("ID", id_width), " ", pad("PID", 8),
               " LIMITS (have->policy) / WHY   ROOT\n");
  }
  for (const auto& e : r.entries) {
    out += Cat(pad(AuditStatusName(e.verdict.status), 8), " ", pad(id_of(e.id), id_width), " ",
               pad(e.pid > 0 ? std::to_string(e.pid) : "-", 8), " ", OneLine(LimitsText(e.verdict)),
               "   ", TableCell(e.root), "\n");
    for (const auto& q : e.verdict.requests) {
      out += Cat(pad("", 8), " judged against request ", OneLine(RequestRecordText(q)), "\n");
    }
    if (const std::string d = DecisionText(e.decision); r.decisions && !d.empty() &&
                                                        e.verdict.judged &&
                                                        e.verdict.status != AuditStatus::kUnknown) {
      out += Cat(pad("", 8), " ", d, "\n");
    }
    if (e.heal) out += Cat(pad("", 8), " ", OneLine(HealText(*e.heal)), "\n");
  }
  size_t attention = 0;
  for (const auto& e : r.entries) attention += e.attention() ? 1 : 0;
  out +=
      Cat(std::to_string(r.entries.size()), " container(s) under ", std::to_string(r.roots.size()),
          " root(s); ", std::to_string(attention), " need attention",
          r.out_of_scope == 0 ? std::string()
                              : Cat("; ", std::to_string(r.out_of_scope),
                                    " outside the scope, not judged (--all judges them)"),
          "\n");
  out += PruneText(r.pruned, r.prune_not_proven);
  if (r.healing) {
    out +=
        "note: --heal sets the init process only: exec sessions started later follow the "
        "spec's own process.rlimits, unless oci-rlimit-runtime applies the recorded decision "
        "or oci-rlimit-nri wrote them into the spec\n";
  }
  return out;
}

namespace {

Json LimitJson(const LimitAudit& l) {
  return Json{{"type", std::string(l.want.info().spec_type)},
              {"status", AuditStatusName(l.status)},
              {"want", Json{{"soft", l.want.soft}, {"hard", l.want.hard}}},
              {"have", Json{{"soft", l.have.soft}, {"hard", l.have.hard}}}};
}

Json HealJson(const HealOutcome& h) {
  Json applied = Json::array();
  for (const auto& c : h.applied) {
    applied.push_back(Json{{"type", std::string(FindRlimitByResource(c.resource)->spec_type)},
                           {"before", Json{{"soft", c.before.soft}, {"hard", c.before.hard}}},
                           {"after", Json{{"soft", c.after.soft}, {"hard", c.after.hard}}}});
  }
  Json j{{"ok", h.ok()}, {"applied", applied}};
  if (!h.warning.empty()) j["warning"] = h.warning;
  if (h.error) j["error"] = h.error->Text();
  return j;
}

}  // namespace

Json AuditJson(const AuditReport& r) {
  Json containers = Json::array();
  for (const auto& e : r.entries) {
    Json limits = Json::array();
    for (const auto& l : e.verdict.limits) limits.push_back(LimitJson(l));
    Json requests = Json::array();
    for (const auto& q : e.verdict.requests) requests.push_back(RequestRecordText(q));
    Json c{{"root", e.root},
           {"id", e.id},
           {"runtime", e.runtime.empty() ? Json() : Json(e.runtime)},
           {"pid", e.pid > 0 ? Json(e.pid) : Json()},
           {"status", AuditStatusName(e.verdict.status)},
           {"decision", DecisionStateName(e.decision)},
           {"why", e.verdict.why.empty() ? Json() : Json(e.verdict.why)},
           {"judged", e.verdict.judged},
           {"limits", limits},
           {"matched", e.verdict.matched},
           {"notes", e.verdict.notes},
           {"requests", requests},
           {"heal", e.heal ? HealJson(*e.heal) : Json()},
           {"attention", e.attention()}};
    containers.push_back(std::move(c));
  }
  return Json{{"ok", r.ok()},
              {"scope", r.scope},
              {"out_of_scope", r.out_of_scope},
              {"roots", r.roots},
              {"unreadable_roots", r.unreadable_roots},
              {"namespace_dirs", r.namespace_dirs},
              {"notes", r.notes},
              {"pruned", r.pruned},
              {"containers", containers}};
}

}  // namespace ocirlimit
