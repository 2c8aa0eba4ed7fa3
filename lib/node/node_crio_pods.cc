#include "node/node_crio_pods.h"

#include <algorithm>

#include "adapters/oci/runtime_state.h"
#include "adapters/oci/spec.h"
#include "formats/text.h"

namespace ocirlimit::node {
namespace {

constexpr const char* kHandler = "io.kubernetes.cri-o.RuntimeHandler";
constexpr const char* kType = "io.kubernetes.cri-o.ContainerType";

std::string Annotation(const Json& a, const char* key) {
  return a.contains(key) && a[key].is_string() ? a[key].get<std::string>() : std::string();
}

}  // namespace

std::vector<CrioPod> CrioHandlerPods(FsOps& fs, const std::string& host,
                                     const std::string& storage_root,
                                     const std::vector<std::string>& handlers) {
  std::vector<CrioPod> out;
  const std::string root = host + storage_root;
  auto drivers = fs.ListDir(root);
  if (!drivers) return out;
  for (const auto& d : *drivers) {
    if (!d.dir || !d.name.ends_with("-containers")) continue;
    auto ids = fs.ListDir(root + "/" + d.name);
    if (!ids) continue;
    for (const auto& id : *ids) {
      if (!id.dir) continue;
      auto read = fs.ReadTrusted(root, {d.name, id.name, "userdata", "config.json"}, 0,
                                 kMaxRuntimeStateBytes);
      if (!read) continue;
      Json spec = Json::parse(read->text, nullptr, false);
      if (!spec.is_object() || !spec.contains("annotations") || !spec["annotations"].is_object()) {
        continue;
      }
      const Json& a = spec["annotations"];
      if (Annotation(a, kType) != "sandbox") continue;
      if (std::find(handlers.begin(), handlers.end(), Annotation(a, kHandler)) == handlers.end()) {
        continue;
      }
      const std::string ns = Annotation(a, "io.kubernetes.pod.namespace");
      const std::string name = Annotation(a, "io.kubernetes.pod.name");
      out.push_back({id.name, ns.empty() && name.empty() ? "" : Cat(ns, "/", name)});
    }
  }
  std::sort(out.begin(), out.end(), [](const CrioPod& x, const CrioPod& y) { return x.id < y.id; });
  return out;
}

std::string CrioPodList(const std::vector<CrioPod>& pods) {
  std::string out;
  for (const auto& p : pods) {
    const std::string id = TableCell(p.id.substr(0, 12));
    out += (out.empty() ? "" : ", ") + (p.name.empty() ? id : TableCell(p.name) + " (" + id + ")");
  }
  return out;
}

}  // namespace ocirlimit::node
