#include "peers.h"

#include <unistd.h>

#include <cstdlib>

#include "pinned.h"

namespace ocirlimit::itest {

PeerBinary FindPeer(const std::string& name, const std::string& sha256,
                    const testsupport::TempDir& dir) {
  PeerBinary b;
  const char* peers = std::getenv(kPeersDirVar);
  if (peers == nullptr || *peers == '\0') {
    b.skip = std::string("skipped: set ") + kPeersDirVar + " to a directory holding " + name +
             ".xz (../shared/peers, as .ci/run does)";
    return b;
  }
  const std::string xz = std::string(peers) + "/" + name + ".xz";
  if (access(xz.c_str(), R_OK) != 0) {
    b.error = std::string(kPeersDirVar) + "=" + peers + ": no " + name + ".xz there";
    return b;
  }
  const std::string out = dir / name;
  if (auto err = UnpackPinned(xz, out, sha256)) {
    b.error = *err + " (../shared/peers/README.md names each binary's sha256)";
    return b;
  }
  b.path = out;
  return b;
}

}  // namespace ocirlimit::itest
