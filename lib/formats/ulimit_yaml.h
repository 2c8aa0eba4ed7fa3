// The annotation value of containerd's NRI sample plugin ulimit-adjuster
// (`ulimits.noderesource.dev/container.NAME`): a YAML list of
// {type, soft, hard}. Only that shape is read, block style
//   - type: RLIMIT_NOFILE
//     soft: 1024
//     hard: 4096
// or flow style (JSON is flow YAML): [{type: nofile, soft: 1024, hard: 4096}],
// or a block list of flow maps: - {type: nofile, soft: 1024, hard: 4096}.
// Keys in any case (Type:, SOFT:), as the sample's decoder matches them.
// A value the sample (containerd/nri v0.12.2, YAML 1.1) reads as a number
// gives the same number here, or a refusal that says why; never another:
// every field is required (the sample reads a missing soft or hard as 0),
// values are decimal integers from 0 to 2^64-1 (2^64-1 is unlimited)
// without leading zeros (octal there: 0777 is 511), soft <= hard, each type
// once. Pure; the text is bounded (kMaxUlimitYamlBytes).
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
// An empty value, `[]`, `null` or `~` asks for nothing. An error is one line.
Result<std::vector<Rlimit>> ParseUlimitYaml(std::string_view text);

}  // namespace ocirlimit
