// containerd: its config (versions 2 and 3, imports), every handler's
// chain, what pods without a runtimeClassName get, its unit and its NRI.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "adapters/engines/constants.h"
#include "adapters/engines/containerd.h"
#include "adapters/engines/systemd.h"
#include "cli/doctor/doctor_context.h"
#include "core/config.h"
#include "core/pattern.h"
#include "core/policy.h"
#include "core/requests.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

using engines::ContainerdConfig;
using engines::ContainerdHandler;

void VersionLine(Context& c, int64_t v, const std::string& path) {
  c.Add("containerd", v == 2 || v == 3 ? CheckStatus::kInfo : CheckStatus::kWarn,
        "config version " + std::to_string(v) +
            (v == 3   ? ": handlers under plugins.\"io.containerd.cri.v1.runtime\" (containerd 2.x)"
             : v == 2 ? ": handlers under plugins.\"io.containerd.grpc.v1.cri\" (containerd 1.x; "
                        "2.x migrates it on load)"
                      : ": not 2 or 3; containerd reads no handler table oci-rlimit knows"),
        path);
}

void IgnoredHandler(Context& c, const ContainerdHandler& h, int64_t version) {
  c.Add("containerd", CheckStatus::kFail,
        "runtime handler " + Quote(h.name) + " is under plugins." + Quote(h.plugin) +
            ", which a version " + std::to_string(version) +
            " config does not read: containerd ignores it, and pods with runtimeClassName " +
            h.name + " fail (no runtime for " + Quote(h.name) + " is configured)",
        h.source,
        std::string("move it under plugins.") +
            Quote(version == 3 ? engines::kCriPluginV3 : engines::kCriPluginV2) +
            ".containerd.runtimes (oci-rlimit node containerd install does this)");
}

// An upgraded node (issue 38): config.toml still version 2, and a version 3
// import (NVIDIA's conf.d/99-nvidia.toml, a copy of the whole CRI table from
// `containerd config dump`) makes the merged config version 3. containerd 2.x
// then reads only the import's handlers (the real 2.1.9's `config dump`:
// config.toml's version 2 table is dropped, not migrated), so a handler the
// import also defines is served from there: no failure, but config.toml's
// table of it has no effect. One defined nowhere else is ignored: FAIL.
void UnreadHandler(Context& c, const ContainerdConfig& cfg, const ContainerdHandler& h) {
  auto served = std::find_if(cfg.handlers.begin(), cfg.handlers.end(),
                             [&](const auto& x) { return x.read && x.name == h.name; });
  if (served == cfg.handlers.end()) {
    IgnoredHandler(c, h, cfg.version);
    return;
  }
  c.Add("containerd", CheckStatus::kInfo,
        "runtime handler " + Quote(h.name) + " under plugins." + Quote(h.plugin) +
            " is not read (the merged config is version " + std::to_string(cfg.version) +
            "); containerd serves " + Quote(h.name) + " from " + served->source +
            ": edit it there, this table has no effect",
        h.source);
}

bool RuncShim(const std::string& type) {
  return type.empty() || type == engines::kRuncShimV2 || type == "io.containerd.runc.v1";
}

HandlerSet Handlers(const ContainerdConfig& cfg, const std::string& path_list) {
  HandlerSet set{"containerd", "runtime handler", {}, {}};
  std::vector<ContainerdHandler> read;
  for (const auto& h : cfg.handlers) {
    if (h.read) read.push_back(h);
  }
  // containerd's own defaults keep handler runc unless the file redefines it.
  if (std::none_of(read.begin(), read.end(), [](const auto& h) { return h.name == "runc"; })) {
    read.push_back({"", true, "runc", std::string(engines::kRuncShimV2), "", {}, ""});
  }
  for (const auto& h : read) {
    Handler out;
    out.name = h.name;
    out.path = h.source;
    out.who = "pods with runtimeClassName " + h.name;
    out.start = {h.binary_name.empty() ? "runc" : h.binary_name,
                 h.binary_name.empty() ? "runc (no BinaryName)" : "BinaryName", path_list};
    out.followable = RuncShim(h.runtime_type);
    out.not_followed = "(" + h.runtime_type + ") is not a runc shim: doctor does not follow it";
    set.handlers.push_back(std::move(out));
  }
  return set;
}

