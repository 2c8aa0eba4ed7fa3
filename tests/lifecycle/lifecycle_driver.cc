#include "lifecycle_driver.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "cri_probe.h"
#include "lifecycle_upgrade.h"

namespace ocirlimit::itest::lifecycle {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

struct RunningPod {
  cri::Pod pod;
  std::string container;
};

// One sequence on one node: the model beside the pods that really run.
class Runner {
 public:
  // `installer`: this sequence plays our installer's operations (the node has one).
  Runner(LifecycleNode& node, bool installer)
      : node_(node), installer_(installer ? node.installer() : nullptr) {
    if (installer_ != nullptr) model_.EnableInstaller();
  }
  // What a fresh install wrote, where the sequence plays our installer.
  std::optional<std::string> Start() {
    return installer_ != nullptr ? fresh_.Read(*installer_) : std::nullopt;
  }
  // Runs `op` on the node, then applies it to the model. An error text, or nullopt.
  std::optional<std::string> Run(const Op& op);
  // The invariants; an error text naming the first that fails, or nullopt.
  std::optional<std::string> Check();
  Model& model() { return model_; }

 private:
  std::optional<std::string> Create(PodKind kind, const std::string& name);
  std::optional<std::string> Delete(size_t index);
  std::optional<std::string> Reboot();
  std::optional<std::string> AuditSettled();

