// CEL (as Kubernetes 1.30+ evaluates it in a ValidatingAdmissionPolicy: the
// strings extension's split/lowerAscii/replace/endsWith, Kubernetes' regex
// find and RE2 matches, uint()) that reads the rlimit language exactly as
// core/rlimit.cc's ParseRlimitCsv does, and formats what it read as
// FormatRlimit and Quote do, so the policy's message is the node's. Pure text
// builders: each takes CEL expressions and returns one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rlimit.h"

namespace ocirlimit::k8s {

// An annotation value longer than this (in characters) is not judged: the
// node decides. Every value the node accepts without padding fits (16
// entries, each at most 52 characters, and 15 commas); the bound keeps the
// API server's CEL cost limits for the largest annotation it accepts.
inline constexpr size_t kMaxJudgedChars = 1024;
// A list of more non-empty entries names some type twice or an unknown one:
// malformed, as the node says, without parsing them.
inline constexpr size_t kMaxEntries = 16;

// The RE2 an entry (already trimmed) matches exactly when ParseRlimit's
// grammar accepts it: NAME (ASCII case-insensitive, an optional RLIMIT_
// prefix) = SOFT [: HARD], each value decimal, "unlimited", "infinity" or
// "-1", a K/M/G/T suffix only on a byte limit, isspace(3) blanks around each
// part. 64-bit overflow is CelFits's.
[[nodiscard]] std::string EntryGrammar();

// The RE2 a trimmed NAME matches exactly when FindRlimit finds it, and the
// CEL list of the types measured in bytes (the ones that take suffixes).
[[nodiscard]] std::string NameGrammar();
[[nodiscard]] std::string CelByteNames();
// The node's own words for an unknown name: "(want one of as, core, ...)".
[[nodiscard]] std::string KnownNames();

// `x` with the C locale's isspace blanks cut at both ends ("" for blanks
// only), as core's Trim.
[[nodiscard]] std::string CelTrim(std::string_view x);
// Of a trimmed entry that matches EntryGrammar: its canonical type name
// ("memlock"), its soft value's text and its hard value's (the soft one's
// when it has none).
[[nodiscard]] std::string CelName(std::string_view entry);
[[nodiscard]] std::string CelSoftText(std::string_view entry);
[[nodiscard]] std::string CelHardText(std::string_view entry);
// Whether a value's text (that matches the grammar) is at most 2^64-1 once
// its suffix is applied, and its value as a uint (only where it fits).
[[nodiscard]] std::string CelFits(std::string_view text);
[[nodiscard]] std::string CelValue(std::string_view text);
// A uint as FormatLimitValue writes it ("unlimited" for RLIM_INFINITY).
[[nodiscard]] std::string CelLimitText(std::string_view value);
// A string as Quote writes it: `"..."`, `"` and `\` escaped, controls as \n
// \r \t \xNN, C1 controls and bidi marks as \uNNNN, a value over 256 bytes
// cut where the node cuts it (the longest prefix of at most 256 bytes, no
// character split) with `…" (N bytes)`.
[[nodiscard]] std::string CelQuote(std::string_view x);

// A CEL string literal of `s` (printable ASCII).
[[nodiscard]] std::string CelString(std::string_view s);
// The ceilings as a CEL map: {'memlock': [68719476736u, 68719476736u]}, and
// as text: {'memlock': 'memlock=68719476736:68719476736'}.
[[nodiscard]] std::string CelCeilings(const std::vector<Rlimit>& ceilings);
[[nodiscard]] std::string CelCeilingTexts(const std::vector<Rlimit>& ceilings);

}  // namespace ocirlimit::k8s
