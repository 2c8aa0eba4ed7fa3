// The two pattern languages of policy rules, both libc pure functions:
// POSIX extended regular expressions matched against the whole string
// (annotation keys and values, environment values), and fnmatch(3) globs
// (device paths). glibc's regexec does not recurse per input character, so a
// container's long annotation cannot exhaust the hook's stack.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

// Checks that `pattern` compiles as a POSIX ERE; the error names the reason.
Status CheckRegex(const std::string& pattern);

// True when the whole of `text` matches the ERE `pattern`. A pattern that
// does not compile matches nothing. Compiles on every call: match many
// texts with a Regex instead.
bool RegexFullMatch(const std::string& pattern, const std::string& text);

// An ERE compiled once and matched against the whole text many times.
// Copies share the compiled form; a pattern that does not compile matches
// nothing (configs are checked with CheckRegex).
class Regex {
 public:
  explicit Regex(const std::string& pattern);
  bool FullMatch(const std::string& text) const;

 private:
  class Compiled;
  std::shared_ptr<const Compiled> re_;
};

// fnmatch(3); with `pathname` (FNM_PATHNAME) `*` stays within one path
// component, as for device paths.
bool GlobMatch(const std::string& glob, const std::string& path, bool pathname = true);

}  // namespace ocirlimit
