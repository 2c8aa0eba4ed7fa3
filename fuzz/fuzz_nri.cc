// Raw bytes from the runtime's side of the NRI socket, through the frame,
// ttrpc and envelope decoders into the Plugin service (protobuf messages,
// policy) and back. Properties: no crash; whatever the plugin sends is
// well-formed frames of 1 to 4096 payload bytes on connections 1 and 2, none
// cut short, as the runtime reads them (the shared NRI peer,
// tests/testing/nri_peer.h); the envelope decoders round-trip what they
// accept.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/config.h"
#include "nri/plugin.h"
#include "nri/session.h"
#include "nri/wire.h"
#include "tests/testing/nri_peer.h"

namespace {

using namespace ocirlimit;
using namespace ocirlimit::nri;

class Quiet : public Output {
 public:
  void Say(const std::string&) override {}
  void LogLine(const Config&, const std::string&) override {}
};

const Config& FuzzConfig() {
  static const Config cfg = *ParseConfig(
      "rlimits = ['nofile=1024:4096']\n"
      "[[rule]]\nname = 'gpu'\nrlimits = ['memlock=unlimited']\n"
      "match = { annotations = { 'example.com/gpu' = 'true' } }\n"
      "[[rule]]\nname = 'rdma'\nrlimits = ['memlock=64M']\n"
      "match = { devices = ['/dev/infiniband/*'] }\n"
      "[requests]\nenabled = true\nceilings = ['memlock=1G']\n",
      "fuzz.toml");
  return cfg;
}

void CheckFrames(const std::string& out) {
  testsupport::PluginOutput runtime;
  if (!runtime.Feed(out) || !runtime.FramesComplete()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet_protobuf = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet_protobuf;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  if (auto req = DecodeRequest(bytes); req && DecodeRequest(EncodeRequest(*req)).value() != *req) {
    std::abort();
  }
  if (auto resp = DecodeResponse(bytes);
      resp && DecodeResponse(EncodeResponse(*resp)).value() != *resp) {
    std::abort();
  }

  Quiet quiet;
  NriPlugin plugin([]() -> const Config& { return FuzzConfig(); }, quiet, [] { return "T"; });
  Session session(plugin, NriPlugin::RegisterPayload("oci-rlimit", "10"));
  std::string out = session.Start();
  // Fed in two pieces, so reassembly across reads is exercised too.
  size_t half = size / 2;
  Status st = session.OnBytes(bytes.substr(0, half), out);
  if (st) st = session.OnBytes(bytes.substr(half), out);
  if (st) (void)session.EofReason();
  CheckFrames(out);
  return 0;
}