  LifecycleNode& node_;
  NodeInstaller* installer_;
  std::chrono::steady_clock::time_point last_install_;  // the installer's last run ended
  Model model_;
  std::vector<RunningPod> running_;  // in the model's order
  int created_ = 0;
  FreshInstall fresh_;
};

std::optional<std::string> Runner::Create(PodKind kind, const std::string& name) {
  cri::PodSpec spec = node_.NewPod(name, kind == PodKind::kHandler ? kHandlerName : "");
  if (kind == PodKind::kTier || kind == PodKind::kHandler)
    spec.annotations["example.com/tier"] = "a";
  if (kind == PodKind::kAsk) spec.annotations["oci-rlimit.io/rlimits"] = "memlock=5M:6M";
  if (kind == PodKind::kHandler && !model_.HandlerStarts())
    return ExpectHandlerRefused(node_, spec);
  if (kind == PodKind::kCdi) spec.annotations[kCdiAnnotation] = kCdiDevice;
  auto pod = node_.RunPod(spec);
  if (!pod) return "RunPodSandbox " + name + ": " + pod.error().Text();
  cri::ContainerSpec c;
  c.name = "app";
  // An init that ends on SIGTERM: a stop then waits for no grace period.
  c.command = {"/bin/sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"};
  auto id = node_.RunContainer(*pod, c);
  if (!id) return "CreateContainer " + name + ": " + id.error().Text();
  running_.push_back({*pod, *id});
  return std::nullopt;
}

std::optional<std::string> Runner::Delete(size_t index) {
  const RunningPod gone = running_[index];
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  if (auto s = node_.cri().StopPodSandbox(gone.pod.id); !s)
    return "StopPodSandbox: " + s.error().Text();
  if (auto s = node_.cri().RemovePodSandbox(gone.pod.id); !s) {
    return "RemovePodSandbox: " + s.error().Text();
  }
  return std::nullopt;
}

std::optional<std::string> Runner::Reboot() {
  const bool plugin = node_.plugin_running();
  node_.KillPlugin();
  node_.RemoveAllPods();
  running_.clear();
  node_.ClearRun();
  if (auto err = node_.RestartEngine()) return err;
  return plugin ? node_.StartPlugin() : std::nullopt;
}

std::optional<std::string> Runner::Run(const Op& op) {
  std::optional<std::string> err;
  const std::string name = "p" + std::to_string(created_);
  // doctor and the installer tell an engine's start from a config write by
  // whole seconds (a start truncated by btime): an engine restarted within
  // two seconds of the installer's last write may read as not restarted, so
  // the sequence leaves that much between them (docs/daemons-testing.md).
  const bool restarts =
      op.kind == OpKind::kEngineRestart || op.kind == OpKind::kReboot || !NeedsExtra(op).empty();
  if (restarts && installer_ != nullptr) {
    std::this_thread::sleep_until(last_install_ + std::chrono::seconds(2));
  }
  switch (op.kind) {
    case OpKind::kCreate:
      ++created_;
      err = Create(op.pod, name);
      break;
    case OpKind::kDelete:
      err = Delete(op.index);
      break;
    case OpKind::kPluginStop:
      node_.KillPlugin();
      break;
    case OpKind::kPluginRestart:
      node_.KillPlugin();
      err = node_.StartPlugin();
      break;
    case OpKind::kPluginStart:
      err = node_.StartPlugin();
      break;
    case OpKind::kEngineRestart: {
      const size_t before = node_.plugin_running() ? node_.Synchronizations() : 0;
      err = node_.RestartEngine();
      if (!err && node_.plugin_running()) err = node_.WaitSynchronized(before + 1);
      break;
    }
    case OpKind::kPolicyChange:
      node_.WritePolicy(1 - model_.policy());
      node_.SighupPlugin();
      // SIGHUP is asynchronous; the plugin reloads well within this.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      break;
    case OpKind::kReboot:
      err = Reboot();
      break;
    case OpKind::kInstall:
    case OpKind::kUninstall:
    case OpKind::kInstallKilled:
      err = RunInstallerOp(*installer_, fresh_, model_, op);
      last_install_ = std::chrono::steady_clock::now();
      break;
    default:
      err = node_.RunExtra(op);
      break;
  }
  model_.Apply(op, name);
  return err;
}

std::optional<std::string> Runner::Check() {
  if (auto v = node_.cri().Version(); !v) return "the engine does not answer: " + v.error().Text();
  for (size_t i = 0; i < running_.size(); ++i) {
    const PodModel& want = model_.pods()[i];
    auto init = node_.cri().ExecSync(running_[i].container, {"cat", "/proc/1/limits"});
    if (!init || init->exit_code != 0) return "pod " + want.name + ": cannot exec into it";
    auto exec = node_.cri().ExecSync(running_[i].container, {"cat", "/proc/self/limits"});
    if (!exec || exec->exit_code != 0) return "pod " + want.name + ": cannot exec into it";
    const auto got_init = LimitRow(init->out, kMemlock);
    const auto got_exec = LimitRow(exec->out, kMemlock);
    if (got_init != want.init || got_exec != want.exec) {
      return "pod " + want.name + ": init reads " + FormatLimit(got_init) + ", an exec reads " +
             FormatLimit(got_exec) + "; its decision is init " + FormatLimit(want.init) +
             ", exec " + FormatLimit(want.exec);
    }
  }
  if (installer_ != nullptr) {
    if (auto err = CheckInstaller(*installer_, fresh_, model_)) return err;
  }
  return model_.AuditSettles() ? AuditSettled() : std::nullopt;
}

std::optional<std::string> Runner::AuditSettled() {
  CmdResult r = node_.Audit();
  Json j = Json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return "audit printed no JSON: " + r.out + r.err;
  for (const auto& c : j.value("containers", Json::array())) {
    const std::string status = c.value("status", "");
    if (status == "missing" || status == "over") {
      return "audit: " + status + ": " + c.dump() + "\n" + r.err;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string PolicyText(int policy, const std::string& log) {
  const Limit t = TierLimit(policy);
  return "log-file = \"" + log +
         "\"\n[[rule]]\nname = \"tier\"\nrlimits = [\"memlock=" + std::to_string(t.soft) + ":" +
         std::to_string(t.hard) +
         "\"]\nmatch = { annotations = { \"example.com/tier\" = \"a\" } }\n"
         "[[rule]]\nname = \"cdi\"\nrlimits = [\"memlock=" +
         std::to_string(kCdiLimit.soft) + ":" + std::to_string(kCdiLimit.hard) +
         "\"]\nmatch = { cdi = [\"nvidia.com/gpu=*\"] }\n"
         "[requests]\nenabled = true\nceilings = [\"memlock=6M\"]\n"
         "[cdi]\ninjectors = [\"nvidia-nri\"]\n";
}

LifecycleNode::~LifecycleNode() = default;

std::string LifecycleNode::PluginLog() const {
  return LogDir() + "/plugin-" + std::to_string(starts_) + ".log";
}

std::optional<std::string> LifecycleNode::StartPlugin() {
  ++starts_;
  plugin_ = std::make_unique<BackgroundProcess>();
  std::vector<std::string> argv = PluginPrefix();
  for (const std::string& a :
       {plugin_binary_.empty() ? OurBinary("oci-rlimit-nri") : plugin_binary_,
        std::string("--config"), PluginConfig(), std::string("--socket"), NriSocket(),
        std::string("--status-file"), PluginStatusFile()}) {
    argv.push_back(a);
  }
  DaemonOptions opts;
  opts.env = PluginEnv();
  if (auto err = plugin_->Start(argv, opts, PluginLog())) return err;
  return WaitSynchronized(1);
}

void LifecycleNode::KillPlugin() {
  if (!plugin_) return;
  kill(plugin_->pid(), SIGKILL);
  plugin_->Stop();
  plugin_.reset();
}

void LifecycleNode::SighupPlugin() const {
  if (plugin_) kill(plugin_->pid(), SIGHUP);
}

size_t LifecycleNode::Synchronizations() const {
  return Count(ReadFile(PluginLog()), "synchronized:");
}

std::optional<std::string> LifecycleNode::WaitSynchronized(size_t n) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    if (Synchronizations() >= n) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "oci-rlimit-nri logged no Synchronize #" + std::to_string(n) + ":\n" +
         ReadFile(PluginLog());
}

void PlaySequence(LifecycleNode& node, const std::vector<Op>& ops, uint64_t seed,
                  const std::string& filter) {
  // A sequence plays our installer's ops (with their invariants) or the
  // extras, never both: a random one picks by its seed's parity.
  bool installer = node.installer() != nullptr;
  Extras extras = node.extras;
  const bool any_extra =
      std::any_of(ops.begin(), ops.end(), [](const Op& op) { return !NeedsExtra(op).empty(); });
  if (installer && (extras.upgrade || extras.nvidia) && (any_extra || (ops.empty() && seed % 2))) {
    installer = false;
  } else if (installer) {
    extras = {};
  }
  if (ops.empty()) {
    std::cout << "lifecycle: this sequence plays "
              << (installer ? "our installer's operations" : "the extras (upgrade, NVIDIA's tools)")
              << std::endl;
  }
  Runner runner(node, installer);
  auto started = runner.Start();
  ASSERT_FALSE(started) << *started;
  runner.model().Allow(extras);
  for (const Op& op : ops) {
    if (const std::string needs = NeedsExtra(op); (needs == "upgrade" && !node.extras.upgrade) ||
                                                  (needs == "nvidia" && !node.extras.nvidia)) {
      GTEST_SKIP() << OpName(op) << ": left out on this node ("
                   << (needs == "upgrade" ? std::string(kOldBinDirVar) + " unset"
                                          : "NVIDIA's toolkit: CRI-O with OCI_RLIMIT_NVIDIA_DIR")
                   << ")";
    }
  }
  std::mt19937_64 rng(seed);
  const auto budget =
      std::chrono::seconds(std::stoi(Env("OCI_RLIMIT_LIFECYCLE_SECONDS").value_or("90")));
  const size_t max_steps = std::stoul(Env("OCI_RLIMIT_LIFECYCLE_STEPS").value_or("100000"));
  const auto start = std::chrono::steady_clock::now();
  std::string done;
  for (size_t step = 0; ops.empty() ? step < max_steps : step < ops.size(); ++step) {
    if (ops.empty() && std::chrono::steady_clock::now() - start > budget) break;
    const Op op = ops.empty() ? runner.model().Next(rng, 5) : ops[step];
    ASSERT_TRUE(runner.model().Valid(op))
        << "step " << step << ": " << OpName(op) << " cannot run now";
    done += (done.empty() ? "" : " ") + OpName(op);
    std::cout << "lifecycle: step " << step << ": " << OpName(op) << std::endl;
    auto err = runner.Run(op);
    if (!err) err = runner.Check();
    ASSERT_FALSE(err) << "after step " << step << " (" << OpName(op) << "): " << *err
                      << "\nthe sequence: " << done
                      << "\nreplay: OCI_RLIMIT_LIFECYCLE_SEED=" << seed
                      << " OCI_RLIMIT_LIFECYCLE_STEPS=" << step + 1 << " with --gtest_filter='"
                      << filter << "'\nplugin log:\n"
                      << ReadFile(node.PluginLog());
  }
  ::testing::Test::RecordProperty("steps", done);
}

uint64_t LifecycleSeed() {
  const uint64_t seed = Env("OCI_RLIMIT_LIFECYCLE_SEED")
                            ? std::stoull(*Env("OCI_RLIMIT_LIFECYCLE_SEED"))
                            : std::random_device{}();
  std::cout << "lifecycle: seed " << seed << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

void PrintTo(const Fixed& f, std::ostream* os) { *os << f.name; }

std::vector<Fixed> FixedSequences() {
  return {
      // Issue 44's break 1: a heal at reconnect keeps each container's decision.
      {"HealKeepsTheDecision", "create:tier create:ask policy-change plugin-restart"},
      // Break 2: plugin and handler on one pod agree; without the plugin the
      // handler decides alone; a new exec keeps the decision.
      {"PluginAndHandlerAgree",
       "create:handler policy-change create:handler plugin-stop create:handler plugin-start"},
      // Pods created while the plugin is down are healed once, then kept.
      {"MissedPodsHealedOnce",
       "plugin-stop create:tier create:ask create:plain plugin-start policy-change engine-restart "
       "plugin-restart delete:0"},
      {"RebootStartsClean", "create:tier create:handler reboot create:tier policy-change"},
      // upgrades and NVIDIA's tools
      // Pods of an earlier commit's plugin and wrapper carry no record: the
      // earlier heal decides them again, the current one once, then keeps it.
      {"UpgradeDecidesOnceWhatTheEarlierCommitLeft",
       "old-binaries create:tier create:handler create:ask create:cdi policy-change plugin-restart "
       "policy-change upgrade create:tier policy-change plugin-restart"},
      {"UpgradeWhileThePluginIsDown",
       "old-binaries create:handler create:tier plugin-stop create:tier upgrade policy-change "
       "create:handler plugin-start delete:0 policy-change engine-restart"},
      // NVIDIA's configure and its installer both ways beside ours; its NRI
      // mode first, which writes no drop-in (found by seed 3891663986).
      {"NvidiaToolsKeepEveryDecision",
       "create:cdi create:handler nvidia-start-nri create:cdi plugin-restart nvidia-stop "
       "nvidia-configure create:cdi policy-change nvidia-start create:handler nvidia-stop "
       "nvidia-remove create:cdi create:handler"},
  };
}

}  // namespace ocirlimit::itest::lifecycle
