// docker: dockerd, daemon.json's runtimes and their chains, the default
// runtime, docker --gpus through NVIDIA's hook name, and docker's unit.
#include <algorithm>

#include "adapters/engines/constants.h"
#include "adapters/engines/docker.h"
#include "adapters/engines/systemd.h"
#include "cli/doctor/doctor_context.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

// In chain mode the hook execs [hook] chain, or NVIDIA's hook: it must be there.
void ChainTarget(Context& c) {
  const std::string& chain = c.config().config.chain;
  const std::string target = !chain.empty() ? chain : std::string(engines::kNvidiaHookPath);
  const std::string origin = !chain.empty() ? "[hook] chain" : "the default chain target";
  auto found = c.ops().WhichIn(target, "");
  if (!found) {
    c.Add("docker", CheckStatus::kFail,
          origin + " " + Quote(target) +
              " is missing or not executable: docker --gpus containers fail to start",
          target, "install NVIDIA's hook there, or set [hook] chain to where it is");
  } else if (c.IsOurs(*found, engines::kHookName)) {
    c.Add("docker", CheckStatus::kFail,
          origin + " " + Quote(target) + " is oci-rlimit-hook itself: it would exec itself", target,
          "point [hook] chain at NVIDIA's real nvidia-container-runtime-hook");
  } else {
    c.Add("docker", CheckStatus::kOk, origin + " " + Quote(target) + " is NVIDIA's hook", target);
  }
}

// dockerd looks the hook up on its own PATH, from its unit, not ours.
void GpusHook(Context& c, const std::string& docker_path) {
  auto nvidia = c.ops().WhichIn(std::string(engines::kNvidiaHookName), docker_path);
  if (!nvidia) {
    c.Add("docker", CheckStatus::kInfo,
          "no nvidia-container-runtime-hook on dockerd's PATH (" + docker_path +
              "): docker --gpus fails to start containers",
          "",
          "for docker --gpus, link nvidia-container-runtime-hook to oci-rlimit-hook (chain mode, " +
              std::string(kDocDir) + "/deployment.md)");
  } else if (c.IsOurs(*nvidia, engines::kHookName)) {
    c.Add("docker", CheckStatus::kOk,
          "nvidia-container-runtime-hook is oci-rlimit-hook: docker --gpus and --runtime nvidia "
          "containers get the limits (chain mode)",
          *nvidia);
    ChainTarget(c);
  } else {
    c.Add("docker", CheckStatus::kInfo,
          "nvidia-container-runtime-hook is NVIDIA's, not ours: docker --gpus sets no rlimits",
          *nvidia,
          "put oci-rlimit-hook in front of it (chain mode, " + std::string(kDocDir) +
              "/deployment.md)");
  }
}

void Runtimes(Context& c, const engines::DockerConfig& cfg, const std::string& docker_path) {
  const std::string path(engines::kDaemonJson);
  HandlerSet set{"docker", "daemon.json runtime", {}, {}};
  for (const auto& r : cfg.runtimes) {
    Handler h{
        r.name, {r.path, "path", docker_path}, path, "containers run with --runtime " + r.name};
    if (r.path.empty()) {
      h.followable = false;
      h.not_followed = "has no path: doctor does not follow it";
    }
    set.handlers.push_back(std::move(h));
  }
  // dockerd's own runtime, unless daemon.json redefines it.
  if (std::none_of(cfg.runtimes.begin(), cfg.runtimes.end(),
                   [](const auto& r) { return r.name == "runc"; })) {
    set.handlers.push_back({"runc",
                            {"runc", "dockerd's runc", docker_path},
                            "",
                            "containers run with --runtime runc"});
  }
  ResolveHandlers(c, set);
  ReportHandlers(c, set);
  if (std::none_of(set.chains.begin(), set.chains.end(), [](const auto& x) { return x.wrapper; })) {
    c.Add("docker", CheckStatus::kInfo, "no daemon.json runtime runs oci-rlimit-runtime", path);
  }
  const bool set_default = !cfg.default_runtime.empty();
  ReportDefault(c, set,
                {set_default ? cfg.default_runtime : "runc",
                 set_default ? "default-runtime" : "dockerd's default", path,
                 "containers run without --runtime"});
}

}  // namespace

void CheckDocker(Context& c) {
  auto dockerd = c.ops().Which("dockerd");
  if (!dockerd) {
    c.Add("docker", CheckStatus::kInfo, "dockerd is not on PATH");
    return;
  }
  const std::string version = c.VersionOf(*dockerd);
  c.Add("docker", CheckStatus::kOk, "dockerd " + (version.empty() ? "(version unknown)" : version),
        *dockerd);
  const std::string docker_path = engines::ServicePath(c.ops(), "docker.service");
  auto cfg = engines::ReadDockerConfig(c.ops());
  if (!cfg) {
    c.Add("docker", CheckStatus::kFail, cfg.error().Text(), std::string(engines::kDaemonJson),
          "dockerd will not start");
  } else if (!cfg->has_value()) {
    c.Add("docker", CheckStatus::kInfo, "no daemon.json: no extra runtimes",
          std::string(engines::kDaemonJson),
          "add {\"runtimes\":{\"oci-rlimit\":{\"path\":\"/usr/bin/oci-rlimit-runtime\"}}} for "
          "docker run --runtime oci-rlimit");
  } else {
    Runtimes(c, **cfg, docker_path);
  }
  GpusHook(c, docker_path);
  CheckUnit(c, "docker", "docker.service");
}

}  // namespace ocirlimit::doctor
