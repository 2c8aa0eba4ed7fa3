// The NRI plugin's metrics endpoint, its pure half (nri/metrics_http.h): a
// request head from anyone who can reach --metrics-address. The input is
// read as the server reads it: up to kMaxRequestHead bytes, a head when it
// holds its blank line. Properties: no crash; every reply is one HTTP/1.1
// response with a status line, a blank line and Connection: close; the
// metrics are asked for only for a 200, and nothing of the request comes
// back in the reply's head.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nri/metrics/metrics_http.h"

namespace {

constexpr std::string_view kBody = "oci_rlimit_fuzz_metric 1\n";

void Check(std::string_view head) {
  bool asked = false;
  const std::string reply = ocirlimit::nri::HttpReply(head, [&] {
    asked = true;
    return std::string(kBody);
  });
  const size_t end = reply.find("\r\n\r\n");
  if (reply.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) std::abort();
  const std::string_view reply_head = std::string_view(reply).substr(0, end);
  if (reply_head.find("Connection: close") == std::string_view::npos) std::abort();
  if (asked != (reply.rfind("HTTP/1.1 200 ", 0) == 0)) std::abort();
  for (char c : reply_head) {
    if (static_cast<unsigned char>(c) >= 0x7f || (c < 0x20 && c != '\r' && c != '\n')) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  using ocirlimit::nri::HeadState;
  const HeadState st = ocirlimit::nri::RequestHeadState(in);
  if ((st == HeadState::kTooLong) !=
      (size >= ocirlimit::nri::kMaxRequestHead && st != HeadState::kComplete)) {
    std::abort();
  }
  in = in.substr(0, ocirlimit::nri::kMaxRequestHead);
  (void)ocirlimit::nri::RequestHeadComplete(in);
  Check(in);
  return 0;
}
