#include "cli/doctor/doctor.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

#include "adapters/engines/nvidia.h"
#include "cli/doctor/doctor_context.h"
#include "core/unraisable.h"
#include "effects/heal.h"
#include "formats/text.h"

namespace ocirlimit {
namespace doctor {

constexpr int kCapSysResource = 24;

Context::Context(NodeOps& ops, DoctorOptions options) : ops_(ops), options_(std::move(options)) {}

void Context::Add(std::string area, CheckStatus s, std::string what, std::string path,
                  std::string advice) {
  report_.checks.push_back(
      {std::move(area), s, std::move(what), std::move(path), std::move(advice)});
}

bool Context::IsOurs(const std::string& path, std::string_view name) {
  auto real = ops_.Resolve(path);
  return Base(real.value_or(path)) == name;
}

std::string Context::VersionOf(const std::string& path) {
  auto out = ops_.Version(path);
  if (!out) return "";
  return VersionNumber(*out);
}

std::string Base(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

// The first limit the parsed config gives (top level, then each rule's)
// whose hard limit is above this context's, read from /proc/self/limits.
std::optional<Unraisable> UnraisableConfigured(Context& c) {
  if (c.config().state != engines::OurConfigState::kParsed) return std::nullopt;
  auto text = c.ops().ReadFile("/proc/self/limits");
  if (!text) return std::nullopt;
  auto in_force = ParseProcLimits(*text);
  if (!in_force) return std::nullopt;
  const Config& cfg = c.config().config;
  if (auto u = FindUnraisable(cfg.rlimits, *in_force)) return u;
  for (const auto& r : cfg.rules) {
    if (auto u = FindUnraisable(r.rlimits, *in_force)) return u;
  }
  return std::nullopt;
}

}  // namespace

// This process's capabilities, which the daemons it stands for share on a
// normal host. Under --root the node is another root: its /proc/self/status
// is read when the root has one (a live root does), else nothing is said.
void CheckCapabilities(Context& c) {
  const std::string path = "/proc/self/status";
  auto text = c.ops().ReadFile(path);
  if (!text && c.options().rooted) return;
  if (!text) {
    c.Add("capabilities", CheckStatus::kWarn, "cannot read: " + text.error().Text(), path);
    return;
  }
  auto has = HasCapSysResource(*text);
  if (!has) {
    c.Add("capabilities", CheckStatus::kWarn, has.error().Text(), path);
  } else if (*has) {
    c.Add("capabilities", CheckStatus::kOk,
          "CAP_SYS_RESOURCE is effective: hard limits can be raised", path);
  } else {
    std::string what =
        "no CAP_SYS_RESOURCE here: hooks and runtimes started from this context can lower "
        "limits or raise a soft limit up to the hard one, not raise a hard limit";
    std::string advice = "run the container daemons with CAP_SYS_RESOURCE (root on a normal host)";
    if (auto u = UnraisableConfigured(c)) {
      what += "; " + UnraisableMessage(*u, "this context");
      advice = "change that entry, or " + advice;
    }
    c.Add("capabilities", CheckStatus::kWarn, what, path, advice);
  }
}

// The `nvidia-runtime` CDI injector ([cdi] injectors) is believed only where
// the node can back it (engines::NvidiaInjectorGaps): one warning per gap.
void CheckCdiInjectors(Context& c) {
  if (c.config().state != engines::OurConfigState::kParsed) return;
  const auto& injectors = c.config().config.cdi_injectors;
  if (std::find(injectors.begin(), injectors.end(), kCdiInjectorNvidiaRuntime) == injectors.end()) {
    return;
  }
  for (const auto& gap : engines::NvidiaInjectorGaps(c.ops(), c.nvidia_runtimes)) {
    c.Add("config", CheckStatus::kWarn,
          Cat("[cdi] injectors lists \"nvidia-runtime\", which this node cannot back: ", gap,
              "; a rule's cdi match believes device names NVIDIA's runtime never injects"),
          c.config().path,
          "take \"nvidia-runtime\" out of [cdi] injectors, or run NVIDIA's runtime in the "
          "handlers with the variable accepted (" +
              std::string(kDocDir) + "/policy.md)");
  }
}

}  // namespace doctor

std::string NotInstalled(const RunningProcess& p, std::string_view name) {
  if (p.exe.empty()) return "its executable cannot be read (run doctor as root)";
  std::string_view exe = p.exe;
  if (exe.ends_with(" (deleted)")) exe.remove_suffix(std::string_view(" (deleted)").size());
  const size_t slash = exe.rfind('/');
  if (exe.substr(slash == std::string_view::npos ? 0 : slash + 1) != name) {
    return Cat("its executable is ", Quote(p.exe), ", not ", name);
  }
  if (!p.exe_root_owned) {
    return Cat("its executable ", Quote(p.exe), " is not root's, or others may write it");
  }
  if (!p.root_uid) return "it does not run as root";
  if (!p.host_namespaces) return "it runs in its own PID or mount namespace";
  return "";
}

const char* StatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kInfo:
      return "info";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "FAIL";
  }
  return "?";
}

