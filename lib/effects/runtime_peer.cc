#include "effects/runtime_peer.h"

#include <charconv>
#include <cstdint>

#include "core/unraisable.h"

namespace ocirlimit {

std::optional<std::string> UnraisableByRuntime(const std::vector<Rlimit>& want,
                                               const RuntimeLimits& runtime) {
  if (runtime.can_raise) return std::nullopt;
  auto u = FindUnraisable(want, runtime.limits);
  if (!u) return std::nullopt;
  return UnraisableMessage(*u, runtime.who);
}

std::optional<bool> CapEffHasSysResource(std::string_view status) {
  constexpr std::string_view kKey = "\nCapEff:";
  constexpr int kCapSysResource = 24;
  const size_t at = status.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view v = status.substr(at + kKey.size());
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  uint64_t caps = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), caps, 16);
  if (ec != std::errc() || end == v.data() || end != v.data() + v.size()) return std::nullopt;
  return (caps >> kCapSysResource & 1U) != 0;
}

}  // namespace ocirlimit
