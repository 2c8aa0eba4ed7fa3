#include "core/unraisable.h"

#include <algorithm>
#include <array>

namespace ocirlimit {
namespace {

// 8388608 -> "8M" for a byte limit that is an exact multiple; else the number.
std::string Value(const RlimitInfo& info, uint64_t v) {
  if (v == kRlimInfinity || !info.bytes || v == 0) return FormatLimitValue(v);
  constexpr std::array<std::pair<char, int>, 4> kUnits = {
      {{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};
  for (const auto& [suffix, shift] : kUnits) {
    const uint64_t unit = uint64_t{1} << shift;
    if (v % unit == 0) return std::to_string(v / unit) + suffix;
  }
  return std::to_string(v);
}

}  // namespace

std::optional<Unraisable> FindUnraisable(const std::vector<Rlimit>& want,
                                         const std::vector<Rlimit>& in_force) {
  for (const auto& w : want) {
    auto now = std::find_if(in_force.begin(), in_force.end(),
                            [&](const Rlimit& r) { return r.resource == w.resource; });
    if (now != in_force.end() && w.hard > now->hard) return Unraisable{w, now->hard};
  }
  return std::nullopt;
}

std::string RlimitEntry(const Rlimit& r) {
  const std::string name(r.info().name);
  if (r.soft == r.hard) return name + "=" + Value(r.info(), r.hard);
  return name + "=" + Value(r.info(), r.soft) + ":" + Value(r.info(), r.hard);
}

std::string UnraisableMessage(const Unraisable& u, std::string_view who, bool rootless) {
  Rlimit works = u.want;
  works.hard = u.in_force;
  works.soft = std::min(u.want.soft, u.in_force);
  std::string out = "config entry " + RlimitEntry(u.want) + ": the hard limit in force is " +
                    Value(u.want.info(), u.in_force) +
                    ", and raising it needs CAP_SYS_RESOURCE, which " + std::string(who) +
                    " does not have";
  if (rootless) {
    return out + " (a rootless engine never has it); " + RlimitEntry(works) + " would work";
  }
  return out + "; " + RlimitEntry(works) +
         " would work (or run the container engine with CAP_SYS_RESOURCE)";
}

}  // namespace ocirlimit
