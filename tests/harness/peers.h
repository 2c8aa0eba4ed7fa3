// Peers' own code built as oracles (../shared/peers, README.md there): the
// NRI sample ulimit-adjuster's parser and the sample plugin itself, found
// through OCI_RLIMIT_PEERS_DIR (.ci/run sets it). Unset: a test skips with
// one line; set and a binary missing or not the one the README names: fails.
#pragma once

#include <string>

#include "tests/testing/temp_dir.h"

namespace ocirlimit::itest {

inline constexpr const char* kPeersDirVar = "OCI_RLIMIT_PEERS_DIR";

struct PeerBinary {
  std::string path;   // unpacked, executable
  std::string skip;   // why the test skips (the variable is unset)
  std::string error;  // why the test fails
};

// $OCI_RLIMIT_PEERS_DIR/NAME.xz unpacked into dir, checked against sha256.
PeerBinary FindPeer(const std::string& name, const std::string& sha256,
                    const testsupport::TempDir& dir);

inline constexpr const char* kUlimitParseSha256 =
    "4d7fed6bfdd134b3480e8adb63777214de18a9623142b7998dc9e79b61137f61";
inline constexpr const char* kUlimitAdjusterSha256 =
    "6e7b170c4d571d8883dd266bb0a3831db7365a6d6d9250578d4ddbab7ba24a96";

}  // namespace ocirlimit::itest
