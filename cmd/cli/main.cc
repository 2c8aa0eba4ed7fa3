// oci-rlimit: the admin CLI. validate checks a config, explain shows what
// it does to one bundle, doctor inspects this node, audit checks (and with
// --heal fixes) every running container. Each prints a table, or
// JSON with --json, and exits 1 when something is wrong (2: usage).
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/audit.h"
#include "cli/doctor.h"
#include "cli/explain.h"
#include "cli/node_cmd.h"
#include "cli/node_ops.h"
#include "core/text.h"
#include "core/version.h"
#include "effects/config_loader.h"
#include "effects/files.h"

namespace ocirlimit {
namespace {

constexpr const char* kName = "oci-rlimit";
constexpr size_t kMaxSpecBytes = 64 << 20;

constexpr const char* kUsage =
    "usage: oci-rlimit validate [--config PATH] [--json]\n"
    "       oci-rlimit explain --bundle DIR [--config PATH] [--json]\n"
    "       oci-rlimit doctor [--root DIR] [--config PATH] [--json]\n"
    "       oci-rlimit audit [--config PATH] [--runtime-root DIR]... [--no-default-roots]\n"
    "                        [--json] [--heal]\n"
    "       oci-rlimit node containerd install|uninstall ...  (oci-rlimit node --help)\n"
    "       oci-rlimit --help | --version\n"
    "\n"
    "validate  checks a config and prints the effective limits, rules and requests;\n"
    "          labels each rule condition [author] or [node] and warns on a rule that\n"
    "          reads only facts a container's author sets (env, annotations).\n"
    "explain   shows which rules match DIR/config.json, the limits oci-rlimit would set,\n"
    "          conflicts with the spec's own process.rlimits, and what runc, crun and\n"
    "          oci-rlimit-runtime each end up giving the container.\n"
    "doctor    inspects the node (or a copy of one under --root): runc and crun, docker,\n"
    "          containerd, CRI-O, each handler's exec chain and what its pods get, NRI,\n"
    "          podman/CRI-O hooks dirs, systemd LimitMEMLOCK, CAP_SYS_RESOURCE. Its --config\n"
    "          is a node path (inside --root), else the default; not $OCI_RLIMIT_CONFIG.\n"
    "audit     finds the running containers in the runtimes' state roots (containerd's\n"
    "          runc roots in every namespace, docker, CRI-O and podman's /run/runc and\n"
    "          /run/crun, plus each --runtime-root; with --no-default-roots only those)\n"
    "          and says of each init process: ok, missing (lower than the policy gives),\n"
    "          over (higher), refused (its request is refused, yet it runs) or unknown\n"
    "          (why). --heal sets each missing, over or refused one to what the policy\n"
    "          gives (refused: the node's limits); exec sessions started later still\n"
    "          follow the spec's own rlimits.\n"
    "\n"
    "Config: --config PATH, else $OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml,\n"
    "with the $OCI_RLIMIT_RLIMITS overrides, as the hook and the wrapper read it.\n"
    "Exit status: 0 fine, 1 something is wrong, 2 usage error (audit: or a config error).\n";

struct Args {
  std::string command;
  std::optional<std::string> config;
  std::string bundle;
  std::string root = "/";
  std::vector<std::string> runtime_roots;
  bool json = false;
  bool heal = false;
  bool no_default_roots = false;
};

Result<Args> ParseArgs(const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    auto value = [&](const std::string& flag) -> Result<std::string> {
      if (i + 1 == argv.size() || argv[i + 1].empty()) return MakeError(flag + ": missing value");
      return argv[++i];
    };
    if (s == "--json") {
      a.json = true;
    } else if (s == "--heal") {
      a.heal = true;
    } else if (s == "--no-default-roots") {
      a.no_default_roots = true;
    } else if (s == "--config" || s == "--bundle" || s == "--root" || s == "--runtime-root") {
      auto v = value(s);
      if (!v) return v.error();
      if (s == "--config") a.config = *v;
      if (s == "--bundle") a.bundle = *v;
      if (s == "--root") a.root = *v;
      if (s == "--runtime-root") a.runtime_roots.push_back(*v);
    } else if (s == "-h" || s == "--help" || s == "--version") {
      a.command = s;
      return a;
    } else if (s.starts_with("-")) {
      return MakeError("unknown flag " + Quote(s));
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      return MakeError("unexpected argument " + Quote(s));
    }
  }
  if (a.command.empty()) return MakeError("missing command: validate, explain, doctor or audit");
  if (a.command != "validate" && a.command != "explain" && a.command != "doctor" &&
      a.command != "audit" && !a.command.starts_with("-")) {
    return MakeError("unknown command " + Quote(a.command));
  }
  if (a.command == "explain" && a.bundle.empty()) return MakeError("explain: --bundle is required");
  if (a.command != "explain" && !a.bundle.empty()) return MakeError("--bundle: only for explain");
  if (a.command != "doctor" && a.root != "/") return MakeError("--root: only for doctor");
  if (a.command != "audit" && !a.runtime_roots.empty()) {
    return MakeError("--runtime-root: only for audit");
  }
  if (a.command != "audit" && a.heal) return MakeError("--heal: only for audit");
  if (a.command != "audit" && a.no_default_roots) {
    return MakeError("--no-default-roots: only for audit");
  }
  if (a.no_default_roots && a.runtime_roots.empty()) {
    return MakeError("--no-default-roots: needs a --runtime-root");
  }
  return a;
}

int Report(const Args& a, const Error& e) {
  if (a.json) {
    std::cout << Json({{"ok", false}, {"error", e.Text()}}).dump(2) << "\n";
  }
  std::cerr << kName << ": " << e.Text() << "\n";
  return 1;
}

int Validate(const Args& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) return Report(a, cfg.error());
  std::cout << (a.json ? ValidateJson(*cfg).dump(2) + "\n" : ValidateText(*cfg));
  return 0;
}

