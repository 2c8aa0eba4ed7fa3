#include "lifecycle_upgrade.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness.h"
#include "lifecycle_driver.h"

namespace ocirlimit::itest::lifecycle {
namespace fs = std::filesystem;

namespace {
constexpr const char* kOldPrograms[] = {"oci-rlimit-nri", "oci-rlimit-runtime"};
}  // namespace

OldBinaries FindOldBinaries() {
  OldBinaries b;
  const char* dir = std::getenv(kOldBinDirVar);
  if (dir == nullptr || *dir == '\0') {
    b.skip = std::string("lifecycle: the upgrade is left out: set ") + kOldBinDirVar +
             " to an earlier commit's programs (scripts/build-at-commit.sh 8f535b5 build-old/bin)";
    return b;
  }
  b.dir = dir;
  for (const char* p : kOldPrograms) {
    if (access((b.dir + "/" + p).c_str(), X_OK) != 0) {
      b.error = std::string(kOldBinDirVar) + "=" + b.dir + ": no " + p +
                " there (scripts/build-at-commit.sh COMMIT " + b.dir + " builds it)";
    }
  }
  return b;
}

std::optional<std::string> OfferUpgrade(LifecycleNode& node) {
  const OldBinaries old = FindOldBinaries();
  if (!old.error.empty()) return old.error;
  if (!old.skip.empty()) {
    static bool said = false;
    if (!said) std::cout << old.skip << std::endl;
    said = true;
    return std::nullopt;
  }
  node.extras.upgrade = true;
  node.old_bin_dir = old.dir;
  return std::nullopt;
}

std::optional<std::string> SwapBinaries(LifecycleNode& node, const std::string& dir) {
  const bool up = node.plugin_running();
  node.KillPlugin();
  // A new file renamed over the old, as dpkg does: a shim running the old
  // one keeps it, the next command runs the new one.
  const std::string wrapper = node.WrapperPath();
  const std::string temp = wrapper + ".lifecycle-new";
  std::error_code ec;
  fs::copy_file(dir + "/oci-rlimit-runtime", temp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(temp, wrapper, ec);
  if (ec) return "cannot place " + dir + "/oci-rlimit-runtime as " + wrapper + ": " + ec.message();
  node.UsePluginBinary(dir + "/oci-rlimit-nri");
  return up ? node.StartPlugin() : std::nullopt;
}

std::optional<std::string> LifecycleNode::RunExtra(const Op& op) {
  switch (op.kind) {
    case OpKind::kOldBinaries:
      return SwapBinaries(*this, old_bin_dir);
    case OpKind::kUpgrade:
      return SwapBinaries(*this, fs::path(OurBinary("oci-rlimit-nri")).parent_path().string());
    default:
      return OpName(op) + " is not played on this node";
  }
}

}  // namespace ocirlimit::itest::lifecycle
