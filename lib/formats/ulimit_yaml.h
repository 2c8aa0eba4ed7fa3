// The annotation value of containerd's NRI sample plugin ulimit-adjuster
// (`ulimits.noderesource.dev/container.NAME`): a YAML list of {type, soft,
// hard}, read as the sample reads it (containerd/nri v0.12.2): YAML 1.1
// through libyaml (the sample's go-yaml v2 is a port of it), scalars
// resolved as go-yaml v2 resolves them (formats/ulimit_yaml_scalar.h), then
// decoded as sigs.k8s.io/yaml and Go's encoding/json decode them: keys in
// any case, an unknown key ignored, a quoted number refused, 0x400, 1_024,
// +1024 and 1e3 read as numbers. The sample's numbers, or a refusal in one
// line; where the sample would read a number other than the text's, a
// refusal saying what it would read (docs/policy.md lists them): a missing
// or null soft or hard (0 there), a leading-zero octal (0777 is 511), a
// float that rounds, soft:1024 in a flow mapping (one key), a field or type
// given twice, a second document (dropped there). Pure; the text is bounded
// (kMaxUlimitYamlBytes).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// A longer value is refused before it is read: sixteen entries fit in 2 KiB.
inline constexpr size_t kMaxUlimitYamlBytes = size_t{16} * 1024;

// The entries in order. `type` takes the sample's spellings: "RLIMIT_NOFILE",
// "rlimit_memlock", "nproc" (any case, RLIMIT_ optional). An empty value,
// `[]`, `null` or `~` asks for nothing. An error is one line.
Result<std::vector<Rlimit>> ParseUlimitYaml(std::string_view text);

}  // namespace ocirlimit
