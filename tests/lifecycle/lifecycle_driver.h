// The lifecycle test's driver (docs/daemons-testing.md, "The lifecycle
// test"): one node interface over a real engine, oci-rlimit-nri and the
// wrapper's handler, and the runner that plays a sequence of operations on
// it and checks the invariants after every step:
//  - the engine answers;
//  - every running container's init and a new exec read the decision made
//    for it (lifecycle_model.h says what that is while the plugin is down);
//  - once settled (the plugin connected and its heal done), audit finds 0
//    missing and 0 over;
//  - every deleted pod stops and is removed.
// Engines: lifecycle_containerd_test.cc (containerd 2.x) and
// lifecycle_crio_test.cc (CRI-O 1.31, in tests/crio's suite).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cri_client.h"
#include "daemons.h"
#include "harness.h"
#include "lifecycle_installer.h"
#include "lifecycle_model.h"

namespace ocirlimit::itest::lifecycle {

inline constexpr const char* kHandlerName = "oci-rlimit";
// NVIDIA's CDI annotation, as its NRI plugin reads it, and the stand-in device.
inline constexpr const char* kCdiAnnotation = "nvidia.cdi.k8s.io/pod";
inline constexpr const char* kCdiDevice = "nvidia.com/gpu=0";

// The policy both the plugin and the wrapper read: the tier rule of policy
// 0 or 1, the cdi rule (NVIDIA's NRI plugin the injector), requests under a
// 6M ceiling, and the log file.
std::string PolicyText(int policy, const std::string& log);

// A node: an engine, the plugin on its NRI socket, the wrapper's handler.
class LifecycleNode {
 public:
  virtual ~LifecycleNode();

  virtual cri::CriClient& cri() = 0;
  virtual cri::PodSpec NewPod(const std::string& name, const std::string& handler) = 0;
  virtual Result<cri::Pod> RunPod(const cri::PodSpec& spec) = 0;
  virtual Result<std::string> RunContainer(const cri::Pod& pod, const cri::ContainerSpec& spec) = 0;
  // The engine stops and starts; pods keep running.
  [[nodiscard]] virtual std::optional<std::string> RestartEngine() = 0;
  // Every pod stopped and removed (a reboot's end of every process).
  virtual void RemoveAllPods() = 0;
  // Writes policy `policy` where the plugin and the wrapper read it.
  virtual void WritePolicy(int policy) = 0;
  // `oci-rlimit audit --json` over the engine's runtime root, with the policy.
  virtual CmdResult Audit() = 0;
  // Empties what oci-rlimit keeps in /run (a reboot's tmpfs).
  virtual void ClearRun() = 0;
  // Our installer on this node, installed when the sequence starts; none:
  // its ops are not drawn.
  virtual NodeInstaller* installer() { return nullptr; }

  // The plugin: started on the engine's NRI socket, waited for until its
  // first Synchronize; SIGKILLed.
  [[nodiscard]] std::optional<std::string> StartPlugin();
  void KillPlugin();
  bool plugin_running() const { return plugin_ != nullptr; }
  // Waits until the running plugin has logged `n` Synchronize replies.
  [[nodiscard]] std::optional<std::string> WaitSynchronized(size_t n) const;
  size_t Synchronizations() const;
  void SighupPlugin() const;
  std::string PluginLog() const;

  // upgrades and NVIDIA's tools (lifecycle_upgrade.h, lifecycle_nvidia.h)
  Extras extras;            // what this node can play beyond the rest
  std::string old_bin_dir;  // the earlier commit's programs, when extras.upgrade
  // The file the engine runs as the handler's runtime (the upgrade replaces it).
  virtual std::string WrapperPath() const = 0;
  // The next StartPlugin runs `path` (this build's oci-rlimit-nri until then).
  void UsePluginBinary(const std::string& path) { plugin_binary_ = path; }
  // An operation NeedsExtra() names; an error text, or nullopt.
  [[nodiscard]] virtual std::optional<std::string> RunExtra(const Op& op);

 protected:
  // argv before the plugin's own (a namespace to run it in), its --config,
  // the NRI socket and the status file, as the plugin sees them.
  virtual std::vector<std::string> PluginPrefix() const { return {}; }
  // NAME=VALUE entries for the plugin (where it keeps its decision records).
  virtual std::vector<std::string> PluginEnv() const { return {}; }
  virtual std::string PluginConfig() const = 0;
  virtual std::string NriSocket() const = 0;
  virtual std::string PluginStatusFile() const = 0;
  virtual std::string LogDir() const = 0;

 private:
  std::unique_ptr<BackgroundProcess> plugin_;
  std::string plugin_binary_;
  int starts_ = 0;
};

// Plays `ops` (or, when empty, random ones from `seed` until the budget of
// OCI_RLIMIT_LIFECYCLE_SECONDS, default 90, or OCI_RLIMIT_LIFECYCLE_STEPS)
// on `node`, checking the invariants after each; a gtest failure names the
// step, the sequence and how to replay it (`filter`: its gtest filter).
void PlaySequence(LifecycleNode& node, const std::vector<Op>& ops, uint64_t seed,
                  const std::string& filter);

// The seed of a random sequence: OCI_RLIMIT_LIFECYCLE_SEED, else a new one.
uint64_t LifecycleSeed();

// A fixed sequence, kept from a break or a failed random one.
struct Fixed {
  std::string name;
  std::string ops;
};
void PrintTo(const Fixed& f, std::ostream* os);
// The fixed sequences every engine plays.
std::vector<Fixed> FixedSequences();

}  // namespace ocirlimit::itest::lifecycle
