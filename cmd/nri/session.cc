#include "nri/session.h"

#include <vector>

#include "formats/text.h"

namespace ocirlimit::nri {
namespace {

void SendMessage(std::string& out, uint32_t conn, const Message& m) {
  auto bytes = EncodeMessage(m);
  // Only our own replies get here, each bounded by the caller.
  if (bytes) AppendFrames(out, conn, *bytes);
}

}  // namespace

std::string Session::Start() {
  Request r;
  r.service = kRuntimeService;
  r.method = "RegisterPlugin";
  r.payload = register_payload_;
  register_stream_ = next_stream_;
  next_stream_ += 2;
  std::string out;
  SendMessage(out, kRuntimeConn, {register_stream_, MsgType::kRequest, 0, EncodeRequest(r)});
  return out;
}

void Session::Answer(const Message& m, std::string& out) {
  ++calls_;
  Reply reply;
  auto req = DecodeRequest(m.payload);
  if (!req) {
    reply.status = {kCodeInvalidArgument, "oci-rlimit-nri: " + req.error().Text()};
  } else if (req->service != kPluginService) {
    reply.status = {kCodeUnimplemented,
                    "oci-rlimit-nri: service " + Quote(req->service) + " is not served"};
  } else {
    reply = service_.Call(req->method, req->payload);
  }
  ++batch_.answered;
  if (req && req->timeout_nano > 0 &&
      (batch_.deadline_ns == 0 || req->timeout_nano < batch_.deadline_ns)) {
    batch_.deadline_ns = req->timeout_nano;
  }
  Response resp{reply.status, std::move(reply.payload)};
  std::string encoded = EncodeResponse(resp);
  if (encoded.size() > kTtrpcMaxMessage) {
    encoded = EncodeResponse({{kCodeFailedPrecondition, "oci-rlimit-nri: reply too large"}, ""});
  }
  // Unary: the response reuses the request's stream id, flags 0.
  SendMessage(out, kPluginConn, {m.stream_id, MsgType::kResponse, 0, std::move(encoded)});
}

Status Session::OnRuntimeMessage(const Message& m) {
  if (m.type != MsgType::kResponse || m.stream_id != register_stream_ || registered_) {
    return Ok{};  // not an answer to anything we asked
  }
  auto resp = DecodeResponse(m.payload);
  if (!resp) return resp.error().Wrap("RegisterPlugin reply");
  if (resp->status.code != 0) {
    return MakeError("the runtime refused RegisterPlugin: code " +
                     std::to_string(resp->status.code) + ": " + OneLine(resp->status.message));
  }
  registered_ = true;
  return Ok{};
}

Status Session::OnBytes(std::string_view in, std::string& out) {
  batch_ = {};
  if (auto st = demux_.Feed(in); !st) return st;
  std::vector<Message> msgs;
  Status plugin = TakeMessages(demux_.Stream(kPluginConn), msgs);
  for (const auto& m : msgs) {
    // We only serve unary calls; stray data or responses on our server
    // connection are ignored, as ttrpc's server does with unknown streams.
    if (m.type == MsgType::kRequest) Answer(m, out);
  }
  if (!plugin) return plugin.error().Wrap("connection 1");
  msgs.clear();
  Status runtime = TakeMessages(demux_.Stream(kRuntimeConn), msgs);
  for (const auto& m : msgs) {
    if (auto st = OnRuntimeMessage(m); !st) return st;
  }
  if (!runtime) return runtime.error().Wrap("connection 2");
  return Ok{};
}

std::string Session::EofReason() const {
  if (!demux_.Idle()) return "the runtime closed the connection in the middle of a frame";
  if (!demux_.Drained()) {
    return "the runtime closed the connection in the middle of a ttrpc message";
  }
  if (!registered_) return "the runtime closed the connection before registration completed";
  return "the runtime closed the connection";
}

}  // namespace ocirlimit::nri
