// NRI's transport, byte level only (docs/nri.md, "Protocol"): the
// multiplexer that carries two logical connections over one unix socket, the
// ttrpc framing on each, and ttrpc's Request/Response envelopes, encoded by
// hand (5 and 2 fields). No syscalls here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::nri {

// --- Multiplexer: u32 BE connection id, u32 BE payload length, payload. ---

// Connection 1: we are the ttrpc server of the Plugin service. Connection 2:
// the runtime serves Runtime and we are its client.
inline constexpr uint32_t kPluginConn = 1;
inline constexpr uint32_t kRuntimeConn = 2;
inline constexpr size_t kFrameHeader = 8;
// The runtime reads one frame per read into a 4096-byte buffer; a larger
// frame drops the connection. So we never send more per frame.
inline constexpr size_t kMaxSendFrame = 4096;

// --- ttrpc: u32 BE length, u32 BE stream id, u8 type, u8 flags, payload. ---
inline constexpr size_t kTtrpcHeader = 10;
inline constexpr uint32_t kTtrpcMaxMessage = 4u << 20;
// A frame longer than the largest ttrpc message plus its header is garbage.
inline constexpr size_t kMaxRecvFrame = kTtrpcMaxMessage + kTtrpcHeader;

enum class MsgType : uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

// Appends `payload` for connection `conn` to `out` as frames of at most
// kMaxSendFrame payload bytes (an empty payload sends nothing).
void AppendFrames(std::string& out, uint32_t conn, std::string_view payload);

// One multiplexer header. Append writes any length, so a test peer can also
// send the frames a runtime never would; Read needs kFrameHeader bytes.
struct FrameHeader {
  uint32_t conn = 0;
  uint32_t length = 0;  // payload bytes after the header
};
void AppendFrameHeader(std::string& out, const FrameHeader& h);
[[nodiscard]] FrameHeader ReadFrameHeader(std::string_view bytes);

// Reassembles the byte streams of connections 1 and 2 from raw socket bytes.
// Frames for any other id are dropped.
class Demux {
 public:
  // An error (a frame length over kMaxRecvFrame) means the peer is not
  // speaking NRI: disconnect.
  [[nodiscard]] Status Feed(std::string_view bytes);
  // Bytes received on conn (1 or 2) and not yet consumed by the caller.
  std::string& Stream(uint32_t conn) { return streams_[conn == kPluginConn ? 0 : 1]; }
  // True when no partial frame is pending; at EOF, false means a truncated frame.
  [[nodiscard]] bool Idle() const { return pending_.empty(); }
  // True when no connection holds bytes the caller has not consumed.
  [[nodiscard]] bool Drained() const { return streams_[0].empty() && streams_[1].empty(); }

 private:
  std::string pending_;
  std::string streams_[2];
};

struct Message {
  uint32_t stream_id = 0;
  MsgType type = MsgType::kRequest;
  uint8_t flags = 0;
  std::string payload;
  bool operator==(const Message&) const = default;
};

// The 10-byte header plus payload. The caller keeps payloads under
// kTtrpcMaxMessage (EncodeMessage refuses larger ones).
[[nodiscard]] Result<std::string> EncodeMessage(const Message& m);

// Takes every complete message off the front of `stream` (a partial one
// stays). A length over kTtrpcMaxMessage is an error: disconnect.
[[nodiscard]] Status TakeMessages(std::string& stream, std::vector<Message>& out);

// --- ttrpc envelopes (protobuf wire format) ---

struct Request {
  std::string service;                                        // 1
  std::string method;                                         // 2
  std::string payload;                                        // 3
  int64_t timeout_nano = 0;                                   // 4
  std::vector<std::pair<std::string, std::string>> metadata;  // 5 {1 key, 2 value}
  bool operator==(const Request&) const = default;
};

// google.rpc.Status; code 0 is success.
struct RpcStatus {
  int32_t code = 0;
  std::string message;
  bool operator==(const RpcStatus&) const = default;
};

inline constexpr int32_t kCodeUnimplemented = 12;
inline constexpr int32_t kCodeInvalidArgument = 3;
inline constexpr int32_t kCodeFailedPrecondition = 9;

struct Response {
  RpcStatus status;     // 1 (absent when code 0)
  std::string payload;  // 2
  bool operator==(const Response&) const = default;
};

[[nodiscard]] std::string EncodeRequest(const Request& r);
[[nodiscard]] Result<Request> DecodeRequest(std::string_view bytes);
[[nodiscard]] std::string EncodeResponse(const Response& r);
[[nodiscard]] Result<Response> DecodeResponse(std::string_view bytes);

}  // namespace ocirlimit::nri
