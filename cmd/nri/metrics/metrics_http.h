// The metrics endpoint's pure half: --metrics-address's forms, and the
// HTTP/1.1 reply to one request (GET or HEAD /metrics or /readyz; anything
// else 404, 405 or 400). Every reply closes the connection. metrics_server_linux.h
// has the sockets and the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit::nri {

struct MetricsAddress {
  enum class Kind { kTcp, kUnix } kind = Kind::kTcp;
  std::string host;  // kTcp: an IPv4 or IPv6 literal (without brackets)
  uint16_t port = 0;
  std::string path;  // kUnix
  bool operator==(const MetricsAddress&) const = default;
};

// "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464" or "unix:/run/x.sock";
// ":9464" is "0.0.0.0:9464" (every IPv4 address; "[::]:9464" for IPv6).
// A host name is refused (no resolver in a static binary); port 1-65535.
[[nodiscard]] Result<MetricsAddress> ParseMetricsAddress(std::string_view text);

// A request head (up to and with its blank line) is at most this long.
inline constexpr size_t kMaxRequestHead = 8192;
// Whether `head` holds the whole head (it ends in a blank line).
[[nodiscard]] bool RequestHeadComplete(std::string_view head);

// What the bytes received so far on a connection hold: the whole head
// within kMaxRequestHead bytes, not yet, or kMaxRequestHead bytes without
// one (answered with HeadTooLongReply, never waited on).
enum class HeadState { kPartial, kComplete, kTooLong };
[[nodiscard]] HeadState RequestHeadState(std::string_view received);
// 431 Request Header Fields Too Large.
[[nodiscard]] std::string HeadTooLongReply();

// The whole reply (status line, headers, body) to the request `head`; the
// body of /metrics from `metrics`, called only for GET /metrics. With
// `ready`, /readyz answers 200 while it is true and 503 otherwise: a
// readiness probe that needs no shell in the image.
[[nodiscard]] std::string HttpReply(std::string_view head,
                                    const std::function<std::string()>& metrics,
                                    const std::function<bool()>& ready = {});

}  // namespace ocirlimit::nri
