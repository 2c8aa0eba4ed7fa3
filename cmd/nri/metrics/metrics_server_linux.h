// The metrics endpoint's sockets and thread (--metrics-address): one
// listening socket, served by a thread of its own with one poll() loop over
// every connection at once (at most 64; each gets 1 s from accept to send
// its request and take its reply; past 64 a new connection takes the place
// of the oldest still sending its request), so idle peers cannot hold a
// scrape off, and a scrape never touches the plugin's thread: that one only
// bumps relaxed atomics (metrics.h), and the server takes no lock.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "formats/error.h"
#include "nri/metrics/metrics_http.h"

namespace ocirlimit::nri {

class MetricsServer {
 public:
  virtual ~MetricsServer() = default;  // stops the thread and closes the socket
};

// Binds `addr` (a Unix socket's stale file is replaced; its mode is 0660)
// and starts serving `metrics` on it, and `ready` on /readyz (HttpReply).
[[nodiscard]] Result<std::unique_ptr<MetricsServer>> StartMetricsServer(
    const MetricsAddress& addr, std::function<std::string()> metrics,
    std::function<bool()> ready = {});

}  // namespace ocirlimit::nri
