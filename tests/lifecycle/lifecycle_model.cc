#include "lifecycle_model.h"

#include <array>
#include <sstream>
#include <string_view>
#include <utility>

namespace ocirlimit::itest::lifecycle {
namespace {

constexpr std::array<std::pair<PodKind, const char*>, 5> kPodNames = {{
    {PodKind::kPlain, "plain"},
    {PodKind::kTier, "tier"},
    {PodKind::kAsk, "ask"},
    {PodKind::kHandler, "handler"},
    {PodKind::kCdi, "cdi"},
}};

constexpr std::array<std::pair<OpKind, const char*>, 16> kOpNames = {{
    {OpKind::kPluginRestart, "plugin-restart"},
    {OpKind::kPluginStop, "plugin-stop"},
    {OpKind::kPluginStart, "plugin-start"},
    {OpKind::kEngineRestart, "engine-restart"},
    {OpKind::kPolicyChange, "policy-change"},
    {OpKind::kReboot, "reboot"},
    {OpKind::kCreate, "create"},
    {OpKind::kInstall, "install"},
    {OpKind::kUninstall, "uninstall"},
    // upgrades and NVIDIA's tools
    {OpKind::kOldBinaries, "old-binaries"},
    {OpKind::kUpgrade, "upgrade"},
    {OpKind::kNvidiaConfigure, "nvidia-configure"},
    {OpKind::kNvidiaStart, "nvidia-start"},
    {OpKind::kNvidiaStartNri, "nvidia-start-nri"},
    {OpKind::kNvidiaStop, "nvidia-stop"},
    {OpKind::kNvidiaRemove, "nvidia-remove"},
}};

// Ops that carry a number: "delete:N" (the pod), "install-killed:MS" (when).
constexpr std::array<std::pair<OpKind, std::string_view>, 2> kNumbered = {{
    {OpKind::kDelete, "delete:"},
    {OpKind::kInstallKilled, "install-killed:"},
}};

}  // namespace

std::string OpName(const Op& op) {
  for (const auto& [kind, prefix] : kNumbered) {
    if (kind == op.kind) return std::string(prefix) + std::to_string(op.index);
  }
  for (const auto& [kind, name] : kOpNames) {
    if (kind != op.kind) continue;
    if (kind != OpKind::kCreate) return name;
    for (const auto& [pod, pod_name] : kPodNames) {
      if (pod == op.pod) return std::string("create:") + pod_name;
    }
  }
  return "?";
}

std::optional<std::vector<Op>> ParseOps(const std::string& text, std::string* bad) {
  std::vector<Op> ops;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    std::optional<Op> op;
    for (const auto& [kind, prefix] : kNumbered) {
      if (!word.starts_with(prefix)) continue;
      try {
        op = Op{.kind = kind, .index = std::stoul(word.substr(prefix.size()))};
      } catch (...) {
      }
    }
    for (const auto& [kind, name] : kOpNames) {
      if (kind != OpKind::kCreate && word == name) op = Op{.kind = kind};
    }
    for (const auto& [pod, pod_name] : kPodNames) {
      if (word == std::string("create:") + pod_name) op = Op{.kind = OpKind::kCreate, .pod = pod};
    }
    if (!op) {
      if (bad) *bad = word;
      return std::nullopt;
    }
    ops.push_back(*op);
  }
  return ops;
}

Limit TierLimit(int policy) {
  return policy == 0 ? Limit{2 << 20, 4 << 20} : Limit{3 << 20, 4 << 20};
}

std::optional<Limit> Model::Decide(PodKind kind) const {
  switch (kind) {
    case PodKind::kPlain:
      return std::nullopt;
    case PodKind::kAsk:
      return kAsked;
    case PodKind::kTier:
    case PodKind::kHandler:
      return TierLimit(policy_);
    case PodKind::kCdi:
      return kCdiLimit;
  }
  return std::nullopt;
}

// The plugin's heal at (re)connect: a container without a record gets the
// policy in force then, in its init (an exec follows the spec, which a heal
// cannot change; a handler pod's exec already had the policy in force, and
// from now on applies the record the heal writes); one with a record keeps
// it. The earlier commit's plugin decided every container again with the
// policy in force (issue 44, break 1).
void Model::Heal() {
  for (PodModel& p : pods_) {
    if (!old_ && p.recorded && !p.awaits_heal) continue;
    if (auto limit = Decide(p.kind)) p.init = *limit;
    p.awaits_heal = false;
    p.recorded = !old_;
  }
}

