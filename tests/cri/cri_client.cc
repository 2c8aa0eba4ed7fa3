#include "cri_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace ocirlimit::itest::cri {

namespace {

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN_CODE";
  }
}

Error CallError(const char* method, const grpc::Status& status) {
  return MakeError(std::string(method) + ": " + StatusText(status));
}

// Kubelet's choice for a pod without hostPID or a shared process namespace:
// each container its own PID namespace, one IPC namespace per pod.
void SetNamespaces(v1::NamespaceOption* ns, bool host_network) {
  ns->set_network(host_network ? v1::NODE : v1::POD);
  ns->set_pid(v1::CONTAINER);
  ns->set_ipc(v1::POD);
}

}  // namespace

std::string StatusText(const grpc::Status& status) {
  return std::string(CodeName(status.error_code())) + ": " + status.error_message();
}

CriClient::CriClient(std::string socket, std::chrono::milliseconds deadline)
    : socket_(std::move(socket)), deadline_(deadline) {
  grpc::ChannelArguments args;
  // A daemon that is restarted or slow to listen: retry soon, not after
  // gRPC's default backoff of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(16 << 20);
  channel_ = grpc::CreateCustomChannel("unix:" + socket_, grpc::InsecureChannelCredentials(), args);
  runtime_ = v1::RuntimeService::NewStub(channel_);
  images_ = v1::ImageService::NewStub(channel_);
}

CriClient::~CriClient() = default;

std::unique_ptr<grpc::ClientContext> CriClient::Context(std::chrono::milliseconds extra) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + deadline_ + extra);
  return ctx;
}

Result<v1::VersionResponse> CriClient::Version() {
  v1::VersionRequest req;
  v1::VersionResponse resp;
  if (auto s = runtime_->Version(Context().get(), req, &resp); !s.ok()) {
    return CallError("Version", s);
  }
  return resp;
}

Result<v1::StatusResponse> CriClient::Status() {
  v1::StatusRequest req;
  v1::StatusResponse resp;
  if (auto s = runtime_->Status(Context().get(), req, &resp); !s.ok()) {
    return CallError("Status", s);
  }
  return resp;
}

ocirlimit::Status CriClient::RuntimeReady() {
  auto status = Status();
  if (!status) return status.error();
  for (const auto& c : status->status().conditions()) {
    if (c.type() != "RuntimeReady") continue;
    if (c.status()) return Ok{};
    return MakeError("RuntimeReady is false: " + c.reason() + ": " + c.message());
  }
  return MakeError("Status has no RuntimeReady condition");
}

v1::PodSandboxConfig CriClient::ToConfig(const PodSpec& spec) {
  v1::PodSandboxConfig c;
  auto* md = c.mutable_metadata();
  md->set_name(spec.name);
  md->set_namespace_(spec.ns);
  md->set_uid(spec.uid.empty() ? spec.name : spec.uid);
  md->set_attempt(0);
  // A host-network pod shares the host's UTS namespace: no hostname of its own.
  if (!spec.host_network) c.set_hostname(spec.name);
  c.set_log_directory(spec.log_directory);
  for (const auto& [k, v] : spec.labels) (*c.mutable_labels())[k] = v;
  for (const auto& [k, v] : spec.annotations) (*c.mutable_annotations())[k] = v;
  auto* lx = c.mutable_linux();
  lx->set_cgroup_parent(spec.cgroup_parent);
  SetNamespaces(lx->mutable_security_context()->mutable_namespace_options(), spec.host_network);
  return c;
}

v1::ContainerConfig CriClient::ToConfig(const ContainerSpec& spec) {
  v1::ContainerConfig c;
  c.mutable_metadata()->set_name(spec.name);
  c.mutable_metadata()->set_attempt(0);
  c.mutable_image()->set_image(spec.image);
  // As kubelet sends it; CRI-O refuses a CreateContainer without it.
  c.mutable_image()->set_user_specified_image(spec.image);
  for (const auto& a : spec.command) c.add_command(a);
  for (const auto& a : spec.args) c.add_args(a);
  for (const auto& [k, v] : spec.env) {
    auto* kv = c.add_envs();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const auto& [k, v] : spec.labels) (*c.mutable_labels())[k] = v;
  for (const auto& [k, v] : spec.annotations) (*c.mutable_annotations())[k] = v;
  for (const auto& d : spec.devices) {
    auto* dev = c.add_devices();
    dev->set_host_path(d.host_path);
    dev->set_container_path(d.container_path);
    dev->set_permissions(d.permissions);
  }
  for (const auto& n : spec.cdi_devices) c.add_cdi_devices()->set_name(n);
  c.set_log_path(spec.log_path.empty() ? spec.name + ".log" : spec.log_path);
  return c;
}

Result<Pod> CriClient::RunPodSandbox(const PodSpec& spec) {
  v1::RunPodSandboxRequest req;
  *req.mutable_config() = ToConfig(spec);
  req.set_runtime_handler(spec.runtime_handler);
  v1::RunPodSandboxResponse resp;
  if (auto s = runtime_->RunPodSandbox(Context().get(), req, &resp); !s.ok()) {
    return CallError("RunPodSandbox", s);
  }
  return Pod{resp.pod_sandbox_id(), req.config()};
}

