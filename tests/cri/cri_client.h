// A small CRI client, built from the real runtime.v1 api.proto (compiled at
// build time; see cmake/OciRlimitProto.cmake), that drives a runtime the way
// kubelet does: pod sandbox, containers, ExecSync, stop and remove.
//
// Every call has a deadline, so a runtime that stops answering fails the call
// instead of hanging the test. Failures come back as ocirlimit::Error with
// the method, the gRPC status code and the runtime's own message, e.g.
// `CreateContainer: UNKNOWN: failed to create containerd task: ...`.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cri-api/api.grpc.pb.h"
#include "formats/error.h"

namespace ocirlimit::itest::cri {

namespace v1 = ::runtime::v1;

// What kubelet puts into a PodSandboxConfig, reduced to what our tests vary.
struct PodSpec {
  std::string name;
  std::string ns = "default";
  std::string uid;              // empty: the name
  std::string runtime_handler;  // RuntimeClass handler; empty: the runtime's default
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  std::string log_directory;  // where container logs go; empty: none
  std::string cgroup_parent;  // empty: the runtime's choice
  bool host_network = true;   // NODE network namespace: no CNI needed
};

struct DeviceSpec {
  std::string host_path;
  std::string container_path;
  std::string permissions = "rwm";
};

struct ContainerSpec {
  std::string name;
  std::string image;
  std::vector<std::string> command;  // the image's entrypoint when empty
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  std::vector<DeviceSpec> devices;
  // CRI CDI_devices (fully qualified names, "nvidia.com/gpu=0"), as kubelet
  // sends a device plugin's CDI allocation (cdi-cri).
  std::vector<std::string> cdi_devices;
  std::string log_path;  // relative to the pod's log_directory; empty: NAME.log
};

// A running pod sandbox: its id and the config CreateContainer needs again.
struct Pod {
  std::string id;
  v1::PodSandboxConfig config;
};

struct ExecResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CriClient {
 public:
  // `socket` is the runtime's gRPC unix socket; `deadline` bounds every call
  // (ExecSync: its own timeout plus this).
  explicit CriClient(std::string socket,
                     std::chrono::milliseconds deadline = std::chrono::seconds(60));
  ~CriClient();
  CriClient(const CriClient&) = delete;
  CriClient& operator=(const CriClient&) = delete;

  [[nodiscard]] Result<v1::VersionResponse> Version();
  [[nodiscard]] Result<v1::StatusResponse> Status();
  // Ok once the RuntimeReady condition is true (NetworkReady is not needed
  // for host-network pods); else an error with the condition's reason.
  [[nodiscard]] ocirlimit::Status RuntimeReady();

  [[nodiscard]] Result<Pod> RunPodSandbox(const PodSpec& spec);
  [[nodiscard]] Result<std::string> CreateContainer(const Pod& pod, const ContainerSpec& spec);
  [[nodiscard]] ocirlimit::Status StartContainer(const std::string& id);
  [[nodiscard]] Result<ExecResult> ExecSync(const std::string& id,
                                            const std::vector<std::string>& cmd,
                                            int timeout_s = 30);
  [[nodiscard]] ocirlimit::Status StopContainer(const std::string& id, int timeout_s = 0);
  [[nodiscard]] ocirlimit::Status RemoveContainer(const std::string& id);
  [[nodiscard]] ocirlimit::Status StopPodSandbox(const std::string& id);
  [[nodiscard]] ocirlimit::Status RemovePodSandbox(const std::string& id);
  [[nodiscard]] Result<v1::ContainerStatusResponse> ContainerStatus(const std::string& id);
  [[nodiscard]] Result<std::vector<std::string>> ListContainerIds();
  [[nodiscard]] Result<std::vector<std::string>> ListPodSandboxIds();
  // ImageService.ImageStatus: whether the CRI image store knows `image`.
  [[nodiscard]] Result<bool> ImagePresent(const std::string& image);

  // The generated configs, for tests that need a field the specs lack.
  static v1::PodSandboxConfig ToConfig(const PodSpec& spec);
  static v1::ContainerConfig ToConfig(const ContainerSpec& spec);

  // The raw stubs (with Context() for a deadline) for anything else.
  v1::RuntimeService::Stub& runtime() { return *runtime_; }
  v1::ImageService::Stub& images() { return *images_; }
  std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds extra = std::chrono::milliseconds(0)) const;
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<v1::ImageService::Stub> images_;
};

// "CODE: message" for a failed gRPC status, e.g. "DEADLINE_EXCEEDED: ...".
std::string StatusText(const grpc::Status& status);

}  // namespace ocirlimit::itest::cri