bool DoctorReport::ok() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const Check& c) { return c.status == CheckStatus::kFail; });
}

void ResolveDoctorConfig(DoctorOptions& options, const std::optional<std::string>& flag,
                         const EnvLookup& env) {
  const ConfigPath where = ResolveConfigPath(flag, env);
  options.config_path = where.path;
  options.config_named = where.must_exist;
}

DoctorReport RunDoctor(NodeOps& ops, const DoctorOptions& options) {
  doctor::Context c(ops, options);
  doctor::LoadInstallerMode(c);
  doctor::CheckRuntimes(c);
  doctor::CheckOurPrograms(c);
  doctor::CheckOurConfig(c);
  doctor::CheckDocker(c);
  doctor::CheckContainerd(c);
  doctor::CheckCrio(c);
  doctor::CheckHooksDirs(c);
  doctor::CheckCdiInjectors(c);
  doctor::CheckCapabilities(c);
  return std::move(c.report());
}

std::string DoctorText(const DoctorReport& report) {
  std::ostringstream os;
  for (const auto& c : report.checks) {
    std::string status = StatusName(c.status);
    std::string area = c.area;
    status.resize(6, ' ');
    area.resize(std::max<size_t>(area.size() + 1, 13), ' ');
    os << status << area << c.what << "\n";
    if (!c.path.empty()) os << std::string(19, ' ') << "path: " << c.path << "\n";
    if (!c.advice.empty()) os << std::string(19, ' ') << "fix: " << c.advice << "\n";
  }
  os << (report.ok() ? "doctor: no failures\n" : "doctor: FAILED checks above\n");
  return os.str();
}

Json DoctorJson(const DoctorReport& report) {
  Json checks = Json::array();
  for (const auto& c : report.checks) {
    checks.push_back({{"area", c.area},
                      {"status", StatusName(c.status)},
                      {"what", c.what},
                      {"path", c.path},
                      {"advice", c.advice}});
  }
  return {{"ok", report.ok()}, {"checks", checks}};
}

Result<bool> HasCapSysResource(const std::string& proc_status) {
  std::istringstream lines(proc_status);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("CapEff:")) continue;
    std::string hex(Trim(std::string_view(line).substr(7)));
    if (hex.empty() || hex.size() > 16 ||
        !std::all_of(hex.begin(), hex.end(), [](unsigned char c) { return std::isxdigit(c); })) {
      return MakeError("CapEff: " + Quote(hex) + " is not a hex mask");
    }
    uint64_t mask = std::stoull(hex, nullptr, 16);
    return ((mask >> doctor::kCapSysResource) & 1U) != 0;
  }
  return MakeError("no CapEff line");
}

}  // namespace ocirlimit
