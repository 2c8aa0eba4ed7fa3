// The annotation value of containerd's NRI sample plugin ulimit-adjuster
// (`ulimits.noderesource.dev/container.NAME`): a YAML list of
// {type, soft, hard}. Only that shape is read, block style
//   - type: RLIMIT_NOFILE
//     soft: 1024
//     hard: 4096
// or flow style (JSON is flow YAML): [{type: nofile, soft: 1024, hard: 4096}].
// Strict where the sample is lax: every field is required, values are
// decimal integers from 0 to 2^64-1 (2^64-1 is unlimited), soft <= hard,
// each type once. Pure; the text is bounded (kMaxUlimitYamlBytes).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// A longer value is refused before it is read: sixteen entries fit in 2 KiB.
inline constexpr size_t kMaxUlimitYamlBytes = size_t{16} * 1024;

// The entries in order. `type` takes the sample's spellings and more:
// "RLIMIT_NOFILE", "rlimit_memlock", "nproc" (any case, RLIMIT_ optional).
// An empty value or `[]` asks for nothing.
Result<std::vector<Rlimit>> ParseUlimitYaml(std::string_view text);

}  // namespace ocirlimit
