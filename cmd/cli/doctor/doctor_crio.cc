// CRI-O: crio.conf and crio.conf.d (every file, in name order), every
// handler's chain, the default handler, its unit and its NRI.
#include <algorithm>

#include "adapters/engines/constants.h"
#include "adapters/engines/crio.h"
#include "adapters/engines/systemd.h"
#include "cli/doctor/doctor_context.h"
#include "formats/text.h"
#include "node/node_files.h"
#include "node/node_restart.h"

namespace ocirlimit::doctor {
namespace {

constexpr const char* kArea = "CRI-O";

// An allowed_annotations entry CRI-O does not know makes it drop the
// handler (and refuse to start, for the default one).
std::string UnknownAllowed(const engines::CrioRuntime& r) {
  for (const auto& a : r.allowed_annotations) {
    if (a.starts_with("oci-rlimit.io/")) return a;
  }
  return "";
}

HandlerSet Handlers(Context& c, const engines::CrioConfig& cfg) {
  HandlerSet set{kArea, "runtime handler", {}, {}};
  const bool pending = RestartPendingSince(c, "crio").has_value();
  const std::string crio_path = engines::ServicePath(c.ops(), "crio.service");
  for (const auto& r : cfg.runtimes) {
    if (const std::string bad = UnknownAllowed(r); !bad.empty()) {
      c.Add(kArea, CheckStatus::kFail,
            Cat("runtime handler ", Quote(r.name), ": allowed_annotations names ", Quote(bad),
                ", which CRI-O does not know: it drops the handler (refuses to start, for the "
                "default one), and pods with runtimeClassName ",
                r.name, " fail"),
            r.source, "remove it: CRI-O passes every pod annotation to the spec anyway");
      continue;
    }
    std::string binary = r.runtime_path;
    if (binary.empty()) binary = c.ops().WhichIn(r.name, crio_path).value_or(r.name);
    const char* via =
        r.runtime_path.empty() ? "the handler's name (no runtime_path)" : "runtime_path";
    set.handlers.push_back({r.name,
                            {binary, via, engines::MonitorPath(r)},
                            r.source,
                            "pods with runtimeClassName " + r.name,
                            r.runtime_type.empty() || r.runtime_type == "oci",
                            "(runtime_type " + r.runtime_type + ") is not followed by doctor"});
    if (pending && r.source == node::kCrioHandler) {
      set.handlers.back().pending =
          "crio started before oci-rlimit's installer wrote it, and knows it only once "
          "restarted: pods with runtimeClassName " +
          r.name + " fail until then";
    }
  }
  return set;
}

void Configured(Context& c, const engines::CrioConfig& cfg) {
  HandlerSet set = Handlers(c, cfg);
  ResolveHandlers(c, set);
  ReportHandlers(c, set);
  if (std::none_of(set.chains.begin(), set.chains.end(), [](const auto& x) { return x.wrapper; })) {
    c.Add(kArea, CheckStatus::kInfo, "no runtime handler runs oci-rlimit-runtime",
          std::string(engines::kCrioConfDir));
  }
  const bool set_default = !cfg.default_runtime_source.empty();
  ReportDefault(c, set,
                {cfg.default_runtime, set_default ? "default_runtime" : "CRI-O's default",
                 set_default ? cfg.default_runtime_source : ""});
  CheckNri(c, {"CRI-O", cfg.nri_enabled, cfg.nri_socket, cfg.nri_plugin_dir, cfg.nri_source,
               "for oci-rlimit-nri, set enable_nri = true under [crio.nri] in " +
                   std::string(engines::kCrioConfDir) + "/ (" + std::string(kDocDir) + "/nri.md)"});
}

}  // namespace

void CheckCrio(Context& c) {
  auto bin = c.ops().Which("crio");
  if (!bin) return;  // hooks.d says which engines are here
  const std::string version = c.VersionOf(*bin);
  c.Add(kArea, CheckStatus::kOk, "crio " + (version.empty() ? "(version unknown)" : version), *bin);
  CheckEngineReadsItsConfig(c, kArea, "crio", std::string(engines::kCrioConf),
                            std::string(engines::kCrioConfDir));
  if (RestartPendingSince(c, "crio")) {
    c.Add(kArea, CheckStatus::kWarn,
          "restart pending: oci-rlimit's installer changed crio's config after crio started, and "
          "crio runs a new runtime handler only once restarted (a SIGHUP does not add one)",
          std::string(node::kStateDir) + "/" + node::kRestartFile, "systemctl restart crio");
  }
  auto cfg = engines::ParseCrioConfigs(engines::CrioConfigFiles(c.ops()));
  if (!cfg) {
    c.Add(kArea, CheckStatus::kFail, cfg.error().Text(), "",
          "crio will not start with this config");
  } else {
    if (auto st = engines::CheckCrioMonitors(*cfg); !st) {
      c.Add(kArea, CheckStatus::kFail, st.error().Text(), "",
            "crio will not start with this config: every pod on the node is down until it does");
    }
    Configured(c, *cfg);
  }
  CheckUnit(c, kArea, "crio.service");
}

}  // namespace ocirlimit::doctor
