#include "nri/plugin.h"

#include <optional>
#include <vector>

#include "adapters/nri/facts.h"
#include "formats/log_line.h"
#include "formats/text.h"
#include "nri/decide.h"
#include "nri/decision/record.h"
#include "nri/heal.h"
#include "nri/metrics.h"

namespace ocirlimit::nri {
namespace {

// What the spec held for each limit: its entry of that type when the
// runtime reports it (Container.rlimits), else nullopt, which the log line
// says as kBeforeUnreported (docs/nri.md): containerd 1.7.24 and 2.1.9 never
// fill that field, even for an entry from base_runtime_spec, so the plugin
// cannot know whether the container would have had a spec entry or the limit
// runc inherits from the shim.
std::vector<std::optional<LimitPair>> Before(const std::vector<Rlimit>& limits,
                                             const std::vector<Rlimit>& spec) {
  std::vector<std::optional<LimitPair>> before;
  for (const auto& l : limits) {
    std::optional<LimitPair> b;
    for (const auto& r : spec) {
      if (r.resource == l.resource) b = LimitPair{r.soft, r.hard};
    }
    before.push_back(b);
  }
  return before;
}

std::string Who(const pb::CreateContainerRequest& req) {
  return "container " + Quote(req.container().name()) + " of pod " +
         Quote(req.pod().namespace_() + "/" + req.pod().name());
}

// A value the runtime sent, on one line and cut as Quote cuts it, unquoted.
std::string Shown(std::string_view s) {
  const MessageCut c = CutForMessage(s);
  return c.cut() ? OneLine(c.head) + "\u2026" + c.size_note : OneLine(s);
}

Reply Serialized(const google::protobuf::MessageLite& m) {
  Reply r;
  m.SerializeToString(&r.payload);
  return r;
}

Reply Failure(int32_t code, const std::string& msg) {
  Reply r;
  r.status = {code, msg};
  return r;
}

}  // namespace

std::string NriPlugin::RegisterPayload(const std::string& name, const std::string& index) {
  pb::RegisterPluginRequest r;
  r.set_plugin_name(name);
  r.set_plugin_idx(index);
  return r.SerializeAsString();
}

Reply NriPlugin::Call(std::string_view method, std::string_view payload) {
  if (method == "Configure") return Configure(payload);
  if (method == "Synchronize") return Synchronize(payload);
  if (method == "CreateContainer") return CreateContainer(payload);
  // Subscribed to (RemoveContainer) only with a decision store.
  if (method == "StateChange" && decisions_ != nullptr) return StateChange(payload);
  return Failure(kCodeUnimplemented,
                 "oci-rlimit-nri: method " + Quote(method) + " is not implemented");
}

Reply NriPlugin::Configure(std::string_view payload) {
  pb::ConfigureRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Failure(kCodeInvalidArgument, "oci-rlimit-nri: cannot decode ConfigureRequest");
  }
  configured_ = true;
  if (metrics_ != nullptr) metrics_->SetConnected(true);
  if (healer_ != nullptr) healer_->Connected(now_(), out_);
  out_.Say("configured by " + Shown(req.runtime_name()) + " " + Shown(req.runtime_version()) +
           "; subscribed to CreateContainer" +
           (decisions_ != nullptr ? " and RemoveContainer" : ""));
  if (!req.config().empty()) {
    out_.Say(
        "ignoring the NRI plugin config the runtime passed; oci-rlimit reads " +
        (config_().source.empty() ? std::string("its --config file") : Quote(config_().source)));
  }
  pb::ConfigureResponse resp;
  // With a decision store, RemoveContainer too: its record goes with it.
  resp.set_events(kEventMaskCreateContainer |
                  (decisions_ != nullptr ? kEventMaskRemoveContainer : 0));
  return Serialized(resp);
}

Reply NriPlugin::Synchronize(std::string_view payload) {
  pb::SynchronizeRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Failure(kCodeInvalidArgument, "oci-rlimit-nri: cannot decode SynchronizeRequest");
  }
  // The runtime's updates cannot change rlimits: the Healer sets them on
  // each init itself, within its budget, before this reply goes out. With
  // more = true the runtime sends the rest in later calls.
  if (healer_ != nullptr) healer_->Synchronize(config_(), req, out_, now_);
  if (metrics_ != nullptr && healer_ != nullptr && !req.more()) {
    const HealCounts& c = healer_->last();
    metrics_->Synchronized(c.of(HealResult::kHealed),
                           c.of(HealResult::kCannot) + c.of(HealResult::kOutOfTime));
    metrics_->NeedAdmin(c.refused, c.of(HealResult::kCannot) + c.of(HealResult::kOutOfTime));
  }
  pb::SynchronizeResponse resp;
  resp.set_more(req.more());
  return Serialized(resp);
}