bool Model::Valid(const Op& op) const {
  switch (op.kind) {
    case OpKind::kDelete:
      return op.index < pods_.size();
    case OpKind::kPluginStart:
      return !plugin_up_;
    case OpKind::kPluginStop:
    case OpKind::kPluginRestart:
      return plugin_up_;
    case OpKind::kInstall:
    case OpKind::kUninstall:
    case OpKind::kInstallKilled:
      return installer_ && !old_;  // install.sh would place today's wrapper under the old plugin
    default:
      return ValidExtra(op);
  }
}

Op Model::Next(std::mt19937_64& rng, size_t max_pods) const {
  // Weights: pods come and go most; the node's own events less often.
  static constexpr std::array<std::pair<OpKind, int>, 18> kWeights = {{
      {OpKind::kCreate, 8},
      {OpKind::kDelete, 4},
      {OpKind::kPluginRestart, 2},
      {OpKind::kPluginStop, 1},
      {OpKind::kPluginStart, 3},
      {OpKind::kEngineRestart, 1},
      {OpKind::kPolicyChange, 2},
      {OpKind::kReboot, 1},
      {OpKind::kInstall, 1},
      {OpKind::kUninstall, 1},
      {OpKind::kInstallKilled, 1},
      // upgrades and NVIDIA's tools
      {OpKind::kOldBinaries, 2},
      {OpKind::kUpgrade, 1},
      {OpKind::kNvidiaConfigure, 1},
      {OpKind::kNvidiaStart, 1},
      {OpKind::kNvidiaStartNri, 1},
      {OpKind::kNvidiaStop, 1},
      {OpKind::kNvidiaRemove, 1},
  }};
  // What the node does not run weighs nothing: the installer's ops without
  // it, an extra it lacks.
  const auto weight = [&](OpKind kind, int w) {
    const bool ours =
        kind == OpKind::kInstall || kind == OpKind::kUninstall || kind == OpKind::kInstallKilled;
    const std::string needs = NeedsExtra(Op{.kind = kind});
    const bool lacking =
        (needs == "upgrade" && !extras_.upgrade) || (needs == "nvidia" && !extras_.nvidia);
    return (ours && !installer_) || lacking ? 0 : w;
  };
  for (;;) {
    int total = 0;
    for (const auto& [kind, w] : kWeights) total += weight(kind, w);
    int pick = std::uniform_int_distribution<int>(0, total - 1)(rng);
    Op op;
    for (const auto& [kind, w] : kWeights) {
      if (pick < weight(kind, w)) {
        op.kind = kind;
        break;
      }
      pick -= weight(kind, w);
    }
    op.pod = kPodNames[std::uniform_int_distribution<size_t>(0, kPodNames.size() - 1)(rng)].first;
    if (!pods_.empty()) op.index = std::uniform_int_distribution<size_t>(0, pods_.size() - 1)(rng);
    if (op.kind == OpKind::kInstallKilled) {
      op.index = std::uniform_int_distribution<size_t>(0, kMaxKillMs)(rng);
    }
    if (op.kind == OpKind::kCreate && pods_.size() >= max_pods) continue;
    if (Valid(op)) return op;
  }
}

