// Test helpers that play the runtime's side of the NRI wire: frames and
// ttrpc messages as containerd sends them, and a parser for what the plugin
// sent back. Built on wire.h, which has its own table tests.
#pragma once

#include <string>
#include <vector>

#include "nri/wire.h"

namespace ocirlimit::nri::testing {

// A call from the runtime on connection 1, as frames.
inline std::string RuntimeCall(uint32_t stream, const std::string& method,
                               const std::string& payload,
                               const std::string& service = "nri.pkg.api.v1alpha1.Plugin") {
  Request r{service, method, payload, 2000000000, {}};
  std::string out;
  AppendFrames(out, kPluginConn, *EncodeMessage({stream, MsgType::kRequest, 0, EncodeRequest(r)}));
  return out;
}

// The runtime's answer to the plugin's call `stream` on connection 2.
inline std::string RuntimeReply(uint32_t stream, const Response& resp) {
  std::string out;
  AppendFrames(out, kRuntimeConn,
               *EncodeMessage({stream, MsgType::kResponse, 0, EncodeResponse(resp)}));
  return out;
}

struct Sent {
  uint32_t conn = 0;
  Message msg;
  std::vector<size_t> frames;  // payload sizes of the frames that carried it
};

// Splits what the plugin wrote into messages per connection; fails the test
// on malformed output.
inline std::vector<Sent> ParseSent(const std::string& bytes) {
  std::vector<Sent> out;
  std::string streams[3];
  std::vector<size_t> frames[3];
  for (size_t at = 0; at + kFrameHeader <= bytes.size();) {
    auto u32 = [&](size_t i) {
      return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 24 |
             static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 16 |
             static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2])) << 8 |
             static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 3]));
    };
    uint32_t conn = u32(at);
    uint32_t len = u32(at + 4);
    if (conn == 0 || conn > 2 || len > kMaxSendFrame) return {};
    streams[conn].append(bytes, at + kFrameHeader, len);
    frames[conn].push_back(len);
    at += kFrameHeader + len;
    std::vector<Message> msgs;
    if (!TakeMessages(streams[conn], msgs)) return {};
    for (auto& m : msgs) {
      out.push_back({conn, std::move(m), frames[conn]});
      frames[conn].clear();
    }
  }
  return out;
}

}  // namespace ocirlimit::nri::testing
