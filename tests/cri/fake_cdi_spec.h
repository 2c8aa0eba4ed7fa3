// The fake vendor CDI spec the GPU tests on containerd share: what
// `nvidia-ctk cdi generate` writes, reduced to one harmless device node
// (/dev/null as /dev/nvidia0) and an env.
#pragma once

namespace ocirlimit::itest {

inline constexpr const char* kFakeCdiSpec = R"({
  "cdiVersion": "0.6.0",
  "kind": "nvidia.com/gpu",
  "devices": [{"name": "0", "containerEdits": {
    "deviceNodes": [{"path": "/dev/nvidia0", "hostPath": "/dev/null"}],
    "env": ["FAKE_GPU=gpu0"]}}]
})";

}  // namespace ocirlimit::itest
