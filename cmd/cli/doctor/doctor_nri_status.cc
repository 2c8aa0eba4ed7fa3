#include "cli/doctor/doctor_nri_status.h"

#include <utility>

#include "formats/nri_status.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

std::string Count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Why the status file is not believed (what, advice); nullopt when it is.
// Never its text: the path may be anything a process named itself with.
std::optional<std::pair<std::string, std::string>> Unbelieved(const Result<NriStatus>& status,
                                                              const WriterRuns& runs) {
  const NriTrust trust = TrustNriStatus(status, runs);
  if (trust == NriTrust::kUnreadable) {
    return std::pair<std::string, std::string>(
        "oci-rlimit-nri's status file is unreadable: not a status file oci-rlimit-nri wrote", "");
  }
  if (trust == NriTrust::kNoWriter) {
    return std::pair<std::string, std::string>(
        "oci-rlimit-nri's status file names no writer (an older plugin's): not believed",
        "restart oci-rlimit-nri: it rewrites the file when it connects");
  }
  if (trust == NriTrust::kStale) {
    return std::pair<std::string, std::string>(
        Cat("oci-rlimit-nri's status file was written by pid ", std::to_string(status->writer_pid),
            ", which no longer runs: stale, not believed"),
        "a plugin rewrites it only when it connects: see the lines above for whether one is "
        "running and connected");
  }
  return std::nullopt;
}

}  // namespace

std::vector<Check> NriStatusChecks(const std::optional<std::string>& text, const std::string& path,
                                   bool running, const WriterRuns& runs) {
  std::vector<Check> out;
  auto add = [&](CheckStatus s, std::string what, std::string advice = "") {
    out.push_back({"nri", s, std::move(what), path, std::move(advice)});
  };
  if (!text) {
    if (running) {
      add(CheckStatus::kInfo,
          "oci-rlimit-nri has written no status file: not connected since it started, or "
          "started with another --status-file");
    }
    return out;
  }
  auto status = ParseNriStatus(*text);
  if (auto why = Unbelieved(status, runs)) {
    add(CheckStatus::kWarn, why->first, why->second);
    return out;
  }
  const NriStatus& s = *status;
  const std::string when = "oci-rlimit-nri last (re)connected at " +
                           (s.connected.empty() ? std::string("?") : s.connected) +
                           (running ? "" : " (not running now)");
  if (s.synchronized.empty()) {
    add(CheckStatus::kInfo,
        when +
            "; the runtime sent no Synchronize since, so it healed nothing "
            "(containerd 1.7 sends none to a pre-registered plugin)",
        "run it as an external plugin (systemd unit or DaemonSet) to heal at reconnect; "
        "oci-rlimit audit --heal meanwhile");
    return out;
  }
  std::string what = when + " and healed " + std::to_string(s.healed) + " of " +
                     Count(s.containers, "container", "containers") + " then (" +
                     std::to_string(s.healed_total) + " since it started)";
  if (s.report_only) {
    add(CheckStatus::kWarn,
        what + "; it can only report: it does not see the host's PIDs, and " +
            Count(s.unhealed, "container was", "containers were") + " not checked",
        "give its DaemonSet hostPID: true (packaging/kubernetes/nri-daemonset.yaml); "
        "oci-rlimit audit --heal meanwhile");
  } else if (s.unhealed != 0) {
    add(CheckStatus::kWarn,
        what + "; " + Count(s.unhealed, "container", "containers") +
            " it could not heal (its log-file says why)",
        "oci-rlimit audit; it needs CAP_SYS_RESOURCE (" + std::string(kDocDir) + "/nri.md)");
  } else {
    add(CheckStatus::kOk, what);
  }
  if (s.refused != 0) {
    add(CheckStatus::kWarn,
        Count(s.refused, "container runs", "containers run") +
            " though the policy refuses its pod's request (refused-but-running: created while "
            "no plugin was connected; healed to the node's limits where it could)",
        "oci-rlimit audit names them; delete the pods or fix their requests");
  }
  return out;
}

}  // namespace ocirlimit
