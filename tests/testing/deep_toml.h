// TOML nested past core's guard (formats/toml_guard.h), for the tables that
// feed it to every reader: toml++ recursed once per part of a dotted key or
// a [table] header and overflowed the stack (SIGSEGV) on a dotted key of
// 60,000 parts or a header of 80,000.
#pragma once

#include <string>

namespace ocirlimit::testsupport {

// "a.a.a..." with `parts` parts; the guard's error for it points at the
// 100th dot (column 200 of a key at the start of a line, 201 in a header).
inline std::string DeepTomlKey(int parts) {
  std::string s = "a";
  s.reserve(static_cast<size_t>(parts) * 2);
  for (int i = 1; i < parts; ++i) s += ".a";
  return s;
}

// A dotted key `a.a...= 1` of 60,000 parts, and a header `[a.a...]` of 80,000.
inline std::string DeepTomlDottedKey() { return DeepTomlKey(60000) + " = 1\n"; }
inline std::string DeepTomlHeader() { return "[" + DeepTomlKey(80000) + "]\n"; }

}  // namespace ocirlimit::testsupport
