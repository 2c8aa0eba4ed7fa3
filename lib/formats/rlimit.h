// The rlimit language shared by every oci-rlimit entry point:
//   NAME=SOFT[:HARD]
// NAME is one of the 16 Linux rlimits (case-insensitive, optional RLIMIT_
// prefix); values are decimal, or unlimited/infinity/-1 for RLIM_INFINITY;
// byte-valued limits take binary K/M/G/T suffixes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

// Same value as runc's and the kernel's RLIM_INFINITY on 64-bit.
inline constexpr uint64_t kRlimInfinity = UINT64_MAX;

struct RlimitInfo {
  std::string_view name;       // "memlock"
  std::string_view spec_type;  // "RLIMIT_MEMLOCK", as in the OCI spec
  int resource;                // RLIMIT_MEMLOCK
  bool bytes;                  // accepts K/M/G/T suffixes
};

// All 16, in the kernel's resource order.
const std::vector<RlimitInfo>& AllRlimits();
// Accepts "memlock", "MEMLOCK", "rlimit_memlock", "RLIMIT_MEMLOCK".
const RlimitInfo* FindRlimit(std::string_view name);
const RlimitInfo* FindRlimitByResource(int resource);

// A soft:hard pair as prlimit(2) reads and writes it.
struct LimitPair {
  uint64_t soft = 0;
  uint64_t hard = 0;
  bool operator==(const LimitPair&) const = default;
};

// One limit changed on a process: its value before and after.
struct Change {
  int resource = -1;
  LimitPair before;
  LimitPair after;
};

struct Rlimit {
  int resource = -1;
  uint64_t soft = 0;
  uint64_t hard = 0;

  const RlimitInfo& info() const;
  bool operator==(const Rlimit&) const = default;
};

// One entry, e.g. "memlock=8M:unlimited".
Result<Rlimit> ParseRlimit(std::string_view entry);
// A list; the same NAME twice is an error.
Result<std::vector<Rlimit>> ParseRlimitList(const std::vector<std::string>& entries);
// A comma-separated list, as in OCI_RLIMIT_RLIMITS. Empty items are skipped.
Result<std::vector<Rlimit>> ParseRlimitCsv(std::string_view csv);

// Entries of `overrides` replace same-type entries of `base`; new types are
// appended. Order is stable.
std::vector<Rlimit> OverrideRlimits(std::vector<Rlimit> base, const std::vector<Rlimit>& overrides);

// "unlimited" for RLIM_INFINITY, else decimal.
std::string FormatLimitValue(uint64_t v);
// "memlock=8388608:unlimited"
std::string FormatRlimit(const Rlimit& r);

}  // namespace ocirlimit
