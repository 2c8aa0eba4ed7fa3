// What doctor's checks share while they run (internal to doctor_*.cc): the
// node, the report being written, oci-rlimit's config as the node's
// programs read it, and the NRI plugin's state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/chain.h"
#include "adapters/engines/our_config.h"
#include "cli/doctor/doctor.h"
#include "node/node_files.h"

namespace ocirlimit::doctor {

class Context {
 public:
  Context(NodeOps& ops, DoctorOptions options);

  NodeOps& ops() { return ops_; }
  const DoctorOptions& options() const { return options_; }
  const engines::OurConfig& config() const { return config_; }
  void set_config(engines::OurConfig c) { config_ = std::move(c); }
  DoctorReport& report() { return report_; }

  void Add(std::string area, CheckStatus s, std::string what, std::string path = "",
           std::string advice = "");
  // True when `path` is, or is a symlink chain to, our program `name`.
  bool IsOurs(const std::string& path, std::string_view name);
  // The version number `path --version` prints, or "".
  std::string VersionOf(const std::string& path);

  // Engines that serve NRI on this node ("containerd", "CRI-O"), for
  // advice that must not send a CRI-O node to the RuntimeClass path.
  std::vector<std::string> nri_engines;
  // The node paths of NVIDIA's runtime where a handler's chain runs it
  // (ResolveHandlers), for the `nvidia-runtime` CDI injector.
  std::vector<std::string> nvidia_runtimes;

  // The node's mode as `oci-rlimit node install` remembered it (its
  // mode.json, node_record.h), or nullopt when the installer never ran here.
  std::optional<node::NodeMode> installer_mode;
  std::string installer_mode_path;

 private:
  NodeOps& ops_;
  DoctorOptions options_;
  engines::OurConfig config_;
  DoctorReport report_;
};

std::string Base(const std::string& path);

// The checks, in report order (each its own file).
void CheckRuntimes(Context& c);     // doctor_programs.cc
void CheckOurPrograms(Context& c);  // doctor_programs.cc
void CheckOurConfig(Context& c);    // doctor_programs.cc
void CheckUnit(Context& c, const std::string& area, const std::string& unit);
void CheckDocker(Context& c);        // doctor_docker.cc
void CheckContainerd(Context& c);    // doctor_containerd.cc
void CheckCrio(Context& c);          // doctor_crio.cc
void CheckHooksDirs(Context& c);     // doctor_hooks.cc
void CheckCapabilities(Context& c);  // doctor.cc
void CheckCdiInjectors(Context& c);  // doctor.cc
void LoadInstallerMode(Context& c);  // doctor_handlers.cc
// When the installer changed `engine`'s config ("crio", "containerd") and
// the engine has run since before that (node_restart.h): the write's time.
std::optional<int64_t> RestartPendingSince(Context& c, const std::string& engine);

// A FAIL when `engine` started before its config (`file`, the directory
// `dir` and its files) last changed: it serves what it read then
// (doctor_engine_state.cc). Silent while the installer's record already says so.
void CheckEngineReadsItsConfig(Context& c, const std::string& area, const std::string& engine,
                               const std::string& file, const std::string& dir);

// One engine's NRI endpoint (doctor_nri.cc).
struct NriEndpoint {
  std::string engine;  // "containerd", "CRI-O"
  bool enabled = false;
  std::string socket_path;
  std::string plugin_path;
  std::string config_path;  // where it is set
  std::string enable_advice;
};
void CheckNri(Context& c, const NriEndpoint& nri);
// NVIDIA's NRI plugin beside ours, and what each GPU path gives (doctor_nvidia_nri.cc).
void CheckNvidiaNri(Context& c, const NriEndpoint& nri);
// The running oci-rlimit-nri processes and their status file when no engine
// on PATH serves NRI (containerd 1.6): `why` says so.
void RunningNriWithoutEndpoint(Context& c, const std::string& why);

// A handler of an engine and who uses it (doctor_handlers.cc).
struct Handler {
  std::string name;
  engines::ChainStart start;
  std::string path = {};  // the config file that defines it
  // The pods or containers that get it: "pods with runtimeClassName X".
  std::string who = {};
  bool followable = true;         // false: not a runc-style runtime doctor can follow
  std::string not_followed = {};  // why, when !followable
  std::string pending = {};       // why the engine does not run it yet (a restart pending)
};
struct HandlerSet {
  std::string area;  // "containerd", "CRI-O", "docker"
  std::string kind;  // "runtime handler", "daemon.json runtime"
  std::vector<Handler> handlers;
  std::vector<engines::Chain> chains = {};  // filled by ResolveHandlers, one per handler
  std::vector<bool> failed = {};            // filled by ReportHandlers: its line is FAIL
};
void ResolveHandlers(Context& c, HandlerSet& set);
// One verdict line per handler: ok only for a chain proved to end at runc
// or crun; FAIL for one that cannot start a container, or that skips
// NVIDIA's runtime where the node or the handler's name says it is meant
// to run; never both.
void ReportHandlers(Context& c, HandlerSet& set);
// What pods without a runtimeClassName (or containers without --runtime) get.
struct DefaultHandler {
  std::string name;    // a handler of the set
  std::string origin;  // "default_runtime_name", "containerd's default"
  std::string path;    // the file that says so
  std::string who = "pods without a runtimeClassName";
};
void ReportDefault(Context& c, const HandlerSet& set, const DefaultHandler& def);
// For a handler whose chain fails: "; N still run (PODS): WAY OUT", or ""
// when none of its pods runs (doctor_engine_state.cc).
std::string RunningPodsAdvice(Context& c, const std::string& area, const Handler& h,
                              const engines::Chain& ch);

}  // namespace ocirlimit::doctor
