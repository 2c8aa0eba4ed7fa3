// oci-rlimit-nri's metrics (--metrics-address, docs/nri.md "Metrics"): what
// it did to the containers the runtime created, to pods' requests, and at
// each Synchronize heal, whether it is connected, and its build. The
// plugin's thread counts (relaxed atomics: a count never waits); the metrics
// server's thread renders them (formats/prom_text.h). Every label's values come
// from the fixed lists below, never from a container.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/policy.h"
#include "formats/prom_text.h"
#include "nri/decide.h"

namespace ocirlimit::nri {

// What CreateContainer did, and why: the `outcome` and `reason` labels of
// oci_rlimit_nri_containers_total.
enum class ContainerCount {
  kAdjusted,            // adjusted / policy: it got the policy's limits
  kLeftNoLimits,        // left_alone / no_limits: the policy gives it none
  kLeftUndecodable,     // left_alone / undecodable: a request we could not decode, under "warn"
  kRefusedRequest,      // refused / request: a request (from any source) is refused
  kRefusedPodDispute,   // refused / pod_dispute: its pod's identity is disputed (docs/policy.md)
  kRefusedUndecodable,  // refused / undecodable: a request we could not decode
};
inline constexpr size_t kContainerCounts = 6;
struct CountLabels {
  std::string_view outcome;
  std::string_view reason;
};
CountLabels ContainerCountLabels(ContainerCount c);

// What became of one source's request: the `result` label of
// oci_rlimit_nri_requests_total (its `source` label is RequestSourceName).
enum class RequestCount { kGranted, kClamped, kRejected, kIgnored, kNotApplied };
inline constexpr size_t kRequestCounts = 5;
std::string_view RequestCountName(RequestCount r);
// RequestSource's values: oci-rlimit, ulimit-adjuster, spec.
inline constexpr size_t kRequestSources = 3;

struct Counted {
  ContainerCount container = ContainerCount::kAdjusted;
  // Per RequestSource; none: that source asked nothing, or a pod sandbox.
  std::array<std::optional<RequestCount>, kRequestSources> requests{};
};

// The counts of one decoded CreateContainer: its facts and the verdict
// given. Each source of [requests] sources that asks something is judged
// on its own, as Decide judges it: granted; clamped when any entry was
// lowered to a ceiling or left out as not in the ceilings; rejected when it
// is malformed or over a ceiling under reject; not_applied when it was fine
// but another source's was rejected (the container is refused, or under
// on-error = "warn" gets the node's limits: there the spec source's entries
// still count as judged); ignored when requests are not enabled. A refusal
// is a request's when the node's limits alone decide (Decide without the
// annotation sources succeeds), else the pod's dispute.
[[nodiscard]] Counted CountCreate(const Config& cfg, const ContainerFacts& facts, const Verdict& v);

class NriMetrics {
 public:
  // unix_now: seconds since the epoch, for the time of the last Synchronize.
  explicit NriMetrics(std::function<int64_t()> unix_now)
      : unix_now_(std::move(unix_now)), started_(unix_now_()), last_reload_ok_(started_) {}

  void Count(const Counted& c);
  void CountContainer(ContainerCount c);
  void SetConnected(bool connected);
  // Whether the runtime has the plugin configured now (the readiness probe).
  bool Connected() const { return connected_.load(std::memory_order_relaxed); }
  // A Synchronize healed (its last message, more = false).
  void Synchronized(uint64_t healed, uint64_t failed);
  // That Synchronize's running containers that need the admin (nri.status's
  // refused and unhealed): refused-but-running, and not healed.
  void NeedAdmin(uint64_t refused, uint64_t unhealed);
  // A SIGHUP reload: taken (ok) or refused (the old config stays).
  void ConfigReloaded(bool ok);
  // A batch of replies the runtime gave up on: written after its request
  // deadline (late) or not written at all.
  void RepliesGivenUp(uint64_t replies, bool late);
  // The `node` label every series carries (--node-name, NODE_NAME); set
  // before the server starts. Empty: none.
  void SetNode(std::string node) { node_ = std::move(node); }
  // The digest of the policy in force (core/policy_digest.h): at start and
  // after each reload taken; oci_rlimit_policy_info's label.
  void SetPolicyDigest(std::string digest);

  // The Prometheus text of every family (docs/nri.md lists them).
  [[nodiscard]] std::string Text() const;

 private:
  void AddFleetFamilies(std::vector<PromFamily>& f) const;

  std::function<int64_t()> unix_now_;
  std::array<std::atomic<uint64_t>, kContainerCounts> containers_{};
  std::array<std::atomic<uint64_t>, kRequestSources * kRequestCounts> requests_{};
  std::atomic<uint64_t> healed_{0};
  std::atomic<uint64_t> heal_failed_{0};
  std::atomic<uint64_t> connects_{0};
  std::atomic<uint64_t> synchronizes_{0};
  std::atomic<bool> connected_{false};
  std::atomic<int64_t> last_sync_{0};
  std::atomic<int64_t> last_heal_ok_{0};
  std::atomic<uint64_t> refused_running_{0};
  std::atomic<uint64_t> unhealed_{0};
  std::atomic<uint64_t> late_{0};
  std::atomic<uint64_t> unsent_{0};
  std::atomic<uint64_t> reloads_refused_{0};
  int64_t started_ = 0;
  std::atomic<bool> reload_ok_{true};
  std::atomic<int64_t> last_reload_ok_{0};
  std::string node_;
  mutable std::mutex digest_mu_;  // the plugin's thread sets, the server's reads
  std::string digest_;
};

}  // namespace ocirlimit::nri
