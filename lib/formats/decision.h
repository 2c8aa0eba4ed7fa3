// The decision record: what was decided for one container when it was
// created, by the root program that decided (docs/policy.md, "One decision
// per container"). Every later actor (the NRI heal, the wrapper's exec and
// create, audit) applies it instead of deciding again. Pure: text in, text out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// Who decided: the plugin at CreateContainer, the wrapper at create/run.
inline constexpr std::string_view kDecidedByNri = "nri";
inline constexpr std::string_view kDecidedByWrapper = "wrapper";

struct DecisionRecord {
  std::string id;      // the container's id (the record's file name)
  std::string by;      // kDecidedByNri or kDecidedByWrapper
  std::string policy;  // PolicyDigest of the config that decided
  std::string time;    // RFC 3339
  // The limits decided, one per type; a type not here was decided as
  // nothing (the container keeps what the runtime gives). Empty: nothing.
  std::vector<Rlimit> limits;
};

// "limits=memlock=1:2 nofile=3:4" or "limits=nothing", one key per line.
[[nodiscard]] std::string FormatDecision(const DecisionRecord& d);
// Every key is required; an unknown key is skipped (a newer writer); a
// version other than 1, a bad limit or a type twice is an error.
[[nodiscard]] Result<DecisionRecord> ParseDecision(std::string_view text);

// "memlock=1:2 nofile=3:4", or "nothing" when empty.
[[nodiscard]] std::string DecidedLimits(const std::vector<Rlimit>& limits);

}  // namespace ocirlimit