int ExplainBundle(const Args& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) return Report(a, cfg.error());
  const std::string path = a.bundle + "/config.json";
  auto text = ReadFileBounded(path, kMaxSpecBytes);
  if (!text) return Report(a, text.error().Wrap("bundle"));
  auto spec = ParseJsonObject(*text, path);
  if (!spec) return Report(a, spec.error());
  auto e = Explain(*cfg, *spec, path);
  if (!e) return Report(a, e.error().Wrap(path));
  std::cout << (a.json ? ExplainJson(*e).dump(2) + "\n" : ExplainText(*e));
  return e->error.empty() ? 0 : 1;
}

int Doctor(const Args& a) {
  auto ops = RootedNodeOps(a.root);
  DoctorOptions options;
  if (a.config) options.config_path = *a.config;  // a node path, under --root too
  options.rooted = a.root != "/";
  DoctorReport r = RunDoctor(*ops, options);
  std::cout << (a.json ? DoctorJson(r).dump(2) + "\n" : DoctorText(r));
  return r.ok() ? 0 : 1;
}

// Config errors and a --runtime-root that is not a directory are exit 2:
// nothing was audited.
int Audit(const Args& a) {
  auto cfg = LoadConfig(a.config, ProcessEnv());
  if (!cfg) {
    Report(a, cfg.error());
    return 2;
  }
  std::vector<std::string> roots;
  if (!a.no_default_roots) roots = DefaultStateRoots();
  for (const auto& r : a.runtime_roots) {
    if (auto listed = LinuxFsOps().ListDir(r); !listed) {
      Report(a, listed.error().Wrap("--runtime-root"));
      return 2;
    }
    roots.push_back(r);
  }
  AuditRun run{*cfg, LinuxFsOps(), LinuxProcessOps(), roots, a.heal, nullptr, Rfc3339Now};
  if (!cfg->log_file.empty()) {
    run.log = [&](const std::string& line) {
      if (auto logged = AppendLine(cfg->log_file, line); !logged) {
        std::cerr << kName << ": warning: log-file: " << logged.error().Text() << "\n";
      }
    };
  }
  AuditReport r = RunAudit(run);
  std::cout << (a.json ? AuditJson(r).dump(2) + "\n" : AuditText(r));
  return r.ok() ? 0 : 1;
}

int Main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "node") {
    return NodeMain(std::vector<std::string>(argv + 2, argv + argc));
  }
  auto args = ParseArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!args) {
    std::cerr << kName << ": " << args.error().Text() << "\n" << kUsage;
    return 2;
  }
  if (args->command == "-h" || args->command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  if (args->command == "--version") {
    std::cout << kName << " " << kVersion << "\n";
    return 0;
  }
  if (args->command == "validate") return Validate(*args);
  if (args->command == "explain") return ExplainBundle(*args);
  if (args->command == "audit") return Audit(*args);
  return Doctor(*args);
}

}  // namespace
}  // namespace ocirlimit

int main(int argc, char** argv) {
  // Nothing should throw (errors are values); if the library does (bad_alloc),
  // say so in one line instead of aborting.
  try {
    return ocirlimit::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "oci-rlimit: internal error: " << e.what() << "\n";
    return 1;
  }
}
