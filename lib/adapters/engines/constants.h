// The engines' names, paths, tables and keys, defined once for the node
// model, doctor and the node installer.
#pragma once

#include <array>
#include <string_view>

namespace ocirlimit::engines {

// Our programs, by file name.
inline constexpr std::string_view kWrapperName = "oci-rlimit-runtime";
inline constexpr std::string_view kHookName = "oci-rlimit-hook";
inline constexpr std::string_view kNriName = "oci-rlimit-nri";
inline constexpr std::string_view kHelperName = "oci-prlimit-helper";
// The handler name our installer writes (runtimeClassName oci-rlimit).
inline constexpr std::string_view kOurHandler = "oci-rlimit";
// The annotations our handler passes to the spec, and the one the
// installer's CRI-O hooks file is conditioned on.
inline constexpr std::string_view kPodAnnotationsGlob = "oci-rlimit.io/*";
inline constexpr std::string_view kEnableAnnotation = "oci-rlimit.io/enable";

// Low-level runtimes a chain may end at.
inline constexpr std::array<std::string_view, 2> kLowLevelRuntimes = {"runc", "crun"};

// containerd.
inline constexpr std::string_view kContainerdConfig = "/etc/containerd/config.toml";
inline constexpr std::string_view kContainerdUnit = "containerd.service";
// Where a config version keeps CRI's runtime handlers and default_runtime_name.
// version 2 (containerd 1.x; 2.x migrates it on load), version 3 (2.x).
inline constexpr std::string_view kCriPluginV2 = "io.containerd.grpc.v1.cri";
inline constexpr std::string_view kCriPluginV3 = "io.containerd.cri.v1.runtime";
inline constexpr std::string_view kContainerdNriPlugin = "io.containerd.nri.v1.nri";
inline constexpr std::string_view kContainerdDefaultHandler = "runc";
inline constexpr std::string_view kRuncShimV2 = "io.containerd.runc.v2";

// NRI's defaults (containerd and CRI-O).
inline constexpr std::string_view kNriSocket = "/var/run/nri/nri.sock";
inline constexpr std::string_view kNriPluginDir = "/opt/nri/plugins";

// CRI-O.
inline constexpr std::string_view kCrioConf = "/etc/crio/crio.conf";
inline constexpr std::string_view kCrioConfDir = "/etc/crio/crio.conf.d";
inline constexpr std::string_view kCrioUnit = "crio.service";
// CRI-O 1.31's default_runtime, and conmon's default monitor_env PATH.
inline constexpr std::string_view kCrioDefaultRuntime = "crun";
// CRI-O's container storage ([crio] root): each pod's sandbox config.json,
// with its RuntimeHandler, is under DRIVER-containers/ID/userdata.
inline constexpr std::string_view kCrioStorageRoot = "/var/lib/containers/storage";
inline constexpr std::string_view kCrioMonitorPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// podman and CRI-O's stock hooks dir (the only one either reads by default).
inline constexpr std::string_view kStockHooksDir = "/usr/share/containers/oci/hooks.d";
inline constexpr std::string_view kAdminHooksDir = "/etc/containers/oci/hooks.d";
inline constexpr std::string_view kPodmanConfUsr = "/usr/share/containers/containers.conf";
inline constexpr std::string_view kPodmanConfEtc = "/etc/containers/containers.conf";
inline constexpr std::string_view kPodmanConfDir = "/etc/containers/containers.conf.d";

// docker.
inline constexpr std::string_view kDaemonJson = "/etc/docker/daemon.json";
inline constexpr std::string_view kDockerUnit = "docker.service";

// NVIDIA's container toolkit: its runtime (and the CDI and legacy modes the
// toolkit installs beside it), its hook, its config, and the GPU
// Operator's toolkit dir with its own config.
inline constexpr std::string_view kNvidiaRuntimeName = "nvidia-container-runtime";
// NVIDIA's prestart hook: a bare name NVIDIA's runtime and docker --gpus look
// up on PATH, and where the toolkit installs it.
inline constexpr std::string_view kNvidiaHookName = "nvidia-container-runtime-hook";
inline constexpr std::string_view kNvidiaHookPath = "/usr/bin/nvidia-container-runtime-hook";
inline constexpr std::array<std::string_view, 3> kNvidiaHandlers = {"nvidia", "nvidia-cdi",
                                                                    "nvidia-legacy"};
inline constexpr std::string_view kNvidiaConfig = "/etc/nvidia-container-runtime/config.toml";
inline constexpr std::string_view kOperatorToolkitDir = "/usr/local/nvidia/toolkit";
inline constexpr std::string_view kOperatorNvidiaConfig =
    "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml";
// NVIDIA's runtimes list when its config sets none (toolkit v1.17).
inline constexpr std::array<std::string_view, 3> kNvidiaDefaultRuntimes = {"docker-runc", "runc",
                                                                           "crun"};

// systemd's PATH for services that set none (as on Debian and Ubuntu).
inline constexpr std::string_view kSystemdDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

}  // namespace ocirlimit::engines