Reply NriPlugin::StateChange(std::string_view payload) {
  pb::StateChangeEvent ev;
  if (!ev.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Failure(kCodeInvalidArgument, "oci-rlimit-nri: cannot decode StateChangeEvent");
  }
  if (ev.event() == pb::REMOVE_CONTAINER && !ev.container().id().empty()) {
    if (auto removed = decisions_->Remove(ev.container().id()); !removed) {
      out_.Say("cannot remove the decision record of " + Quote(ev.container().id()) + ": " +
               removed.error().Text());
    }
  }
  return Serialized(pb::Empty());
}

// Written before the reply lets the runtime go on (the wrapper reads it at
// create). nullopt when written; else why not.
std::optional<std::string> NriPlugin::RecordDecision(const Config& cfg, const std::string& id,
                                                     const Verdict& v) {
  if (decisions_ == nullptr) return "no decision store";
  if (v.action == Action::kFail) return std::nullopt;
  auto why = RecordCreate(*decisions_, cfg, id,
                          v.action == Action::kApply ? v.limits : std::vector<Rlimit>{}, now_());
  if (why && !said_unrecorded_) {
    out_.Say("cannot record decisions (" + *why + "): a later heal, exec or handler decides again");
    said_unrecorded_ = true;
  }
  return why;
}

LogRecord NriPlugin::Record(const std::string& id) const {
  LogRecord r;
  r.time = now_();
  r.id = id;
  r.via = std::string(kLogVia);
  return r;
}

Reply NriPlugin::CreateContainer(std::string_view payload) {
  const Config& cfg = config_();
  pb::CreateContainerRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    LogRecord r = Record("");
    r.error = "oci-rlimit: cannot decode the CreateContainerRequest";
    out_.LogLine(cfg, FormatLogLine(r));
    const bool warn = cfg.on_error == OnError::kWarn;
    if (metrics_ != nullptr) {
      metrics_->CountContainer(warn ? ContainerCount::kLeftUndecodable
                                    : ContainerCount::kRefusedUndecodable);
    }
    if (warn) return Serialized(pb::CreateContainerResponse());
    return Failure(kCodeInvalidArgument, r.error);
  }
  const NriFacts facts = FactsFromCreate(req);
  const Verdict v = AdmitNri(cfg, facts.facts);
  if (metrics_ != nullptr) metrics_->Count(CountCreate(cfg, facts.facts, v));

  LogRecord r = Record(req.container().id());
  if (v.action == Action::kApply) {
    r.limits = v.limits;
    r.before = Before(v.limits, facts.spec_rlimits);
  }
  r.warnings = v.warnings;
  if (v.action == Action::kApply && runtime_) {
    if (auto m = UnraisableByRuntime(v.limits, *runtime_)) r.warnings.push_back(*m);
  }
  if (v.action == Action::kFail) {
    r.error = "oci-rlimit: " + Who(req) + ": " + v.error->Text();
    out_.LogLine(cfg, FormatLogLine(r));
    return Failure(kCodeFailedPrecondition, r.error);
  }
  const std::optional<std::string> unrecorded = RecordDecision(cfg, req.container().id(), v);
  if (unrecorded && decisions_ != nullptr && v.action == Action::kApply) {
    r.warnings.push_back("no decision recorded (" + *unrecorded +
                         "): a later heal or exec decides again");
  }
  if (auto note = HandlerNote(req, unrecorded); note && v.action == Action::kApply) {
    r.warnings.push_back(*note);
  }
  if (v.action == Action::kApply || !r.warnings.empty()) out_.LogLine(cfg, FormatLogLine(r));

  pb::CreateContainerResponse resp;
  if (v.action == Action::kApply) SetAdjustmentRlimits(v.limits, *resp.mutable_adjust());
  return Serialized(resp);
}

}  // namespace ocirlimit::nri
