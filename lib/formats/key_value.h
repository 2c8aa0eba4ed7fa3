// The "key=value" lines of the small files the node programs write for each
// other: the NRI plugin's status file and the decision records.
#pragma once

#include <functional>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

// Calls `each(key, value)` for every line of `text` in order, skipping blank
// lines and '#' comments. The first error stops it: each's, or a line
// without '=' (named, quoted).
[[nodiscard]] Status ForEachKeyValue(
    std::string_view text, const std::function<Status(std::string_view, std::string_view)>& each);

}  // namespace ocirlimit