Result<std::string> CriClient::CreateContainer(const Pod& pod, const ContainerSpec& spec) {
  v1::CreateContainerRequest req;
  req.set_pod_sandbox_id(pod.id);
  *req.mutable_config() = ToConfig(spec);
  // Kubelet gives containers the pod's namespace choices.
  *req.mutable_config()->mutable_linux()->mutable_security_context()->mutable_namespace_options() =
      pod.config.linux().security_context().namespace_options();
  *req.mutable_sandbox_config() = pod.config;
  v1::CreateContainerResponse resp;
  if (auto s = runtime_->CreateContainer(Context().get(), req, &resp); !s.ok()) {
    return CallError("CreateContainer", s);
  }
  return resp.container_id();
}

ocirlimit::Status CriClient::StartContainer(const std::string& id) {
  v1::StartContainerRequest req;
  req.set_container_id(id);
  v1::StartContainerResponse resp;
  if (auto s = runtime_->StartContainer(Context().get(), req, &resp); !s.ok()) {
    return CallError("StartContainer", s);
  }
  return Ok{};
}

Result<ExecResult> CriClient::ExecSync(const std::string& id, const std::vector<std::string>& cmd,
                                       int timeout_s) {
  v1::ExecSyncRequest req;
  req.set_container_id(id);
  for (const auto& a : cmd) req.add_cmd(a);
  req.set_timeout(timeout_s);
  v1::ExecSyncResponse resp;
  if (auto s = runtime_->ExecSync(Context(std::chrono::seconds(timeout_s)).get(), req, &resp);
      !s.ok()) {
    return CallError("ExecSync", s);
  }
  return ExecResult{resp.exit_code(), resp.stdout(), resp.stderr()};
}

ocirlimit::Status CriClient::StopContainer(const std::string& id, int timeout_s) {
  v1::StopContainerRequest req;
  req.set_container_id(id);
  req.set_timeout(timeout_s);
  v1::StopContainerResponse resp;
  if (auto s = runtime_->StopContainer(Context(std::chrono::seconds(timeout_s)).get(), req, &resp);
      !s.ok()) {
    return CallError("StopContainer", s);
  }
  return Ok{};
}

ocirlimit::Status CriClient::RemoveContainer(const std::string& id) {
  v1::RemoveContainerRequest req;
  req.set_container_id(id);
  v1::RemoveContainerResponse resp;
  if (auto s = runtime_->RemoveContainer(Context().get(), req, &resp); !s.ok()) {
    return CallError("RemoveContainer", s);
  }
  return Ok{};
}

ocirlimit::Status CriClient::StopPodSandbox(const std::string& id) {
  v1::StopPodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::StopPodSandboxResponse resp;
  if (auto s = runtime_->StopPodSandbox(Context().get(), req, &resp); !s.ok()) {
    return CallError("StopPodSandbox", s);
  }
  return Ok{};
}

ocirlimit::Status CriClient::RemovePodSandbox(const std::string& id) {
  v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::RemovePodSandboxResponse resp;
  if (auto s = runtime_->RemovePodSandbox(Context().get(), req, &resp); !s.ok()) {
    return CallError("RemovePodSandbox", s);
  }
  return Ok{};
}

Result<v1::ContainerStatusResponse> CriClient::ContainerStatus(const std::string& id) {
  v1::ContainerStatusRequest req;
  req.set_container_id(id);
  v1::ContainerStatusResponse resp;
  if (auto s = runtime_->ContainerStatus(Context().get(), req, &resp); !s.ok()) {
    return CallError("ContainerStatus", s);
  }
  return resp;
}

Result<std::vector<std::string>> CriClient::ListContainerIds() {
  v1::ListContainersRequest req;
  v1::ListContainersResponse resp;
  if (auto s = runtime_->ListContainers(Context().get(), req, &resp); !s.ok()) {
    return CallError("ListContainers", s);
  }
  std::vector<std::string> ids;
  for (const auto& c : resp.containers()) ids.push_back(c.id());
  return ids;
}

Result<std::vector<std::string>> CriClient::ListPodSandboxIds() {
  v1::ListPodSandboxRequest req;
  v1::ListPodSandboxResponse resp;
  if (auto s = runtime_->ListPodSandbox(Context().get(), req, &resp); !s.ok()) {
    return CallError("ListPodSandbox", s);
  }
  std::vector<std::string> ids;
  for (const auto& p : resp.items()) ids.push_back(p.id());
  return ids;
}

Result<bool> CriClient::ImagePresent(const std::string& image) {
  v1::ImageStatusRequest req;
  req.mutable_image()->set_image(image);
  v1::ImageStatusResponse resp;
  if (auto s = images_->ImageStatus(Context().get(), req, &resp); !s.ok()) {
    return CallError("ImageStatus", s);
  }
  return resp.has_image() && !resp.image().id().empty();
}

}  // namespace ocirlimit::itest::cri
