#include "formats/nri_status.h"

#include <charconv>

#include "formats/key_value.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<uint64_t> Number(std::string_view key, std::string_view v) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return MakeError(std::string(key) + " = " + Quote(v) + ": not a count");
  }
  return n;
}

}  // namespace

std::string FormatNriStatus(const NriStatus& s) {
  return "# oci-rlimit-nri: its last (re)connect and what it healed then\n"
         "connected=" +
         s.connected + "\nsynchronized=" + s.synchronized +
         "\ncontainers=" + std::to_string(s.containers) + "\nhealed=" + std::to_string(s.healed) +
         "\nunhealed=" + std::to_string(s.unhealed) +
         "\nhealed-total=" + std::to_string(s.healed_total) +
         "\nrefused=" + std::to_string(s.refused) +
         "\nreport-only=" + (s.report_only ? "yes" : "no") +
         "\nwriter-pid=" + std::to_string(s.writer_pid) +
         "\nwriter-start=" + std::to_string(s.writer_start) + "\n";
}

Result<NriStatus> ParseNriStatus(std::string_view text) {
  NriStatus s;
  auto read = ForEachKeyValue(text, [&s](std::string_view key, std::string_view v) -> Status {
    uint64_t* count = key == "containers"     ? &s.containers
                      : key == "healed"       ? &s.healed
                      : key == "unhealed"     ? &s.unhealed
                      : key == "healed-total" ? &s.healed_total
                      : key == "refused"      ? &s.refused
                      : key == "writer-pid"   ? &s.writer_pid
                      : key == "writer-start" ? &s.writer_start
                                              : nullptr;
    if (count != nullptr) {
      auto n = Number(key, v);
      if (!n) return n.error();
      *count = *n;
    } else if (key == "connected") {
      s.connected = std::string(v);
    } else if (key == "synchronized") {
      s.synchronized = std::string(v);
    } else if (key == "report-only") {
      s.report_only = v == "yes";
    }
    return Ok{};
  });
  if (!read) return read.error();
  return s;
}

}  // namespace ocirlimit
