#include "adapters/oci/facts.h"

#include "adapters/oci/json_members.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<std::vector<std::string>> StringList(const Json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) return MakeError(where + ": must be an array");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return MakeError(where + "[" + std::to_string(i) + "]: not a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace

Result<ContainerFacts> FactsFromSpec(const Json& spec) {
  ContainerFacts f;
  if (auto a = spec.find("annotations"); a != spec.end() && !a->is_null()) {
    if (!a->is_object()) return MakeError("annotations: must be an object");
    for (const auto& [k, v] : a->items()) {
      if (!v.is_string()) return MakeError("annotations." + Quote(k) + ": not a string");
      f.annotations[k] = v.get<std::string>();
    }
  }
  if (auto p = spec.find("process"); p != spec.end() && p->is_object()) {
    if (auto e = p->find("env"); e != p->end()) {
      auto env = StringList(*e, "process.env");
      if (!env) return env.error();
      f.env = std::move(*env);
      f.cdi_devices = NvidiaRuntimeCdiNames(f.env);
    }
  }
  if (auto l = spec.find("linux"); l != spec.end() && l->is_object()) {
    if (auto d = l->find("devices"); d != l->end() && !d->is_null()) {
      if (!d->is_array()) return MakeError("linux.devices: must be an array");
      for (size_t i = 0; i < d->size(); ++i) {
        const Json& dev = (*d)[i];
        auto path = dev.is_object() ? dev.find("path") : dev.end();
        if (!dev.is_object() || path == dev.end() || !path->is_string()) {
          return MakeError("linux.devices[" + std::to_string(i) +
                           "].path: missing or not a string");
        }
        f.devices.push_back(path->get<std::string>());
      }
    }
  }
  auto rlimits = SpecRlimits(spec);
  if (!rlimits) return rlimits.error();
  f.spec_rlimits = std::move(*rlimits);
  // A spec names its pod only through annotations: containerd's CRI plugin
  // and CRI-O write theirs over the pod's own.
  SetPodFromRuntimeAnnotations(f);
  return f;
}

Result<ContainerFacts> FactsFromSpecText(std::string_view text, const std::string& what) {
  static const std::vector<JsonMember> members = {
      {"annotations"}, {"process", "env"}, {"process", "rlimits"}, {"linux", "devices"}};
  auto spec = ParseJsonMembers(text, what, members);
  if (!spec) return spec.error();
  auto facts = FactsFromSpec(*spec);
  if (!facts) return facts.error().Wrap(Quote(what));
  return facts;
}

Result<Decision> DecideForSpecText(const Config& cfg, std::string_view text,
                                   const std::string& where) {
  auto spec = ParseJsonObject(text, Quote(where));
  if (!spec) return spec.error();
  return DecideForSpec(cfg, *spec, where);
}

Result<Decision> DecideForSpec(const Config& cfg, const Json& spec, const std::string& where) {
  auto facts = FactsFromSpec(spec);
  if (!facts) return facts.error().Wrap(Quote(where));
  return Decide(cfg, *facts);
}

}  // namespace ocirlimit
