// The runtime's side of the NRI socket, for every test of oci-rlimit-nri
// (the unit tests, the integration test against the binary, nribench and
// fuzz_nri): the frames and ttrpc messages containerd sends, hand-made frames
// it never would, and a strict reader of what the plugin sent back. Built on
// the plugin's own encoders and header reader (nri/wire.h, which wire_test.cc
// checks byte by byte against hand-written bytes); no gtest, so the fuzz tree
// links it too (library ocirlimit_nri_peer).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "nri/session.h"
#include "nri/wire.h"

namespace ocirlimit::testsupport {

// containerd's request timeout (2 s), which it sends as ttrpc's timeout_nano.
inline constexpr int64_t kRuntimeTimeoutNano = 2'000'000'000;

// A call from the runtime on connection 1, as frames.
[[nodiscard]] std::string RuntimeCall(uint32_t stream, std::string_view method,
                                      std::string_view payload,
                                      std::string_view service = nri::kPluginService,
                                      int64_t timeout_nano = kRuntimeTimeoutNano);

// The runtime's answer to the plugin's call `stream` on connection 2.
[[nodiscard]] std::string RuntimeReply(uint32_t stream, const nri::Response& resp);

// A multiplexer header claiming `length` payload bytes, followed by `rest`
// whatever its size: the garbage, truncated and oversized frames a broken
// runtime sends.
[[nodiscard]] std::string RawFrame(uint32_t conn, uint32_t length, std::string_view rest = {});

// One message the plugin sent.
struct Sent {
  uint32_t conn = 0;
  nri::Message msg;
  std::vector<size_t> frames;  // payload sizes of the frames that carried it
};

// What the plugin wrote, read as strictly as the runtime reads it: every
// frame on connection 1 or 2 with 1 to 4096 payload bytes (the runtime's
// read buffer), each connection's bytes split into ttrpc messages.
class PluginOutput {
 public:
  // Takes more bytes; an error names the first frame or message the runtime
  // would refuse.
  [[nodiscard]] Status Feed(std::string_view bytes);
  // The messages completed so far, oldest first, taken off the reader.
  [[nodiscard]] std::vector<Sent> Take();
  // True when no partial frame is pending.
  [[nodiscard]] bool FramesComplete() const { return pending_.empty(); }
  // True when neither a partial frame nor a partial message is pending.
  [[nodiscard]] bool Complete() const;

 private:
  std::string pending_;
  std::string streams_[2];
  std::vector<size_t> frames_[2];
  std::vector<Sent> done_;
};

// All of `bytes` (the plugin's whole output) as messages; empty when it
// holds a frame or message the runtime would refuse, or ends in the middle
// of one.
[[nodiscard]] std::vector<Sent> ParseSent(std::string_view bytes);

// The runtime's end of a connected socket to the plugin (the fd is not
// owned): sends calls with its own stream ids and reads the plugin's
// messages one at a time. A read timeout (SO_RCVTIMEO) set on the fd bounds
// every read.
class RuntimePeer {
 public:
  explicit RuntimePeer(int fd) : fd_(fd) {}
  // Writes all of `bytes`; false on an error or a short write.
  [[nodiscard]] bool Send(std::string_view bytes);
  // The plugin's next message; nullopt at EOF, on a read error or timeout,
  // or when the plugin wrote something the runtime would refuse.
  [[nodiscard]] std::optional<Sent> Next();
  // The next odd stream id for a call of ours (1, 3, 5, ...).
  [[nodiscard]] uint32_t NewStream();
  // Calls `method` on connection 1 and reads the reply; nullopt when the
  // next message is not the reply to that call on connection 1 or does not
  // decode.
  [[nodiscard]] std::optional<nri::Response> Call(std::string_view method, std::string_view payload,
                                                  int64_t timeout_nano = kRuntimeTimeoutNano);

 private:
  int fd_;
  uint32_t next_stream_ = 1;
  PluginOutput output_;
  std::deque<Sent> ready_;
};

}  // namespace ocirlimit::testsupport
