#include "adapters/k8s/policy_stale.h"

#include <algorithm>

namespace ocirlimit::k8s {
namespace {

constexpr size_t kDigestChars = 64;

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// At `at`, just past the annotation's key: `"`? spaces `:` spaces `"`? then
// the value; the digest, or "" when the value is not one.
std::string ValueAt(std::string_view text, size_t at) {
  auto skip = [&](char c) {
    while (at < text.size() && text[at] == c) ++at;
  };
  skip('"');
  skip(' ');
  if (at >= text.size() || text[at] != ':') return "";
  ++at;
  skip(' ');
  if (at < text.size() && (text[at] == '"' || text[at] == '\'')) ++at;
  size_t end = at;
  while (end < text.size() && IsHex(text[end])) ++end;
  if (end - at != kDigestChars) return "";
  // The value ends there: a longer hex run or another character glued on is not a digest.
  if (end < text.size() && std::string_view("\"'\n\r,} ").find(text[end]) == std::string::npos)
    return "";
  return std::string(text.substr(at, kDigestChars));
}

}  // namespace

std::vector<std::string> PolicyDigestsIn(std::string_view text) {
  std::vector<std::string> out;
  for (size_t at = text.find(kPolicyDigestAnnotation); at != std::string_view::npos;
       at = text.find(kPolicyDigestAnnotation, at + 1)) {
    std::string d = ValueAt(text, at + kPolicyDigestAnnotation.size());
    if (!d.empty() && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

Staleness JudgeStaleness(const std::vector<std::string>& found, const std::string& digest) {
  if (found.empty()) return Staleness::kNoPolicy;
  for (const auto& d : found) {
    if (d != digest) return Staleness::kStale;
  }
  return Staleness::kCurrent;
}

}  // namespace ocirlimit::k8s
