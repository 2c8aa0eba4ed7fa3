// runc and crun on PATH, our programs, oci-rlimit's config, and the
// daemons' systemd units.
#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "adapters/engines/constants.h"
#include "adapters/engines/systemd.h"
#include "cli/doctor/doctor_context.h"
#include "core/config.h"
#include "formats/text.h"

namespace ocirlimit::doctor {

void CheckRuntimes(Context& c) {
  bool any = false;
  for (const std::string name : {"runc", "crun"}) {
    auto path = c.ops().Which(name);
    if (!path) {
      c.Add(name, CheckStatus::kInfo, name + " is not on PATH");
      continue;
    }
    any = true;
    if (c.IsOurs(*path, engines::kWrapperName)) {
      c.Add(name, CheckStatus::kOk, name + " on PATH is oci-rlimit-runtime (runtime mode)", *path);
      continue;
    }
    std::string version = c.VersionOf(*path);
    std::string what = name + " " + (version.empty() ? "(version unknown)" : version);
    if (name == "runc") {
      c.Add(name, CheckStatus::kOk,
            what +
                ": applies the spec's process.rlimits after hooks, so a same-type spec entry "
                "wins over oci-rlimit-hook",
            *path, "for types the spec sets too, use oci-rlimit-runtime (runtime mode)");
    } else {
      c.Add(name, CheckStatus::kOk,
            what + ": applies the spec's process.rlimits before hooks, so oci-rlimit-hook wins",
            *path);
    }
  }
  if (!any) {
    c.Add("runtime", CheckStatus::kFail, "neither runc nor crun is on PATH", "",
          "install runc or crun");
  }
}

void CheckOurPrograms(Context& c) {
  for (std::string_view n : {engines::kHookName, engines::kWrapperName, engines::kHelperName}) {
    const std::string name(n);
    if (auto path = c.ops().Which(name)) {
      c.Add("oci-rlimit", CheckStatus::kOk, name + " is installed", *path);
    } else {
      c.Add("oci-rlimit", CheckStatus::kInfo, name + " is not on PATH");
    }
  }
}

namespace {

// Limits docker.service's environment gives the hook in chain mode (dockerd
// passes its environment to the prestart hook): "NAME=VALUE" and the unit
// file that set it, or nullopt.
std::optional<std::pair<std::string, std::string>> DockerUnitRlimits(Context& c) {
  auto files = engines::UnitFiles(c.ops(), "docker.service");
  std::vector<std::string> texts;
  texts.reserve(files.size());
  for (const auto& [path, text] : files) texts.push_back(text);
  for (std::string_view name : {kRlimitsEnv, kNvidiaRlimitsEnv}) {
    auto value = engines::EnvironmentFromUnits(texts, name);
    if (!value || value->empty()) continue;
    std::string from = files.empty() ? "" : files[0].first;
    for (const auto& [path, text] : files) {
      if (engines::EnvironmentFromUnits({text}, name)) from = path;
    }
    return std::pair{std::string(name) + "=" + *value, from};
  }
  return std::nullopt;
}

}  // namespace

// The config as the hook, the wrapper and the NRI plugin read it: config.d's
// drop-ins, then the file. A setting is named by the file it came from.
namespace {

// on-error = "warn" with the "spec" source: under runc the hook cannot lower
// a spec entry over its ceiling (runc applies process.rlimits after hooks),
// so it warns and the container keeps it (docs/policy.md).
void SpecKeptUnderWarn(Context& c) {
  const Config& cfg = c.config().config;
  const auto& sources = cfg.requests.sources;
  if (cfg.on_error != OnError::kWarn || !cfg.requests.enabled ||
      std::find(sources.begin(), sources.end(), RequestSource::kSpec) == sources.end()) {
    return;
  }
  c.Add("config", CheckStatus::kWarn,
        "on-error = \"warn\" with \"spec\" in requests.sources: under runc the hook cannot "
        "lower a process.rlimits entry over its ceiling, so the container keeps that entry (a "
        "warning is logged); the wrapper and the NRI plugin clamp it",
        c.config().path,
        "on-error = \"fail\" refuses such a container at the hook; or use oci-rlimit-runtime "
        "or oci-rlimit-nri (" +
            std::string(kDocDir) + "/policy.md)");
}

}  // namespace

void CheckOurConfig(Context& c) {
  c.set_config(engines::ReadOurConfig(c.ops(), c.options().config_path));
  const engines::OurConfig& cfg = c.config();
  switch (cfg.state) {
    case engines::OurConfigState::kAbsent:
      if (c.options().config_named) {
        c.Add("config", CheckStatus::kFail,
              "no such file, named by --config or $" + std::string(kConfigEnv) +
                  ": every program given this path fails",
              cfg.path, "write it, or name the config the node's programs read");
        return;
      }
      if (auto env = DockerUnitRlimits(c)) {
        c.Add("config", CheckStatus::kInfo,
              "no config file: docker.service's " + env->first + " gives the hook its limits " +
                  "(docker --gpus chain mode); other paths apply nothing",
              env->second,
              "write " + cfg.path + " for them (" + std::string(kDocDir) + "/policy.md)");
        return;
      }
      c.Add("config", CheckStatus::kWarn, "no config: the hook and the wrapper apply nothing",
            cfg.path, "write " + cfg.path + " (" + std::string(kDocDir) + "/policy.md)");
      return;
    case engines::OurConfigState::kUnreadable:
      c.Add("config", CheckStatus::kFail, cfg.error, cfg.error_path);
      return;
    case engines::OurConfigState::kInvalid:
      c.Add("config", CheckStatus::kFail, cfg.error, cfg.error_path,
            "fix it: every container start fails closed (oci-rlimit validate)");
      return;
    case engines::OurConfigState::kParsed:
      break;
  }
  const bool has_file = !cfg.files.empty() && cfg.files.back().path == cfg.path;
  const size_t dropins = cfg.files.size() - (has_file ? 1 : 0);
  std::ostringstream os;
  os << cfg.config.rlimits.size() << " default limit(s), " << cfg.config.rules.size()
     << " rule(s), requests " << (cfg.config.requests.enabled ? "enabled" : "disabled");
  if (dropins > 0) os << " (" << dropins << " drop-in(s) in " << cfg.dropin_dir << ")";
  if (!has_file) os << "; " << cfg.path << " does not exist";
  c.Add("config", CheckStatus::kOk, os.str(), has_file ? cfg.path : cfg.dropin_dir);
  SpecKeptUnderWarn(c);
}

namespace {

// The unit's LimitMEMLOCK and the file that last set it (or the unit file).
std::pair<std::optional<std::string>, std::string> LimitMemlock(NodeFiles& fs,
                                                                const std::string& unit) {
  auto files = engines::UnitFiles(fs, unit);
  if (files.empty()) return {std::nullopt, ""};
  std::vector<std::string> texts;
  std::optional<std::string> value;
  std::string from = files[0].first;
  for (const auto& [path, text] : files) {
    texts.push_back(text);
    auto now = engines::LimitMemlockFromUnits(texts);
    if (now != value || engines::LimitMemlockFromUnits({text}).has_value()) from = path;
    value = now;
  }
  return {value, from};
}

}  // namespace

void CheckUnit(Context& c, const std::string& area, const std::string& unit) {
  auto [limit, path] = LimitMemlock(c.ops(), unit);
  if (path.empty()) {
    c.Add(area, CheckStatus::kInfo, "no systemd unit " + unit + " in the unit directories");
    return;
  }
  if (!limit) {
    c.Add(area, CheckStatus::kInfo,
          unit +
              " sets no LimitMEMLOCK: containers inherit systemd's default (8M on most "
              "systems) unless oci-rlimit sets it",
          path);
  } else if (*limit == "infinity") {
    c.Add(area, CheckStatus::kWarn,
          unit +
              " has LimitMEMLOCK=infinity: every container of this daemon gets unlimited "
              "memlock, not only those oci-rlimit selects",
          path, "drop LimitMEMLOCK=infinity and let oci-rlimit rules select containers");
  } else {
    c.Add(area, CheckStatus::kInfo,
          unit + " has LimitMEMLOCK=" + *limit +
              ": containers inherit it unless oci-rlimit sets memlock",
          path);
  }
}

}  // namespace ocirlimit::doctor