void Model::Apply(const Op& op, const std::string& name) {
  switch (op.kind) {
    case OpKind::kCreate: {
      if (op.pod == PodKind::kHandler && !HandlerStarts()) break;  // an expected failure
      PodModel p{.name = name, .kind = op.pod, .recorded = !old_};
      // The plugin decides at CreateContainer; without it, the handler's
      // wrapper still decides its own pods; anything else waits for a heal.
      if (plugin_up_ || op.pod == PodKind::kHandler) {
        p.init = p.exec = Decide(op.pod).value_or(kEngine);
      } else {
        p.awaits_heal = true;
        p.recorded = false;
      }
      pods_.push_back(p);
      break;
    }
    case OpKind::kDelete:
      pods_.erase(pods_.begin() + static_cast<std::ptrdiff_t>(op.index));
      break;
    case OpKind::kPluginStop:
      plugin_up_ = false;
      break;
    case OpKind::kPluginStart:
    case OpKind::kPluginRestart:
      plugin_up_ = true;
      Heal();
      break;
    case OpKind::kEngineRestart:
      served_ = installed_;
      changed_ = false;
      if (plugin_up_) Heal();
      break;
    case OpKind::kPolicyChange:
      policy_ = 1 - policy_;
      break;
    case OpKind::kReboot:
      pods_.clear();
      served_ = installed_;
      changed_ = false;
      nvidia_running_ = false;
      break;
    case OpKind::kInstall:
    case OpKind::kInstallKilled:
      changed_ = changed_ || !installed_;
      installed_ = true;
      break;
    case OpKind::kUninstall:
      changed_ = changed_ || (installed_ && !UninstallRefused());
      if (!UninstallRefused()) installed_ = false;
      break;
    default:
      ApplyExtra(op);
      break;
  }
  RefreshUnrecorded();
}

// upgrades and NVIDIA's tools

std::string NeedsExtra(const Op& op) {
  switch (op.kind) {
    case OpKind::kOldBinaries:
    case OpKind::kUpgrade:
      return "upgrade";
    case OpKind::kNvidiaConfigure:
    case OpKind::kNvidiaStart:
    case OpKind::kNvidiaStartNri:
    case OpKind::kNvidiaStop:
    case OpKind::kNvidiaRemove:
      return "nvidia";
    default:
      return "";
  }
}

bool Model::ValidExtra(const Op& op) const {
  const std::string needs = NeedsExtra(op);
  if ((needs == "upgrade" && !extras_.upgrade) || (needs == "nvidia" && !extras_.nvidia)) {
    return false;
  }
  switch (op.kind) {
    case OpKind::kOldBinaries:  // they replace the installed wrapper's file
      return !old_ && !was_old_ && pods_.empty() && installed_;
    case OpKind::kUpgrade:
      return old_ && installed_;
    case OpKind::kNvidiaStart:
    case OpKind::kNvidiaStartNri:
      return !nvidia_running_;
    case OpKind::kNvidiaStop:
      return nvidia_running_;
    case OpKind::kNvidiaRemove:
      return nvidia_configured_ && !nvidia_running_;
    default:
      return true;
  }
}

void Model::ApplyExtra(const Op& op) {
  switch (op.kind) {
    case OpKind::kOldBinaries:
      old_ = was_old_ = true;
      break;
    case OpKind::kUpgrade:
      // The new plugin's heal decides what the earlier one left without a record.
      old_ = false;
      if (plugin_up_) Heal();
      break;
    case OpKind::kNvidiaConfigure:  // the engine restarts to serve NVIDIA's handler
      nvidia_configured_ = true;
      served_ = installed_;
      changed_ = false;
      if (plugin_up_) Heal();
      break;
    case OpKind::kNvidiaStart:
      nvidia_configured_ = nvidia_running_ = true;
      break;
    case OpKind::kNvidiaStartNri:  // its toolkit placed, no drop-in
      nvidia_running_ = true;
      break;
    case OpKind::kNvidiaStop:
      nvidia_running_ = false;
      break;
    case OpKind::kNvidiaRemove:  // and the engine restarts
      nvidia_configured_ = false;
      served_ = installed_;
      changed_ = false;
      if (plugin_up_) Heal();
      break;
    default:
      break;
  }
}

bool Model::UninstallRefused() const {
  for (const PodModel& p : pods_) {
    if (p.kind == PodKind::kHandler) return true;
  }
  return false;
}

void Model::RefreshUnrecorded() {
  for (PodModel& p : pods_) {
    if (!p.recorded && p.kind == PodKind::kHandler) p.exec = Decide(p.kind).value_or(kEngine);
  }
}

bool Model::AuditSettles() const {
  if (!plugin_up_) return false;
  for (const PodModel& p : pods_) {
    const std::optional<Limit> now = Decide(p.kind);
    if (!p.recorded && now && *now != p.init) return false;
  }
  return true;
}

}  // namespace ocirlimit::itest::lifecycle
