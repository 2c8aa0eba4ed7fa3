// NVIDIA's real toolkit (v1.20.0, OCI_RLIMIT_NVIDIA_DIR) as lifecycle
// operations on the CRI-O node (docs/daemons-testing.md, "The lifecycle
// test"): `nvidia-ctk runtime configure --runtime=crio` beside our handler
// (crio restarted to serve it), `nvidia-ctk-installer` started as the GPU
// Operator's toolkit pod runs it (its drop-in), or with its NRI plugin on
// crio's NRI socket (then it writes no drop-in), its SIGTERM, and the
// toolkit's removal (crio restarted). A CDI spec with a
// stand-in device node (/dev/null as /dev/nvidia0) is what the NRI plugin's
// CDI names resolve to; no GPU is needed.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "crio_fixture.h"
#include "daemons.h"
#include "lifecycle_model.h"
#include "pinned.h"

namespace ocirlimit::itest::lifecycle {

class CrioNvidia {
 public:
  CrioNvidia(crio::CriO& crio, NvidiaBinaries nv);
  ~CrioNvidia();  // the installer stopped, every file of NVIDIA's removed
  CrioNvidia(const CrioNvidia&) = delete;
  CrioNvidia& operator=(const CrioNvidia&) = delete;

  // nvidia-configure, nvidia-start, nvidia-stop, nvidia-remove: an error text, or nullopt.
  [[nodiscard]] std::optional<std::string> Run(const Op& op);
  // Whether `op` restarts crio (the plugin reconnects and heals after it).
  static bool RestartsEngine(const Op& op);
  // A reboot: the installer killed, no cleanup of its own.
  void Kill();

 private:
  std::optional<std::string> Configure();
  std::optional<std::string> Start(bool nri);
  std::optional<std::string> Stop();
  std::optional<std::string> Remove();
  std::string SourceRoot() const;

  crio::CriO& crio_;
  NvidiaBinaries nv_;
  std::unique_ptr<BackgroundProcess> installer_;
  int starts_ = 0;
};

}  // namespace ocirlimit::itest::lifecycle
