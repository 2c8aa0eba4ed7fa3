// CRI-O's pods of some runtime handlers, found through what CRI-O itself
// keeps: its container storage ([crio] root, /var/lib/containers/storage).
// Every pod has a storage container there, infra container or not (with
// CRI-O's default drop_infra_ctr = true there is no sandbox state under any
// runtime root): DRIVER-containers/ID/userdata/config.json, whose
// annotations say io.kubernetes.cri-o.ContainerType "sandbox" and name the
// pod's io.kubernetes.cri-o.RuntimeHandler (a workload container's
// config.json names none). Seen on CRI-O 1.31.13 (tests/crio). Uninstall
// keeps the handler while any such pod exists: stop, exec and remove look
// the handler up by its name. Only root's files count (FsOps::ReadTrusted).
#pragma once

#include <string>
#include <vector>

#include "effects/fs_ops.h"

namespace ocirlimit::node {

struct CrioPod {
  std::string id;    // the sandbox id
  std::string name;  // NAMESPACE/NAME, from its annotations ("" when absent)
};

// The pods under `host` + `storage_root` whose handler is one of `handlers`,
// sorted by id. A missing storage root has none.
std::vector<CrioPod> CrioHandlerPods(FsOps& fs, const std::string& host,
                                     const std::string& storage_root,
                                     const std::vector<std::string>& handlers);

// "NAMESPACE/NAME (ID12)" for each pod, as one message shows them.
std::string CrioPodList(const std::vector<CrioPod>& pods);

}  // namespace ocirlimit::node
