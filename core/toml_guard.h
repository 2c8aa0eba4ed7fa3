// A guard in front of toml++ 3.3.0 (Debian 12). Its whitespace test for
// non-ASCII code points reaches __builtin_unreachable() for U+00A1..U+0499,
// U+2C5E..U+3057 and U+FB26..U+FEFE (found by fuzz/fuzz_config.cc): undefined
// behaviour, reachable from structural positions and from the scan that
// builds a syntax error message, even over bytes inside a string. So those
// code points, and anything that is not valid UTF-8, are refused before
// toml++ sees the text. Configs are ASCII in practice; the error says where.
#pragma once

#include <string_view>

#include "core/error.h"

namespace ocirlimit {

Status CheckTomlSafeText(std::string_view text);

}  // namespace ocirlimit
