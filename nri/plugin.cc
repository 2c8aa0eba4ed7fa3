#include "nri/plugin.h"

#include <nlohmann/json.hpp>

#include "adapters/nri/facts.h"
#include "core/text.h"
#include "nri/decide.h"

namespace ocirlimit::nri {
namespace {

// JSON string syntax, so a value a pod author chose stays on one line.
std::string Quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Pair(uint64_t soft, uint64_t hard) {
  return FormatLimitValue(soft) + ":" + FormatLimitValue(hard);
}

// "memlock 65536:65536->unlimited:unlimited", as the hook's changes. The
// "before" is the spec's entry of that type when the runtime reports it
// (Container.rlimits), else kBeforeUnreported (docs/nri.md): containerd
// 1.7.24 and 2.1.9 never fill that field, even for an entry from
// base_runtime_spec, so the plugin cannot know whether the container would
// have had a spec entry or the limit runc inherits from the shim.
std::string Changes(const std::vector<Rlimit>& limits, const std::vector<Rlimit>& spec) {
  std::string s;
  for (const auto& l : limits) {
    if (!s.empty()) s += ' ';
    std::string before(kBeforeUnreported);
    for (const auto& r : spec) {
      if (r.resource == l.resource) before = Pair(r.soft, r.hard);
    }
    s += std::string(l.info().name) + " " + before + "->" + Pair(l.soft, l.hard);
  }
  return s;
}

std::string Who(const pb::CreateContainerRequest& req) {
  return "container " + Quote(req.container().name()) + " of pod " +
         Quote(req.pod().namespace_() + "/" + req.pod().name());
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
  return Failure(kCodeUnimplemented,
                 "oci-rlimit-nri: method " + Quote(method) + " is not implemented");
}

Reply NriPlugin::Configure(std::string_view payload) {
  pb::ConfigureRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Failure(kCodeInvalidArgument, "oci-rlimit-nri: cannot decode ConfigureRequest");
  }
  configured_ = true;
  out_.Say("configured by " + OneLine(req.runtime_name()) + " " + OneLine(req.runtime_version()) +
           "; subscribed to CreateContainer");
  if (!req.config().empty()) {
    out_.Say(
        "ignoring the NRI plugin config the runtime passed; oci-rlimit reads " +
        (config_().source.empty() ? std::string("its --config file") : Quote(config_().source)));
  }
  pb::ConfigureResponse resp;
  resp.set_events(kEventMaskCreateContainer);
  return Serialized(resp);
}

Reply NriPlugin::Synchronize(std::string_view payload) {
  pb::SynchronizeRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Failure(kCodeInvalidArgument, "oci-rlimit-nri: cannot decode SynchronizeRequest");
  }
  // Existing containers keep what they have: rlimits cannot change after
  // creation. With more = true the runtime sends the rest in later calls.
  pb::SynchronizeResponse resp;
  resp.set_more(req.more());
  return Serialized(resp);
}

Reply NriPlugin::CreateContainer(std::string_view payload) {
  const Config& cfg = config_();
  pb::CreateContainerRequest req;
  if (!req.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    const std::string error = "oci-rlimit: cannot decode the CreateContainerRequest";
    out_.LogLine(cfg, now_() + " id=\"\" pid=0 unchanged error=" + Quoted(error));
    if (cfg.on_error == OnError::kWarn) return Serialized(pb::CreateContainerResponse());
    return Failure(kCodeInvalidArgument, error);
  }
  const NriFacts facts = FactsFromCreate(req);
  const Verdict v = AdmitNri(cfg, facts.facts);

  std::string line = now_() + " id=" + Quoted(req.container().id()) + " pid=0";
  line += v.action == Action::kApply ? " " + Changes(v.limits, facts.spec_rlimits) : " unchanged";
  for (const auto& w : v.warnings) line += " warning=" + Quoted(w);
  if (v.action == Action::kFail) {
    const std::string error = "oci-rlimit: " + Who(req) + ": " + v.error->Text();
    out_.LogLine(cfg, line + " error=" + Quoted(error));
    return Failure(kCodeFailedPrecondition, error);
  }
  if (v.action == Action::kApply || !v.warnings.empty()) out_.LogLine(cfg, line);

  pb::CreateContainerResponse resp;
  if (v.action == Action::kApply) SetAdjustmentRlimits(v.limits, *resp.mutable_adjust());
  return Serialized(resp);
}

}  // namespace ocirlimit::nri
