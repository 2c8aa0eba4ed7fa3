#include "nri/metrics.h"

#include <vector>

#include "core/admission.h"
#include "core/requests.h"
#include "core/version.h"
#include "formats/prom_text.h"

namespace ocirlimit::nri {
namespace {

// A refusal is a request's when the node's limits alone decide, as Admit
// falls back (core/admission.cc, DecideFailed): the spec's entries clamped,
// no annotation source read.
bool RequestRefused(const Config& cfg, const ContainerFacts& facts) {
  return Decide(cfg, facts, RequestMode::kNodeOnly).ok();
}

// Source s's request judged on its own, with the same ApplyRequests Decide
// runs; none when it asks nothing.
std::optional<RequestCount> Alone(const Config& cfg, const ContainerFacts& facts, RequestSource s) {
  if (!cfg.requests.enabled) {
    if (!HasRequestAnnotation(facts, s)) return std::nullopt;
    return RequestCount::kIgnored;
  }
  Requests one = cfg.requests;
  one.sources = {s};
  Decision d;
  if (!ApplyRequests(one, facts, RequestMode::kAll, d)) return RequestCount::kRejected;
  if (d.requests.empty()) return std::nullopt;
  for (const auto& r : d.requests) {
    if (!r.granted || *r.granted != r.asked) return RequestCount::kClamped;
  }
  return RequestCount::kGranted;
}

PromSample Labeled(std::vector<std::pair<std::string, std::string>> labels, uint64_t n) {
  return PromSample{.labels = std::move(labels), .value = static_cast<double>(n)};
}

PromFamily Family(std::string name, std::string help, PromType type,
                  std::vector<PromSample> samples) {
  return PromFamily{.name = std::move(name),
                    .help = std::move(help),
                    .type = type,
                    .samples = std::move(samples)};
}

}  // namespace

CountLabels ContainerCountLabels(ContainerCount c) {
  switch (c) {
    case ContainerCount::kAdjusted:
      return {"adjusted", "policy"};
    case ContainerCount::kLeftNoLimits:
      return {"left_alone", "no_limits"};
    case ContainerCount::kLeftUndecodable:
      return {"left_alone", "undecodable"};
    case ContainerCount::kRefusedRequest:
      return {"refused", "request"};
    case ContainerCount::kRefusedPodDispute:
      return {"refused", "pod_dispute"};
    case ContainerCount::kRefusedUndecodable:
      return {"refused", "undecodable"};
  }
  return {"?", "?"};
}

std::string_view RequestCountName(RequestCount r) {
  switch (r) {
    case RequestCount::kGranted:
      return "granted";
    case RequestCount::kClamped:
      return "clamped";
    case RequestCount::kRejected:
      return "rejected";
    case RequestCount::kIgnored:
      return "ignored";
    case RequestCount::kNotApplied:
      return "not_applied";
  }
  return "?";
}

Counted CountCreate(const Config& cfg, const ContainerFacts& facts, const Verdict& v) {
  Counted c;
  switch (v.action) {
    case Action::kApply:
      c.container = ContainerCount::kAdjusted;
      break;
    case Action::kProceedUnmodified:
      c.container = ContainerCount::kLeftNoLimits;
      break;
    case Action::kFail:
      c.container = RequestRefused(cfg, facts) ? ContainerCount::kRefusedRequest
                                               : ContainerCount::kRefusedPodDispute;
      break;
  }
  // A sandbox reads no request; a pod dispute refuses before any does.
  if (IsSandbox(facts) || c.container == ContainerCount::kRefusedPodDispute) return c;
  bool rejected = false;
  for (RequestSource s : cfg.requests.sources) {
    auto& r = c.requests.at(static_cast<size_t>(s));
    r = Alone(cfg, facts, s);
    rejected = rejected || r == RequestCount::kRejected;
  }
  if (!rejected) return c;
  for (size_t i = 0; i < kRequestSources; ++i) {
    auto& r = c.requests.at(i);
    const bool spec_kept = static_cast<RequestSource>(i) == RequestSource::kSpec &&
                           v.action != Action::kFail;  // the warn fallback clamps it
    if (r && r != RequestCount::kRejected && !spec_kept) r = RequestCount::kNotApplied;
  }
  return c;
}

void NriMetrics::Count(const Counted& c) {
  CountContainer(c.container);
  for (size_t s = 0; s < kRequestSources; ++s) {
    if (!c.requests.at(s)) continue;
    const size_t at = s * kRequestCounts + static_cast<size_t>(*c.requests.at(s));
    requests_.at(at).fetch_add(1, std::memory_order_relaxed);
  }
}

void NriMetrics::CountContainer(ContainerCount c) {
  containers_.at(static_cast<size_t>(c)).fetch_add(1, std::memory_order_relaxed);
}

void NriMetrics::SetConnected(bool connected) {
  if (connected) connects_.fetch_add(1, std::memory_order_relaxed);
  connected_.store(connected, std::memory_order_relaxed);
}

void NriMetrics::Synchronized(uint64_t healed, uint64_t failed) {
  healed_.fetch_add(healed, std::memory_order_relaxed);
  heal_failed_.fetch_add(failed, std::memory_order_relaxed);
  synchronizes_.fetch_add(1, std::memory_order_relaxed);
  last_sync_.store(unix_now_(), std::memory_order_relaxed);
  if (failed == 0) last_heal_ok_.store(last_sync_.load(), std::memory_order_relaxed);
}

void NriMetrics::NeedAdmin(uint64_t refused, uint64_t unhealed) {
  refused_running_.store(refused, std::memory_order_relaxed);
  unhealed_.store(unhealed, std::memory_order_relaxed);
}

void NriMetrics::ConfigReloaded(bool ok) {
  reload_ok_.store(ok, std::memory_order_relaxed);
  if (ok) {
    last_reload_ok_.store(unix_now_(), std::memory_order_relaxed);
  } else {
    reloads_refused_.fetch_add(1, std::memory_order_relaxed);
  }
}

void NriMetrics::SetPolicyDigest(std::string digest) {
  const std::lock_guard<std::mutex> lock(digest_mu_);
  digest_ = std::move(digest);
}

void NriMetrics::RepliesGivenUp(uint64_t replies, bool late) {
  (late ? late_ : unsent_).fetch_add(replies, std::memory_order_relaxed);
}

// The series a fleet admin reads beside the counts (docs/nri.md, "Metrics").
void NriMetrics::AddFleetFamilies(std::vector<PromFamily>& f) const {
  const auto load = [](const auto& a) { return a.load(std::memory_order_relaxed); };
  const auto gauge = [](std::string name, std::string help, double v) {
    return Family(std::move(name), std::move(help), PromType::kGauge,
                  {PromSample{.labels = {}, .value = v}});
  };
  f.push_back(gauge("process_start_time_seconds", "Unix time the plugin started.",
                    static_cast<double>(started_)));
  f.push_back(gauge("oci_rlimit_nri_config_last_reload_successful",
                    "1 while the last config load (start or SIGHUP) was taken; 0 after a refused "
                    "reload (the old config stays in force).",
                    load(reload_ok_) ? 1 : 0));
  f.push_back(gauge("oci_rlimit_nri_config_last_reload_success_timestamp_seconds",
                    "Unix time of the last config load taken (start or SIGHUP).",
                    static_cast<double>(load(last_reload_ok_))));
  f.push_back(Family("oci_rlimit_nri_config_reloads_refused_total",
                     "SIGHUP reloads refused (a bad config; the old one stays).",
                     PromType::kCounter, {Labeled({}, load(reloads_refused_))}));
  f.push_back(Family(
      "oci_rlimit_nri_replies_given_up_total",
      "Replies the runtime gave up on: written after its request deadline "
      "(2 s; late) or not written (unsent). Their containers ran without them.",
      PromType::kCounter,
      {Labeled({{"why", "late"}}, load(late_)), Labeled({{"why", "unsent"}}, load(unsent_))}));
  f.push_back(gauge("oci_rlimit_nri_refused_running_containers",
                    "At the last Synchronize: running containers the policy refuses "
                    "(refused-but-running in nri.status).",
                    static_cast<double>(load(refused_running_))));
  f.push_back(gauge("oci_rlimit_nri_unhealed_containers",
                    "At the last Synchronize: running containers that need a heal the plugin "
                    "could not make.",
                    static_cast<double>(load(unhealed_))));
  f.push_back(gauge("oci_rlimit_nri_last_successful_heal_timestamp_seconds",
                    "Unix time of the last Synchronize whose heal left no container unhealed; 0 "
                    "before the first.",
                    static_cast<double>(load(last_heal_ok_))));
  const std::lock_guard<std::mutex> lock(digest_mu_);
  f.push_back(PolicyInfoFamily("oci-rlimit-nri", digest_));
}

std::string NriMetrics::Text() const {
  const auto load = [](const std::atomic<uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
  };
  std::vector<PromSample> containers;
  for (size_t i = 0; i < kContainerCounts; ++i) {
    const CountLabels l = ContainerCountLabels(static_cast<ContainerCount>(i));
    containers.push_back(
        Labeled({{"outcome", std::string(l.outcome)}, {"reason", std::string(l.reason)}},
                load(containers_.at(i))));
  }
  std::vector<PromSample> requests;
  for (size_t s = 0; s < kRequestSources; ++s) {
    for (size_t i = 0; i < kRequestCounts; ++i) {
      requests.push_back(
          Labeled({{"source", RequestSourceName(static_cast<RequestSource>(s))},
                   {"result", std::string(RequestCountName(static_cast<RequestCount>(i)))}},
                  load(requests_.at(s * kRequestCounts + i))));
    }
  }
  const int64_t last = last_sync_.load(std::memory_order_relaxed);
  std::vector<PromFamily> f = {
      Family("oci_rlimit_nri_containers_total",
             "CreateContainer calls answered, by what the plugin did (adjusted, left_alone, "
             "refused) and why (policy, no_limits, undecodable, request: a request from any "
             "source refused, pod_dispute: the pod's identity disputed).",
             PromType::kCounter, std::move(containers)),
      Family("oci_rlimit_nri_requests_total",
             "Requests, one per source that asked (oci-rlimit: the oci-rlimit.io/rlimits "
             "annotation; ulimit-adjuster: the NRI sample's pod annotation; spec: the spec's own "
             "rlimits), granted, clamped to the ceilings, rejected (malformed or over a ceiling "
             "under reject), not_applied (another source's was rejected) or ignored (requests "
             "not enabled).",
             PromType::kCounter, std::move(requests)),
      Family("oci_rlimit_nri_heals_total",
             "Running containers' init processes the Synchronize heal set (done) or could not "
             "(failed: no permission, out of time).",
             PromType::kCounter,
             {Labeled({{"result", "done"}}, load(healed_)),
              Labeled({{"result", "failed"}}, load(heal_failed_))}),
      Family("oci_rlimit_nri_connected", "1 while the runtime has the plugin configured, else 0.",
             PromType::kGauge, {Labeled({}, connected_.load(std::memory_order_relaxed) ? 1 : 0)}),
      Family("oci_rlimit_nri_connects_total", "Times the runtime configured the plugin.",
             PromType::kCounter, {Labeled({}, load(connects_))}),
      Family("oci_rlimit_nri_synchronizes_total", "Synchronize calls healed.", PromType::kCounter,
             {Labeled({}, load(synchronizes_))}),
      Family("oci_rlimit_nri_last_synchronize_timestamp_seconds",
             "Unix time of the last Synchronize; 0 before the first.", PromType::kGauge,
             {PromSample{.labels = {}, .value = static_cast<double>(last)}}),
      Family("oci_rlimit_build_info", "The plugin's version; always 1.", PromType::kGauge,
             {Labeled({{"program", "oci-rlimit-nri"}, {"version", kVersion}}, 1)}),
  };
  AddFleetFamilies(f);
  AddLabelToAll(f, "node", node_);
  return FormatPrometheus(f);
}

}  // namespace ocirlimit::nri