// The pod annotation each configured annotation source reads (a key as a
// pod writes it) and the pod_annotations glob that passes it.
std::vector<std::pair<std::string, std::string>> RequestKeys(const Requests& req) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (RequestSource s : req.sources) {
    if (s == RequestSource::kOciRlimit) keys.emplace_back(kRequestAnnotation, "oci-rlimit.io/*");
    if (s == RequestSource::kUlimitAdjuster) {
      keys.emplace_back(std::string(kUlimitAdjusterKey) + "NAME", "ulimits.noderesource.dev/*");
    }
  }
  return keys;
}

// With requests enabled, a handler that runs the wrapper must pass the
// pod's annotations that the request sources read into the spec.
void PodAnnotations(Context& c, const ContainerdConfig& cfg, const HandlerSet& set) {
  const Requests& req = c.config().config.requests;
  for (size_t i = 0; i < set.handlers.size(); ++i) {
    if (!set.chains[i].wrapper || set.chains[i].end != engines::ChainEnd::kRuntime ||
        set.failed[i]) {
      continue;
    }
    const ContainerdHandler* h = engines::FindHandler(cfg, set.handlers[i].name);
    if (h == nullptr) continue;
    for (const auto& entry : RequestKeys(req)) {
      const std::string& key = entry.first;
      const std::string& glob = entry.second;
      bool passes = std::any_of(h->pod_annotations.begin(), h->pod_annotations.end(),
                                [&](const std::string& g) { return GlobMatch(g, key, false); });
      if (req.enabled && !passes) {
        c.Add("containerd", CheckStatus::kWarn,
              "requests are enabled but handler " + Quote(h->name) +
                  " does not pass the pod annotation " + key + " to the spec",
              h->source, "add pod_annotations = [\"" + glob + "\"] to the handler");
      } else if (passes) {
        c.Add("containerd", CheckStatus::kOk,
              "handler " + Quote(h->name) + " passes the pod annotation " + key + " to the spec",
              h->source);
      }
    }
  }
}

// containerd 1.x: a handler in a file whose CRI table a later import
// replaced whole (NVIDIA's conf.d/99-nvidia.toml) is not there at all.
void HiddenHandlers(Context& c, const engines::ContainerdFiles& files) {
  for (const auto& h : files.hidden) {
    if (engines::FindHandler(files.config, h.name) != nullptr) continue;
    c.Add("containerd", CheckStatus::kFail,
          "runtime handler " + Quote(h.name) + " is hidden: containerd " +
              std::to_string(files.major) + ".x reads the CRI table only from " + files.cri_source +
              ", which replaces this file's whole (an import's table is not merged before 2.0); "
              "pods with runtimeClassName " +
              h.name + " fail (no runtime for " + Quote(h.name) + " is configured)",
          h.source,
          "define the handler in " + files.cri_source +
              " too, or move to containerd 2.x, which merges imports key by key");
  }
}

// What fixes a handler the installer set up that containerd does not read.
// containerd 1.x with the CRI table from an import (NVIDIA's drop-in): the
// installer refuses to write a handler that would be hidden, so rerunning it
// is no fix (issue 38).
std::string InstallAdvice(const engines::ContainerdFiles& files) {
  if (files.major < 2 && files.cri_source != files.read.front()) {
    return "define the handler in " + files.cri_source +
           " too (containerd 1.x replaces config.toml's CRI table with that file's; "
           "oci-rlimit node install refuses while it does), or move to containerd 2.x";
  }
  return "rerun oci-rlimit node install (docs/deployment.md)";
}

// The installer put a handler here: containerd must see it.
void InstalledHandler(Context& c, const engines::ContainerdFiles& files) {
  const auto& mode = c.installer_mode;
  if (!mode || std::find(mode->runtimes.begin(), mode->runtimes.end(), "containerd") ==
                   mode->runtimes.end()) {
    return;
  }
  if (engines::FindHandler(files.config, "oci-rlimit") != nullptr) return;
  c.Add("containerd", CheckStatus::kFail,
        "oci-rlimit node install set up runtime handler \"oci-rlimit\", but containerd " +
            std::to_string(files.major) + ".x reads none: its CRI table comes from " +
            files.cri_source,
        files.cri_source, InstallAdvice(files));
}

