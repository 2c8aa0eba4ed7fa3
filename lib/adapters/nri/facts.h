// NRI messages <-> core facts: what oci-rlimit's policy looks at, taken from
// a CreateContainerRequest, and the verdict's limits as a
// ContainerAdjustment. Pure.
#pragma once

#include <vector>

#include "core/policy.h"
#include "formats/rlimit.h"
#include "nriapi/api.pb.h"

namespace ocirlimit::nri {

namespace pb = ::nri::pkg::api::v1alpha1;

struct NriFacts {
  ContainerFacts facts;
  // The spec's process.rlimits as the runtime has them now (Container.rlimits);
  // types we do not know are left out.
  std::vector<Rlimit> spec_rlimits;
};

// Annotations: the pod's, then the container's (a container annotation
// replaces a pod annotation of the same key), and the pod's alone in
// pod_annotations; env: the container's; devices:
// linux.devices[].path; pod_namespace and pod_name: PodSandbox.namespace and
// .name (the runtime's fields, not annotations).
NriFacts FactsFromCreate(const pb::CreateContainerRequest& req);

// POSIXRlimit {type "RLIMIT_MEMLOCK", hard, soft} per limit, in order.
void SetAdjustmentRlimits(const std::vector<Rlimit>& limits, pb::ContainerAdjustment& adjust);

}  // namespace ocirlimit::nri
