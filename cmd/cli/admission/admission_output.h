// Where `oci-rlimit admission-policy` puts its YAML: stdout, or --output
// FILE. Every write error is an error (one line), and no half-written policy
// is ever left for `kubectl apply -f` to read.
#pragma once

#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit::cli {

// All of `text` to `fd` (short writes and EINTR retried). When `fd` is a
// regular file (`> p.yaml`) and the write fails, the file is cut back to
// where the write began, so a full disk leaves no truncated policy.
[[nodiscard]] Status WriteAllTo(int fd, std::string_view text);

// --output: "" or "-" is stdout; else FILE, replaced through a temp file
// beside it and a rename (a new FILE appears whole, 0644), so a failure
// leaves the old FILE, or none.
[[nodiscard]] Status WriteOutput(const std::string& output, const std::string& text);

}  // namespace ocirlimit::cli
