#include "adapters/nri/facts.h"

#include <map>
#include <string>

namespace ocirlimit::nri {

NriFacts FactsFromCreate(const pb::CreateContainerRequest& req) {
  NriFacts out;
  ContainerFacts& f = out.facts;
  for (const auto& [k, v] : req.pod().annotations()) f.annotations[k] = v;
  const pb::Container& c = req.container();
  for (const auto& [k, v] : c.annotations()) f.annotations[k] = v;
  f.env.assign(c.env().begin(), c.env().end());
  for (const auto& d : c.linux().devices()) f.devices.push_back(d.path());
  // NVIDIA's NRI plugin injects what the pod's annotations name, after every
  // plugin has answered: no device of it shows here, only its names.
  f.pod_annotations.emplace(req.pod().annotations().begin(), req.pod().annotations().end());
  f.cdi_devices = NvidiaNriCdiNames(*f.pod_annotations, c.name());
  for (auto& n : NvidiaRuntimeCdiNames(f.env)) f.cdi_devices.push_back(std::move(n));
  // The runtime's own structured fields, never annotations: the pod's
  // annotations reach NRI unfiltered, whatever the handler passes on.
  if (!req.pod().namespace_().empty()) f.pod_namespace = req.pod().namespace_();
  if (!req.pod().name().empty()) f.pod_name = req.pod().name();
  for (const auto& r : c.rlimits()) {
    const RlimitInfo* info = FindRlimit(r.type());
    if (info == nullptr) continue;
    out.spec_rlimits.push_back({info->resource, r.soft(), r.hard()});
  }
  // The "spec" request source reads these (containerd leaves the field
  // empty: docs/policy.md); the NRI sample's annotation names the container.
  f.spec_rlimits = out.spec_rlimits;
  if (!c.name().empty()) f.container_name = c.name();
  return out;
}

void SetAdjustmentRlimits(const std::vector<Rlimit>& limits, pb::ContainerAdjustment& adjust) {
  for (const auto& l : limits) {
    pb::POSIXRlimit* r = adjust.add_rlimits();
    r->set_type(std::string(l.info().spec_type));
    r->set_hard(l.hard);
    r->set_soft(l.soft);
  }
}

}  // namespace ocirlimit::nri