void Configured(Context& c, const engines::ContainerdFiles& files) {
  const ContainerdConfig& cfg = files.config;
  const std::string& main = files.read.front();
  VersionLine(c, cfg.version, main);
  for (const auto& h : cfg.handlers) {
    if (!h.read) UnreadHandler(c, cfg, h);
  }
  HiddenHandlers(c, files);
  InstalledHandler(c, files);
  if (engines::CriPluginFor(cfg.version).empty()) return;
  HandlerSet set = Handlers(cfg, engines::ServicePath(c.ops(), "containerd.service"));
  ResolveHandlers(c, set);
  ReportHandlers(c, set);
  PodAnnotations(c, cfg, set);
  if (std::none_of(set.chains.begin(), set.chains.end(), [](const auto& x) { return x.wrapper; })) {
    c.Add("containerd", CheckStatus::kInfo, "no runtime handler runs oci-rlimit-runtime", main);
  }
  ReportDefault(c, set,
                {engines::DefaultHandlerName(cfg),
                 cfg.default_runtime_name ? "default_runtime_name" : "containerd's default", main});
}

// containerd's NRI: 1.7 or later, off before 2.0 unless enabled.
void Nri(Context& c, const ContainerdConfig& cfg, const std::string& path,
         const std::string& version) {
  const int major = version.empty() ? 0 : std::atoi(version.c_str());
  const size_t dot = version.find('.');
  const int minor = dot == std::string::npos ? 0 : std::atoi(version.c_str() + dot + 1);
  if (major == 1 && minor < 7) {
    const bool crio = c.ops().Which("crio").has_value();
    c.Add(
        "nri", CheckStatus::kInfo, "containerd " + version + " has no NRI (1.7 or later)", "",
        crio ? "" : "oci-rlimit-nri needs containerd 1.7 or later; use the RuntimeClass path here");
    if (!crio) RunningNriWithoutEndpoint(c, "containerd " + version + " on PATH has no NRI");
    return;
  }
  const engines::ContainerdNri nri = engines::NriSettings(cfg, major);
  CheckNri(c, {"containerd", nri.enabled, nri.socket_path, nri.plugin_path, path,
               "for oci-rlimit-nri, set disable = false under "
               "[plugins.\"io.containerd.nri.v1.nri\"] (" +
                   std::string(kDocDir) + "/nri.md)"});
}

}  // namespace

void CheckContainerd(Context& c) {
  auto bin = c.ops().Which("containerd");
  if (!bin) {
    c.Add("containerd", CheckStatus::kInfo, "containerd is not on PATH");
    return;
  }
  const std::string version = c.VersionOf(*bin);
  c.Add("containerd", CheckStatus::kOk,
        "containerd " + (version.empty() ? "(version unknown)" : version), *bin);
  const std::string path(engines::kContainerdConfig);
  CheckEngineReadsItsConfig(c, "containerd", "containerd", path, "/etc/containerd/conf.d");
  auto files = engines::ReadContainerdConfig(c.ops(), engines::ContainerdMajor(version));
  ContainerdConfig cfg;
  if (!files) {
    c.Add("containerd", CheckStatus::kFail, files.error().Text(), path,
          "containerd will not start with this config");
  } else if (!files->has_value()) {
    c.Add("containerd", CheckStatus::kInfo,
          "no config.toml: built-in defaults, no runtime handler runs oci-rlimit-runtime", path,
          "add a runtime handler with BinaryName = \"/usr/bin/oci-rlimit-runtime\" (" +
              std::string(kDocDir) + "/deployment.md)");
  } else {
    cfg = (*files)->config;
    Configured(c, **files);
  }
  CheckUnit(c, "containerd", "containerd.service");
  if (files) Nri(c, cfg, path, version);
}

}  // namespace ocirlimit::doctor
