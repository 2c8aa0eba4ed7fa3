// The lifecycle test's model of a node (docs/daemons-testing.md, "The
// lifecycle test"): which operation may come next, and what every running
// container's init and a new exec must read after it. Pure, so its rule is
// tested on its own (lifecycle_model_test.cc) and a failing sequence replays
// from its seed.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest::lifecycle {

// What a pod asks for.
enum class PodKind {
  kPlain,    // nothing: the engine's own limits
  kTier,     // example.com/tier=a: the tier rule of the policy in force
  kAsk,      // oci-rlimit.io/rlimits: a request under the ceiling
  kHandler,  // runtimeClassName oci-rlimit (the wrapper) and example.com/tier=a
  kCdi,      // NVIDIA's CDI annotation nvidia.cdi.k8s.io/pod: the cdi rule
};

enum class OpKind {
  kCreate,         // a pod of `pod`
  kDelete,         // the pod at `index` among the running ones
  kPluginRestart,  // SIGKILL oci-rlimit-nri, start it again
  kPluginStop,     // SIGKILL, left down
  kPluginStart,
  kEngineRestart,  // the engine stops and starts; pods keep running
  kPolicyChange,   // the tier rule's limit changes (SIGHUP to a running plugin)
  kReboot,         // every process stopped, /run emptied, all started again
  // our installer (lifecycle_installer.h)
  kInstall,    // install.sh, a rerun when installed; the engine reads it at its restart
  kUninstall,  // install.sh --uninstall: refused (exit 3, nothing removed) while handler pods run
  kInstallKilled,  // install.sh SIGKILLed after `index` ms, then rerun to its end
  // upgrades and NVIDIA's tools
  kOldBinaries,      // the plugin and wrapper of an earlier commit replace ours (no pod runs)
  kUpgrade,          // the current plugin and wrapper replace the earlier commit's
  kNvidiaConfigure,  // nvidia-ctk runtime configure beside our handler
  kNvidiaStart,      // nvidia-ctk-installer as the operator runs it on CRI-O (its drop-in)
  kNvidiaStartNri,   // the same with its NRI plugin (which writes no drop-in)
  kNvidiaStop,       // SIGTERM to it (its cleanup runs)
  kNvidiaRemove,     // its toolkit, runtime and drop-in removed, the engine restarted
};

struct Op {
  OpKind kind = OpKind::kCreate;
  PodKind pod = PodKind::kPlain;
  size_t index = 0;
};
// "create:tier", "delete:2", "plugin-restart", ...; parsed back by ParseOps.
std::string OpName(const Op& op);
// A space-separated list of OpName()s, or nullopt with the bad word in `bad`.
std::optional<std::vector<Op>> ParseOps(const std::string& text, std::string* bad);

// The operations a node may lack: no earlier commit's build, no NVIDIA
// toolkit (or an engine it is not tested on). Left out of Next, refused by Valid.
struct Extras {
  bool upgrade = false;
  bool nvidia = false;
};
// Which of them `op` needs: "" for none, else the Extras member's name.
std::string NeedsExtra(const Op& op);
// The engine's limits (it starts under prlimit) and each policy's.
inline constexpr Limit kEngine{1 << 20, 8 << 20};
inline constexpr Limit kAsked{5 << 20, 6 << 20};
inline constexpr Limit kCdiLimit{6 << 20, 8 << 20};
Limit TierLimit(int policy);  // policy 0: 2M:4M, policy 1: 3M:4M
// A killed install's delay is drawn up to this (install.sh takes about it).
inline constexpr size_t kMaxKillMs = 1500;

struct PodModel {
  std::string name;
  PodKind kind = PodKind::kPlain;
  Limit init = kEngine;
  Limit exec = kEngine;
  bool awaits_heal = false;  // created while no plugin was connected
  bool recorded = true;      // a decision record is kept for it (never by an earlier commit)
};

class Model {
 public:
  // A valid next operation: never more than `max_pods` running, no delete
  // of nothing, no start of a running plugin.
  Op Next(std::mt19937_64& rng, size_t max_pods) const;
  // Applies `op` to the expected state; a created pod is named `name`.
  void Apply(const Op& op, const std::string& name = "");
  // Whether `op` can run in this state (ParseOps's fixed sequences too).
  bool Valid(const Op& op) const;

  void Allow(Extras extras) { extras_ = extras; }
  // Whether audit must find 0 missing and 0 over now: the plugin connected,
  // and every pod without a record holds what the policy now gives, since
  // audit judges such a pod by the policy now (docs/audit.md).
  bool AuditSettles() const;

  const std::vector<PodModel>& pods() const { return pods_; }
  bool old_binaries() const { return old_; }
  bool nvidia_running() const { return nvidia_running_; }
  bool plugin_up() const { return plugin_up_; }
  int policy() const { return policy_; }
  // Our installer's ops are drawn by Next and valid (a node that runs them).
  void EnableInstaller() { installer_ = true; }
  // The installer's files are on the node; the engine serves the handler
  // (it read the handler's drop-in at its last start).
  bool installed() const { return installed_; }
  bool served() const { return served_; }
  // The installer changed the engine's config since the engine started (an
  // uninstall, or an install after one): doctor says a restart is pending.
  bool changed_since_start() const { return changed_; }
  // A handler pod starts only while both hold (lifecycle_installer.h).
  bool HandlerStarts() const { return installed_ && served_; }
  // An uninstall now is refused: a pod of the handler runs.
  bool UninstallRefused() const;

 private:
  // What the policy in force decides for `kind`: nullopt is nothing.
  std::optional<Limit> Decide(PodKind kind) const;
  void Heal();
  bool ValidExtra(const Op& op) const;
  void ApplyExtra(const Op& op);
  // A handler pod without a record: the wrapper's exec decides with the policy now.
  void RefreshUnrecorded();

  std::vector<PodModel> pods_;
  bool plugin_up_ = true;
  int policy_ = 0;
  bool installer_ = false;
  bool installed_ = true;
  bool served_ = true;
  bool changed_ = false;
  Extras extras_;
  bool old_ = false;      // the earlier commit's plugin and wrapper run
  bool was_old_ = false;  // once per sequence: the reverse is not tested
  bool nvidia_configured_ = false;
  bool nvidia_running_ = false;
};

}  // namespace ocirlimit::itest::lifecycle
