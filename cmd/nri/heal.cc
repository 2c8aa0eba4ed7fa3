#include "nri/heal.h"

#include <cerrno>
#include <map>
#include <optional>

#include "core/audit.h"
#include "effects/apply.h"
#include "effects/heal.h"
#include "formats/log_line.h"
#include "formats/text.h"
#include "nri/decision/record.h"

namespace ocirlimit::nri {
namespace {

std::string Wanted(const std::vector<Rlimit>& limits) {
  std::string s;
  for (const auto& l : limits) s += (s.empty() ? "" : " ") + FormatRlimit(l);
  return s.empty() ? "nothing" : s;
}

bool Gone(int err) { return err == ESRCH || err == ENOENT; }

// Every limit at 0:0, to learn the policy's target without reading a process.
const std::vector<Rlimit>& Placeholders() {
  static const std::vector<Rlimit> all = [] {
    std::vector<Rlimit> v;
    for (const auto& info : AllRlimits()) v.push_back({info.resource, 0, 0});
    return v;
  }();
  return all;
}

std::string Refused(const AuditVerdict& v) {
  return std::string(kRefusedButRunning) + ": " + v.why +
         "; its init gets the node's limits without its request: " + Wanted(v.target);
}

}  // namespace

const char* HealResultName(HealResult r) {
  switch (r) {
    case HealResult::kHealed:
      return "healed";
    case HealResult::kOk:
      return "ok";
    case HealResult::kNothing:
      return "left alone";
    case HealResult::kNotRunning:
      return "not running";
    case HealResult::kGone:
      return "gone";
    case HealResult::kReused:
      return "PID reused";
    case HealResult::kCannot:
      return "cannot heal";
    case HealResult::kOutOfTime:
      return "out of time";
  }
  return "?";
}

// One container on its way through the heal.
struct Healer::One {
  const pb::Container& c;
  pid_t pid;
  ContainerFacts facts;
  LogRecord rec;
  std::optional<uint64_t> start_time = std::nullopt;  // from the runtime's state, when read there
  AuditVerdict given = {};  // its decision: the recorded one, else the policy's now
};

void Healer::Connected(const std::string& time, Output& out) {
  pending_.Clear();
  const HealOps::Self me = ops_.Writer();
  status_.writer_pid = me.pid;
  status_.writer_start = me.start;
  status_.connected = time;
  status_.synchronized.clear();
  status_.containers = status_.healed = status_.unhealed = status_.refused = 0;
  SaveStatus(out);
}

void Healer::Synchronize(const Config& cfg, const pb::SynchronizeRequest& req, Output& out,
                         const std::function<std::string()>& now) {
  pending_.MergeFrom(req);
  if (req.more()) return;
  const int64_t start = ops_.MonotonicMs();
  std::map<std::string, const pb::PodSandbox*> pods;
  for (const auto& p : pending_.pods()) pods[p.id()] = &p;
  last_ = HealCounts{};
  for (const auto& c : pending_.containers()) {
    ++last_.containers;
    HealResult r = HealResult::kOutOfTime;
    if (ops_.MonotonicMs() - start < opt_.budget_ms) {
      auto pod = pods.find(c.pod_sandbox_id());
      r = HealOne(cfg, pod == pods.end() ? nullptr : pod->second, c, out, now());
    }
    ++last_.by.at(static_cast<size_t>(r));
  }
  if (decisions_ != nullptr) {
    PruneUnlisted(*decisions_, pending_, ParseRfc3339Utc(now()).value_or(0));
  }
  pending_.Clear();
  status_.synchronized = now();
  status_.containers = last_.containers;
  status_.healed = last_.of(HealResult::kHealed);
  status_.unhealed = last_.of(HealResult::kCannot) + last_.of(HealResult::kOutOfTime);
  status_.healed_total += status_.healed;
  status_.refused = last_.refused;
  status_.report_only = !ops_.InHostPidNamespace();
  Summarize(out, ops_.MonotonicMs() - start);
  SaveStatus(out);
}

HealResult Healer::HealOne(const Config& cfg, const pb::PodSandbox* pod, const pb::Container& c,
                           Output& out, const std::string& time) {
  // CRI-O gives pid 0 for every container: a running one is found through
  // its runtime's state below (FindInit); others have no init to heal.
  if (c.state() == pb::CONTAINER_STOPPED) return HealResult::kNotRunning;
  if (c.pid() == 0 && c.state() != pb::CONTAINER_RUNNING) return HealResult::kNotRunning;
  pb::CreateContainerRequest as;
  if (pod != nullptr) *as.mutable_pod() = *pod;
  *as.mutable_container() = c;
  One one{c, static_cast<pid_t>(c.pid()), FactsFromCreate(as).facts, {}};
  one.rec.time = time;
  const AuditVerdict& given = one.given = Decided(cfg, one);
  if (given.target.empty() && given.status != AuditStatus::kRefused) return HealResult::kNothing;
  if (given.status == AuditStatus::kRefused) ++last_.refused;
  one.rec.id = c.id();
  one.rec.pid = one.pid;
  one.rec.via = std::string(kHealVia);
  if (!ops_.InHostPidNamespace()) {
    if (!said_report_only_) {
      out.Say(
          "not in the host's PID namespace (a DaemonSet needs hostPID: true): it can only "
          "report the containers it would heal, in the log");
      said_report_only_ = true;
    }
    if (given.status == AuditStatus::kRefused) one.rec.warnings.push_back(Refused(given));
    one.rec.error = "not checked (no host PID namespace); the policy gives " + Wanted(given.target);
    out.LogLine(cfg, FormatLogLine(one.rec));
    return HealResult::kCannot;
  }
  if (one.pid == 0 && !FindInit(one)) {
    out.LogLine(cfg, FormatLogLine(one.rec));
    return HealResult::kCannot;
  }
  return Apply(cfg, one, out);
}

// NRI named no PID (CRI-O): the runtime's own state, root's only, names the
// init and its start time; Apply then proves it by the cgroup and the start
// time. False, with the log record's error set, when it cannot.
bool Healer::FindInit(One& one) {
  auto state = ops_.InitFromRuntimeState(one.c.id());
  if (!state || state->pid <= 0) {
    one.rec.error = "cannot heal: NRI gives no PID (CRI-O) and " +
                    (state ? std::string("its runtime state records none")
                           : "no runtime state of root's names it: " + state.error().Text());
    return false;
  }
  one.pid = state->pid;
  one.start_time = state->start_time;
  one.rec.pid = one.pid;
  return true;
}

// The engine names the init and the cgroup it made for the container
// (linux.cgroups_path; CRI-O's init also by its runtime state's start
// time): the one proof (effects/container_proof.h) holds it to them, pinned
// for the whole look and heal, and a last liveness check proves the process
// healed is the one checked.
HealResult Healer::Apply(const Config& cfg, One& one, Output& out) {
  auto report = [&](HealResult r, const std::string& error) {
    one.rec.error = error;
    out.LogLine(cfg, FormatLogLine(one.rec));
    return r;
  };
  PinnedProcess pin(ops_.process(), one.pid);
  if (const auto& f = pin.failure()) {
    if (f->failure == ApplyFailure::kTargetGone) return HealResult::kGone;
    return report(HealResult::kCannot, "cannot heal: " + f->error.Text());
  }
  const InitRecord record{0, one.start_time,
                          ResolveCgroupsPath(one.c.linux().cgroups_path()).value_or("")};
  const ProcessLook look = LookAtProcess(ops_.process(), ops_.fs(), one.pid, record);
  if (!look.ok()) {
    if (look.failure == ApplyFailure::kTargetGone || Gone(look.error->err)) {
      return HealResult::kGone;
    }
    if (look.failure == ApplyFailure::kInvalidTarget) {
      return report(HealResult::kReused, "not proven this container's init: " + look.error->Text());
    }
    return report(HealResult::kCannot, "cannot heal: " + look.error->Text());
  }
  const AuditVerdict v = CompareLimits(one.given.target, look.limits);
  if (v.status == AuditStatus::kUnknown)
    return report(HealResult::kCannot, "cannot heal: " + v.why);
  const bool refused = one.given.status == AuditStatus::kRefused;
  if (refused) one.rec.warnings.push_back(Refused(one.given));
  for (const auto& n : one.given.notes) one.rec.warnings.push_back(n);
  if (v.heal.empty()) {
    if (refused) out.LogLine(cfg, FormatLogLine(one.rec));
    return HealResult::kOk;
  }
  const HealOutcome done =
      HealProcess(ops_.process(), ops_.fs(), one.pid, record, v.heal, cfg.rootless);
  if (pin.CheckAlive("while its limits were set")) return HealResult::kGone;
  one.rec.changes = done.applied;
  if (!done.warning.empty()) one.rec.warnings.push_back(done.warning);
  if (!done.ok()) {
    if (done.failure == ApplyFailure::kTargetGone) return HealResult::kGone;
    if (done.failure == ApplyFailure::kPermission && !said_cannot_) {
      out.Say(
          "cannot set the limits of some containers' init processes (it needs CAP_SYS_RESOURCE "
          "for a hard raise or another uid's process): it reports them in the log");
      said_cannot_ = true;
    }
    return report(HealResult::kCannot,
                  "cannot heal to " + Wanted(v.heal) + ": " + done.error->Text());
  }
  out.LogLine(cfg, FormatLogLine(one.rec));
  return HealResult::kHealed;
}

// The limits this container was given: its record's, else the policy's
// now (compared with placeholder limits, so that its target and a refusal
// show), then recorded. No sandbox mark: Synchronize lists no sandboxes, so
// a container that carries one is a workload claiming it (docs/nri.md).
AuditVerdict Healer::Decided(const Config& cfg, One& one) {
  return GivenAtCreate(
      decisions_, cfg, one.c.id(), one.rec.time,
      AuditContainer(cfg, one.facts, EntryPoint::kNri, Placeholders(), SandboxMarker::kNone),
      ops_.InHostPidNamespace(), one.rec.warnings);
}

void Healer::Summarize(Output& out, int64_t took_ms) {
  std::string s = "synchronized: " + std::to_string(last_.containers) + " containers";
  for (size_t i = 0; i < last_.by.size(); ++i) {
    if (last_.by.at(i) == 0) continue;
    s += Cat(", ", std::to_string(last_.by.at(i)), " ", HealResultName(static_cast<HealResult>(i)));
  }
  if (last_.refused != 0) s += Cat(" (", std::to_string(last_.refused), " refused-but-running)");
  s += Cat("; in ", std::to_string(took_ms), " ms");
  if (last_.of(HealResult::kOutOfTime) != 0) {
    s += Cat("; the rest were not checked within ", std::to_string(opt_.budget_ms),
             " ms: run `oci-rlimit audit --heal`");
  }
  out.Say(s);
}

void Healer::SaveStatus(Output& out) {
  Status st = ops_.WriteStatus(FormatNriStatus(status_));
  if (!st && !said_status_) {
    out.Say("cannot write its status file (doctor reads it): " + st.error().Text());
    said_status_ = true;
  }
}

}  // namespace ocirlimit::nri
