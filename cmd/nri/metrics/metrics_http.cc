#include "nri/metrics/metrics_http.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "formats/prom_text.h"
#include "formats/text.h"

namespace ocirlimit::nri {
namespace {

constexpr std::string_view kUnixPrefix = "unix:";

bool ValidIp(const std::string& host, bool v6) {
  unsigned char buf[16];
  return inet_pton(v6 ? AF_INET6 : AF_INET, host.c_str(), buf) == 1;
}

Result<uint16_t> Port(std::string_view text, std::string_view whole) {
  constexpr unsigned kMaxPort = 65535;
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return MakeError("--metrics-address " + Quote(whole) + ": the port must be a number");
  }
  const unsigned port = static_cast<unsigned>(std::stoul(std::string(text)));
  if (port == 0 || port > kMaxPort) {
    return MakeError("--metrics-address " + Quote(whole) + ": the port must be 1-65535");
  }
  return static_cast<uint16_t>(port);
}

std::string Reply(std::string_view status, std::string_view type, const std::string& body,
                  bool head_only) {
  std::string r = "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: " + std::string(type) +
                  "\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n\r\n";
  if (!head_only) r += body;
  return r;
}

}  // namespace

Result<MetricsAddress> ParseMetricsAddress(std::string_view text) {
  MetricsAddress a;
  if (text.substr(0, kUnixPrefix.size()) == kUnixPrefix) {
    a.kind = MetricsAddress::Kind::kUnix;
    a.path = std::string(text.substr(kUnixPrefix.size()));
    constexpr size_t kSunPath = 107;  // sockaddr_un's sun_path, less its NUL
    if (a.path.empty() || a.path.front() != '/' || a.path.size() > kSunPath) {
      return MakeError("--metrics-address " + Quote(text) +
                       ": a Unix socket is unix:/absolute/path (at most 107 bytes)");
    }
    return a;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return MakeError("--metrics-address " + Quote(text) +
                     ": use HOST:PORT (127.0.0.1:9464, [::1]:9464) or unix:/PATH");
  }
  std::string_view host = text.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";  // ":9464": every (IPv4) address
  const bool v6 = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (v6) host = host.substr(1, host.size() - 2);
  a.host = std::string(host);
  if (!ValidIp(a.host, v6)) {
    return MakeError("--metrics-address " + Quote(text) +
                     ": the host must be an IP address (127.0.0.1, [::1]), not a name");
  }
  auto port = Port(text.substr(colon + 1), text);
  if (!port) return port.error();
  a.port = *port;
  return a;
}

bool RequestHeadComplete(std::string_view head) {
  return head.find("\r\n\r\n") != std::string_view::npos ||
         head.find("\n\n") != std::string_view::npos;
}

HeadState RequestHeadState(std::string_view received) {
  if (RequestHeadComplete(received.substr(0, kMaxRequestHead))) return HeadState::kComplete;
  return received.size() >= kMaxRequestHead ? HeadState::kTooLong : HeadState::kPartial;
}

std::string HeadTooLongReply() {
  return Reply("431 Request Header Fields Too Large", "text/plain; charset=utf-8",
               "request head over " + std::to_string(kMaxRequestHead) + " bytes\n", false);
}

std::string HttpReply(std::string_view head, const std::function<std::string()>& metrics,
                      const std::function<bool()>& ready) {
  constexpr std::string_view kText = "text/plain; charset=utf-8";
  const std::string_view line = head.substr(0, head.find_first_of("\r\n"));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.substr(sp2 + 1, 5) != "HTTP/") {
    return Reply("400 Bad Request", kText, "bad request\n", false);
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool readyz = target == "/readyz" && ready;
  if (target != "/metrics" && !readyz) {
    return Reply("404 Not Found", kText, "oci-rlimit-nri serves /metrics and /readyz only\n",
                 false);
  }
  if (method != "GET" && method != "HEAD") {
    return Reply("405 Method Not Allowed", kText, "use GET\n", false);
  }
  if (readyz) {
    return ready() ? Reply("200 OK", kText, "ready\n", method == "HEAD")
                   : Reply("503 Service Unavailable", kText, "not connected to the runtime\n",
                           method == "HEAD");
  }
  return Reply("200 OK", kPromContentType, metrics(), method == "HEAD");
}

}  // namespace ocirlimit::nri
