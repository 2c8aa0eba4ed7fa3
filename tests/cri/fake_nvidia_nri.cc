// A stand-in for NVIDIA's NRI plugin (nvidia-ctk-installer with
// ENABLE_NRI_PLUGIN=true), written from ../shared/notes/gpu-node-today.md:
// it registers as 10-nvidia-ctk-installer, subscribes to CreateContainer,
// reads the pod annotations nvidia.cdi.k8s.io/container.NAME, then
// nvidia.cdi.k8s.io/pod, then nvidia.cdi.k8s.io (the first found; a comma
// list of CDI names) and answers with ContainerAdjustment.CDI_devices (field 8
// in NRI 0.8), which the runtime resolves once every plugin has answered.
// It uses the plugin's own transport (nri/session.h, nri/serve.h), not its
// policy. Test-only: `fake-nvidia-nri SOCKET`; it reconnects as NVIDIA's does
// and stops on SIGTERM.
#include <chrono>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "nri/plugin.h"
#include "nri/serve.h"
#include "nri/serve_linux.h"
#include "nri/session.h"
#include "nriapi/api.pb.h"

namespace {

namespace pb = ::nri::pkg::api::v1alpha1;
using ocirlimit::nri::Reply;

constexpr std::string_view kPrefix = "nvidia.cdi.k8s.io";

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string n = list.substr(at, comma - at);
    n.erase(0, n.find_first_not_of(" \t"));
    n.erase(n.find_last_not_of(" \t") + 1);
    if (!n.empty()) out.push_back(n);
    at = comma + 1;
  }
  return out;
}

// The CDI names NVIDIA's plugin gives container `name` of a pod.
std::vector<std::string> NamesFor(const pb::PodSandbox& pod, const std::string& name) {
  const std::string keys[] = {std::string(kPrefix) + "/container." + name,
                              std::string(kPrefix) + "/pod", std::string(kPrefix)};
  for (const auto& k : keys) {
    auto it = pod.annotations().find(k);
    if (it != pod.annotations().end()) return SplitNames(it->second);
  }
  return {};
}

class NvidiaService : public ocirlimit::nri::PluginService {
 public:
  Reply Call(std::string_view method, std::string_view payload) override {
    Reply r;
    const int size = static_cast<int>(payload.size());
    if (method == "Configure") {
      pb::ConfigureResponse resp;
      resp.set_events(ocirlimit::nri::kEventMaskCreateContainer);
      resp.SerializeToString(&r.payload);
      std::cerr << "fake-nvidia-nri: configured" << std::endl;
    } else if (method == "Synchronize") {
      pb::SynchronizeRequest req;
      pb::SynchronizeResponse resp;
      if (req.ParseFromArray(payload.data(), size)) resp.set_more(req.more());
      resp.SerializeToString(&r.payload);
    } else if (method == "CreateContainer") {
      pb::CreateContainerRequest req;
      pb::CreateContainerResponse resp;
      if (req.ParseFromArray(payload.data(), size)) {
        for (const auto& n : NamesFor(req.pod(), req.container().name())) {
          resp.mutable_adjust()->add_cdi_devices()->set_name(n);
          std::cerr << "fake-nvidia-nri: container " << req.container().name() << " gets " << n
                    << "\n";
        }
      }
      resp.SerializeToString(&r.payload);
    } else {
      r.status = {ocirlimit::nri::kCodeUnimplemented, "not implemented"};
    }
    return r;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fake-nvidia-nri SOCKET\n";
    return 2;
  }
  if (auto st = ocirlimit::nri::InstallSignals(); !st) return 1;
  NvidiaService service;
  ocirlimit::nri::ServeOptions opt;
  opt.say = [](const std::string& m) { std::cerr << "fake-nvidia-nri: " << m << "\n"; };
  opt.on_signal = [] { return ocirlimit::nri::TakeSignals().stop; };
  opt.new_session = [&service] {
    return std::make_unique<ocirlimit::nri::Session>(
        service, ocirlimit::nri::NriPlugin::RegisterPayload("nvidia-ctk-installer", "10"));
  };
  auto connector = ocirlimit::nri::UnixConnector(argv[1]);
  std::cerr << "fake-nvidia-nri: starting as 10-nvidia-ctk-installer on " << argv[1] << "\n";
  return ocirlimit::nri::Serve(*connector, opt);
}
