#include "core/pattern.h"

#include <fnmatch.h>
#include <regex.h>

#include <array>

namespace ocirlimit {
namespace {

// regex_t owns heap memory; this frees it on every path.
class CompiledRegex {
 public:
  explicit CompiledRegex(const std::string& pattern) {
    // Anchored and grouped, so "a|b" means the whole text is a or b.
    rc_ = regcomp(&re_, ("^(" + pattern + ")$").c_str(), REG_EXTENDED | REG_NOSUB);
  }
  ~CompiledRegex() {
    if (rc_ == 0) regfree(&re_);
  }
  CompiledRegex(const CompiledRegex&) = delete;
  CompiledRegex& operator=(const CompiledRegex&) = delete;

  int rc() const { return rc_; }
  std::string Why() const {
    std::array<char, 256> buf{};
    regerror(rc_, &re_, buf.data(), buf.size());
    return buf.data();
  }
  bool Matches(const std::string& text) const {
    return rc_ == 0 && regexec(&re_, text.c_str(), 0, nullptr, 0) == 0;
  }

 private:
  regex_t re_{};
  int rc_ = -1;
};

}  // namespace

class Regex::Compiled : public CompiledRegex {
 public:
  using CompiledRegex::CompiledRegex;
};

Regex::Regex(const std::string& pattern) : re_(std::make_shared<const Compiled>(pattern)) {}

bool Regex::FullMatch(const std::string& text) const {
  // An embedded NUL would end the C string early and match a prefix only.
  if (text.find('\0') != std::string::npos) return false;
  return re_->Matches(text);
}

Status CheckRegex(const std::string& pattern) {
  CompiledRegex re(pattern);
  if (re.rc() != 0) return MakeError(re.Why());
  return Ok{};
}

bool RegexFullMatch(const std::string& pattern, const std::string& text) {
  // An embedded NUL would end the C string early and match a prefix only.
  if (text.find('\0') != std::string::npos) return false;
  return CompiledRegex(pattern).Matches(text);
}

bool GlobMatch(const std::string& glob, const std::string& path, bool pathname) {
  if (path.find('\0') != std::string::npos) return false;
  return fnmatch(glob.c_str(), path.c_str(), pathname ? FNM_PATHNAME : 0) == 0;
}

}  // namespace ocirlimit
