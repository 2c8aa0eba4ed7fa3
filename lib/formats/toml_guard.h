// A guard in front of toml++ 3.3.0 (Debian 12), which every TOML reader calls
// before toml::parse (core/config.cc, cli/node_config.cc, cli/doctor.cc).
//
// Characters: its whitespace test for non-ASCII code points reaches
// __builtin_unreachable() for U+00A1..U+0499, U+2C5E..U+3057 and
// U+FB26..U+FEFE (found by fuzz/fuzz_config.cc): undefined behaviour,
// reachable from structural positions and from the scan that builds a syntax
// error message, even over bytes inside a string. So those code points, and
// anything that is not valid UTF-8, are refused before toml++ sees the text.
// Configs are ASCII in practice; the error says where.
//
// Depth: toml++ limits the nesting of arrays and inline tables (256) but not
// of dotted keys or [table] headers, and recurses once per level: `a.a.a...=1`
// with 60000 parts, or a header with 80000, overflowed the stack (SIGSEGV).
// A text pre-scan bounds how deep any value sits (kMaxTomlDepth: header parts
// + dotted key parts + enclosing inline tables and arrays), and the size.
#pragma once

#include <cstddef>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

// Deeper than any real config: containerd's deepest key is 8 levels.
inline constexpr int kMaxTomlDepth = 100;
// Larger than any real config; the readers read at most 1 MiB anyway.
inline constexpr size_t kMaxTomlBytes = size_t{4} << 20;

// Ok, or one line saying where and which limit: "line 1, column 203: keys
// nested deeper than 100 levels ...".
Status CheckTomlSafeText(std::string_view text);

}  // namespace ocirlimit
