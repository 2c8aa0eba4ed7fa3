#include "formats/rlimit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<uint64_t> ParseValue(std::string_view entry, const RlimitInfo& info, std::string_view text,
                            std::string_view which) {
  auto fail = [&](const std::string& why) {
    return MakeError("rlimit " + Quote(entry) + ": " + std::string(which) + " " + why);
  };
  if (text.empty()) return fail("value is empty");
  std::string lower = Lower(text);
  if (lower == "unlimited" || lower == "infinity" || lower == "-1") return kRlimInfinity;

  uint64_t multiplier = 1;
  std::string_view digits = text;
  switch (std::tolower(static_cast<unsigned char>(text.back()))) {
    case 'k':
      multiplier = 1ULL << 10;
      break;
    case 'm':
      multiplier = 1ULL << 20;
      break;
    case 'g':
      multiplier = 1ULL << 30;
      break;
    case 't':
      multiplier = 1ULL << 40;
      break;
    default:
      break;
  }
  if (multiplier != 1) {
    if (!info.bytes) {
      return fail("value " + Quote(text) + " has a size suffix, but " + std::string(info.name) +
                  " is not measured in bytes");
    }
    digits.remove_suffix(1);
  }
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return fail("value " + Quote(text) +
                " is not a decimal integer, \"unlimited\", \"infinity\" or \"-1\"");
  }
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec == std::errc::result_out_of_range || ptr != digits.data() + digits.size() ||
      n > UINT64_MAX / multiplier) {
    return fail("value " + Quote(text) + " overflows 64 bits");
  }
  return n * multiplier;
}

}  // namespace

const std::vector<RlimitInfo>& AllRlimits() {
  static const std::vector<RlimitInfo> kAll = {
      {"cpu", "RLIMIT_CPU", RLIMIT_CPU, false},
      {"fsize", "RLIMIT_FSIZE", RLIMIT_FSIZE, true},
      {"data", "RLIMIT_DATA", RLIMIT_DATA, true},
      {"stack", "RLIMIT_STACK", RLIMIT_STACK, true},
      {"core", "RLIMIT_CORE", RLIMIT_CORE, true},
      {"rss", "RLIMIT_RSS", RLIMIT_RSS, true},
      {"nproc", "RLIMIT_NPROC", RLIMIT_NPROC, false},
      {"nofile", "RLIMIT_NOFILE", RLIMIT_NOFILE, false},
      {"memlock", "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK, true},
      {"as", "RLIMIT_AS", RLIMIT_AS, true},
      {"locks", "RLIMIT_LOCKS", RLIMIT_LOCKS, false},
      {"sigpending", "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING, false},
      {"msgqueue", "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE, true},
      {"nice", "RLIMIT_NICE", RLIMIT_NICE, false},
      {"rtprio", "RLIMIT_RTPRIO", RLIMIT_RTPRIO, false},
      {"rttime", "RLIMIT_RTTIME", RLIMIT_RTTIME, false},
  };
  return kAll;
}

const RlimitInfo* FindRlimit(std::string_view name) {
  std::string lower = Lower(name);
  std::string_view bare = lower;
  if (bare.starts_with("rlimit_")) bare.remove_prefix(7);
  for (const auto& info : AllRlimits()) {
    if (info.name == bare) return &info;
  }
  return nullptr;
}

const RlimitInfo* FindRlimitByResource(int resource) {
  for (const auto& info : AllRlimits()) {
    if (info.resource == resource) return &info;
  }
  return nullptr;
}

const RlimitInfo& Rlimit::info() const { return *FindRlimitByResource(resource); }

Result<Rlimit> ParseRlimit(std::string_view raw) {
  std::string_view entry = Trim(raw);
  size_t eq = entry.find('=');
  if (eq == std::string_view::npos) {
    return MakeError("rlimit " + Quote(entry) + ": expected NAME=SOFT[:HARD]");
  }
  std::string_view name = Trim(entry.substr(0, eq));
  const RlimitInfo* info = FindRlimit(name);
  if (info == nullptr) {
    return MakeError("rlimit " + Quote(entry) + ": unknown name " + Quote(name) +
                     " (want one of as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, "
                     "nofile, nproc, rss, rtprio, rttime, sigpending, stack)");
  }
  std::string_view values = Trim(entry.substr(eq + 1));
  size_t colon = values.find(':');
  std::string_view soft_text = Trim(values.substr(0, colon));
  auto soft = ParseValue(entry, *info, soft_text, "soft");
  if (!soft) return soft.error();
  uint64_t hard_value = *soft;
  if (colon != std::string_view::npos) {
    auto hard = ParseValue(entry, *info, Trim(values.substr(colon + 1)), "hard");
    if (!hard) return hard.error();
    hard_value = *hard;
  }
  if (*soft > hard_value) {
    return MakeError("rlimit " + Quote(entry) + ": soft " + FormatLimitValue(*soft) +
                     " is greater than hard " + FormatLimitValue(hard_value));
  }
  return Rlimit{info->resource, *soft, hard_value};
}

Result<std::vector<Rlimit>> ParseRlimitList(const std::vector<std::string>& entries) {
  std::vector<Rlimit> out;
  for (const auto& entry : entries) {
    auto r = ParseRlimit(entry);
    if (!r) return r.error();
    for (const auto& seen : out) {
      if (seen.resource == r->resource) {
        return MakeError("rlimit " + Quote(Trim(entry)) + ": " + std::string(r->info().name) +
                         " is given twice");
      }
    }
    out.push_back(*r);
  }
  return out;
}

Result<std::vector<Rlimit>> ParseRlimitCsv(std::string_view csv) {
  std::vector<std::string> entries;
  while (!csv.empty()) {
    size_t comma = csv.find(',');
    std::string_view item = Trim(csv.substr(0, comma));
    if (!item.empty()) entries.emplace_back(item);
    if (comma == std::string_view::npos) break;
    csv.remove_prefix(comma + 1);
  }
  return ParseRlimitList(entries);
}

std::vector<Rlimit> OverrideRlimits(std::vector<Rlimit> base,
                                    const std::vector<Rlimit>& overrides) {
  for (const auto& o : overrides) {
    auto it = std::find_if(base.begin(), base.end(),
                           [&](const Rlimit& b) { return b.resource == o.resource; });
    if (it != base.end()) {
      *it = o;
    } else {
      base.push_back(o);
    }
  }
  return base;
}

std::string FormatLimitValue(uint64_t v) {
  return v == kRlimInfinity ? "unlimited" : std::to_string(v);
}

std::string FormatRlimit(const Rlimit& r) {
  return std::string(r.info().name) + "=" + FormatLimitValue(r.soft) + ":" +
         FormatLimitValue(r.hard);
}

}  // namespace ocirlimit
