// A guard in front of nlohmann::json for text from outside (hook state,
// helper --state, config.json, an exec --process file, podman's precreate
// spec). nlohmann's parser is iterative, but dump(), copies and comparisons
// recurse once per level: about 50,000 levels overflow the stack and kill
// the program with SIGSEGV and no message. So nesting is counted on the text
// first, before any DOM exists. Runtimes' real specs are under ten levels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

inline constexpr size_t kMaxJsonDepth = 64;

// Refuses text in which arrays and objects nest deeper than max_depth
// (brackets inside strings, escaped quotes included, do not count). Says
// nothing about whether the text is JSON otherwise: the parser does that.
// `what` names the input: `what: nested deeper than 64 levels (at byte N)`.
Status CheckJsonDepth(std::string_view text, const std::string& what,
                      size_t max_depth = kMaxJsonDepth);

}  // namespace ocirlimit
